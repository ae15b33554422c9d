// Workers sharing one gate per target through GateObject, for the fault
// paths of tests/js/gate.fleet-faults.test.mjs (fail-fast mode, a restart
// of the object, a cancelled probe, an object that fails). Every worker runs
// this script (NAME tells which); `host` defines the objects. The gate's
// options come from the bindings (MODE, BASE_MS, POLL_MS). Routes:
//   GET /calls?n=&path=&max=&abortMs=   n concurrent calls to ORIGIN + path
//       (max attempts each; abortMs: the first call is aborted after that
//       long); answers each call's outcome (status, or the error's name and
//       retryAfterMs) and time, and this isolate's round trips
//   GET /state?key=       the object's answer to an empty report (its state)
//   GET /object?key=      the object's stats
//   GET /break?how=       from now on this isolate's stubs fail: 'reject'
//                         (their methods reject), 'throw' (get() throws), or
//                         'off' (the real stubs again)
//   GET /unhandled        the unhandled rejections seen in this isolate
import { withBackoff } from '../../pkg/workerd.js';
import { GateObject, sharedGate } from '../../pkg/gate/workerd.js';
import { DurableObject } from 'cloudflare:workers';

export { GateObject };

/** A namespace whose objects fail every RPC (a GateObject that cannot start, say). */
export class BrokenGate extends DurableObject {
  report() {
    throw new Error('broken object');
  }
  admit() {
    throw new Error('broken object');
  }
  probed() {
    throw new Error('broken object');
  }
}

// (a rejection handled a microtask later, as when an async function returns a rejected promise, is taken off again)
const unhandled = new Map();
addEventListener('unhandledrejection', (e) => unhandled.set(e.promise, String(e.reason?.stack ?? e.reason)));
addEventListener('rejectionhandled', (e) => unhandled.delete(e.promise));

let how = 'off';
let gate;
const gateOf = (env) => {
  // The binding, unless /break said its stubs fail.
  const ns = {
    idFromName: (n) => env.GATES.idFromName(n),
    get(id) {
      if (how === 'throw') throw new Error('no stub');
      const stub = env.GATES.get(id);
      if (how !== 'reject') return stub;
      const fail = () => Promise.reject(new Error('unreachable object'));
      return { report: fail, admit: fail, probed: fail };
    },
  };
  gate ??= sharedGate(ns, {
    baseMs: Number(env.BASE_MS),
    maxDelayMs: 2000,
    jitter: 'none',
    consecutive: 3,
    mode: env.MODE,
    pollMs: Number(env.POLL_MS),
  });
  return gate;
};

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const q = (k) => url.searchParams.get(k);
    const gate = gateOf(env);
    if (url.pathname === '/calls') {
      const api = withBackoff(fetch, { gate, maxAttempts: Number(q('max') ?? 20), maxElapsedMs: 10_000, attemptHeader: 'x-attempt' });
      const abortMs = q('abortMs');
      const out = await Promise.all(
        Array.from({ length: Number(q('n')) }, async (_, i) => {
          const t0 = performance.now();
          const signal = i === 0 && abortMs ? AbortSignal.timeout(Number(abortMs)) : undefined;
          // (a later call starts once the first is out)
          if (abortMs && i > 0) await new Promise((r) => setTimeout(r, 20));
          try {
            const res = await api(`${env.ORIGIN}${q('path')}?by=${env.NAME}&i=${i}`, { signal });
            await res.body?.cancel();
            return { status: res.status, at: t0, ms: performance.now() - t0 };
          } catch (e) {
            return { error: e.name, retryAfterMs: e.retryAfterMs, ms: performance.now() - t0 };
          }
        }),
      );
      ctx.waitUntil(gate.flush());
      return Response.json({ out, rpcs: gate.rpcs, local: gate.state(env.ORIGIN) });
    }
    if (url.pathname === '/state') return Response.json(await gate.rpc('report', q('key'), 0, 0));
    if (url.pathname === '/object') return Response.json(await env.GATES.get(env.GATES.idFromName(q('key'))).stats());
    if (url.pathname === '/break') {
      how = q('how');
      return Response.json({ how });
    }
    if (url.pathname === '/unhandled') return Response.json([...unhandled.values()]);
    return new Response('no such route', { status: 404 });
  },
};
