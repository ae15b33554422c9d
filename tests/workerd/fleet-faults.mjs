// Workers sharing one gate per target through GateObject, for the fault
// paths of tests/fleet/gate.fleet-faults.test.mjs (fail-fast mode, a restart
// of the object, a cancelled probe, an object that fails, or answers late,
// a request that ends before its reports are answered). Every worker runs
// this script (NAME tells which); `host` defines the objects. The gate's
// options come from the bindings (MODE, BASE_MS, POLL_MS, PROBE_TIMEOUT_MS;
// SlowGate's SLOW and DELAY_MS). Routes:
// Each route but /break and /unhandled takes `lim` (any value): through this
// isolate's gate with the fleet's adaptive limiter instead ('lim:' + key).
//   GET /calls?n=&path=&max=&abortMs=&ms=   n concurrent calls to ORIGIN +
//       path (max attempts each, maxElapsedMs `ms`, default 10 s; abortMs:
//       the first call is aborted after that long); answers each call's
//       outcome (status, or the error's name and retryAfterMs) and time,
//       and this isolate's round trips and share
//   GET /cut?path=        one call (one attempt) to ORIGIN + path, answered
//                         as soon as it ends, its reports left to this
//                         request (no flush handed to waitUntil)
//   GET /flush            gate.flush(), timed; the round trips and share
//   GET /state?key=       the object's answer to an empty report (its state)
//   GET /object?key=      the object's stats
//   GET /break?how=       from now on this isolate's stubs fail: 'reject'
//                         (their methods reject), 'throw' (get() throws),
//                         'probed' (only `probed` rejects), or 'off' (the
//                         real stubs again)
//   GET /unhandled        the unhandled rejections seen in this isolate
import { withBackoff } from '../../pkg/workerd.js';
import { GateObject, sharedGate } from '../../pkg/gate/workerd.js';
import { DurableObject } from 'cloudflare:workers';

export { GateObject };

/** A GateObject whose methods named in SLOW (comma-separated) answer DELAY_MS late. */
export class SlowGate extends GateObject {
  async #late(m, args) {
    if (String(this.env.SLOW).split(',').includes(m)) await new Promise((r) => setTimeout(r, Number(this.env.DELAY_MS)));
    return super[m](...args);
  }
  report(...args) {
    return this.#late('report', args);
  }
  admit(...args) {
    return this.#late('admit', args);
  }
  probed(...args) {
    return this.#late('probed', args);
  }
  lease(...args) {
    return this.#late('lease', args);
  }
}

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
let limited;
const gateOf = (env, lim) => {
  // The binding, unless /break said its stubs fail.
  const ns = {
    idFromName: (n) => env.GATES.idFromName(n),
    get(id) {
      if (how === 'throw') throw new Error('no stub');
      const stub = env.GATES.get(id);
      if (how !== 'reject' && how !== 'probed') return stub;
      const fail = () => Promise.reject(new Error('unreachable object'));
      if (how === 'probed') return { report: (...a) => stub.report(...a), admit: (...a) => stub.admit(...a), probed: fail };
      return { report: fail, admit: fail, probed: fail };
    },
  };
  // (the fleet's adaptive limiter alone, in objects of their own)
  if (lim) return (limited ??= sharedGate(ns, { limit: 'adaptive', consecutive: Infinity, name: (k) => `lim:${k}` }));
  gate ??= sharedGate(ns, {
    baseMs: Number(env.BASE_MS),
    maxDelayMs: 2000,
    jitter: 'none',
    consecutive: 3,
    mode: env.MODE,
    pollMs: Number(env.POLL_MS),
    ...(env.PROBE_TIMEOUT_MS ? { probeTimeoutMs: Number(env.PROBE_TIMEOUT_MS) } : {}),
  });
  return gate;
};

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const q = (k) => url.searchParams.get(k);
    const gate = gateOf(env, q('lim') !== null);
    if (url.pathname === '/calls') {
      const api = withBackoff(fetch, {
        gate,
        maxAttempts: Number(q('max') ?? 20),
        maxElapsedMs: Number(q('ms') ?? 10_000),
        attemptHeader: 'x-attempt',
      });
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
      return Response.json({ out, rpcs: gate.rpcs, local: gate.state(env.ORIGIN), share: gate.share(new URL(env.ORIGIN).origin) });
    }
    if (url.pathname === '/cut') {
      const res = await withBackoff(fetch, { gate, maxAttempts: 1 })(`${env.ORIGIN}${q('path')}?by=${env.NAME}`);
      await res.body?.cancel();
      return Response.json({ status: res.status, rpcs: gate.rpcs });
    }
    if (url.pathname === '/flush') {
      const t0 = performance.now();
      await gate.flush();
      return Response.json({ ms: performance.now() - t0, rpcs: gate.rpcs, share: gate.share(new URL(env.ORIGIN).origin) });
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
