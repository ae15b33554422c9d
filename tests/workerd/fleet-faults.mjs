// Workers sharing one gate per target through GateObject, for the smokes of
// tests/fleet/gate.fleet-faults.test.mjs (the object's circuit across a
// restart of the process; a request that ends before its report is
// answered). Every worker runs this script (NAME tells which); `host`
// defines the objects. The gate's options come from the bindings (BASE_MS). Routes:
//   GET /calls?n=&path=&max=   n concurrent calls to ORIGIN + path (max
//       attempts each); answers each call's outcome (status, or the error's
//       name) and this isolate's round trips
//   GET /cut?path=        one call (one attempt) to ORIGIN + path, answered
//                         as soon as it ends, its reports left to this
//                         request (no flush handed to waitUntil)
//   GET /flush            gate.flush(); the round trips
//   GET /state?key=       the object's answer to an empty report (its state)
//   GET /object?key=      the object's stats
//   GET /unhandled        the unhandled rejections seen in this isolate
import { withBackoff } from '../../pkg/workerd.js';
import { GateObject, sharedGate } from '../../pkg/gate/workerd.js';

export { GateObject };

// (a rejection handled a microtask later, as when an async function returns a rejected promise, is taken off again)
const unhandled = new Map();
addEventListener('unhandledrejection', (e) => unhandled.set(e.promise, String(e.reason?.stack ?? e.reason)));
addEventListener('rejectionhandled', (e) => unhandled.delete(e.promise));

let gate;
const gateOf = (env) =>
  (gate ??= sharedGate(env.GATES, { baseMs: Number(env.BASE_MS), maxDelayMs: 2000, jitter: 'none', consecutive: 3, pollMs: 2000 }));

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const q = (k) => url.searchParams.get(k);
    const gate = gateOf(env);
    if (url.pathname === '/calls') {
      const api = withBackoff(fetch, { gate, maxAttempts: Number(q('max') ?? 20), maxElapsedMs: 10_000 });
      const out = await Promise.all(
        Array.from({ length: Number(q('n')) }, async (_, i) => {
          try {
            const res = await api(`${env.ORIGIN}${q('path')}?by=${env.NAME}&i=${i}`);
            await res.body?.cancel();
            return { status: res.status };
          } catch (e) {
            return { error: e.name };
          }
        }),
      );
      ctx.waitUntil(gate.flush());
      return Response.json({ out, rpcs: gate.rpcs });
    }
    if (url.pathname === '/cut') {
      const res = await withBackoff(fetch, { gate, maxAttempts: 1 })(`${env.ORIGIN}${q('path')}?by=${env.NAME}`);
      await res.body?.cancel();
      return Response.json({ status: res.status, rpcs: gate.rpcs });
    }
    if (url.pathname === '/flush') {
      await gate.flush();
      return Response.json({ rpcs: gate.rpcs });
    }
    if (url.pathname === '/state') return Response.json(await gate.rpc('report', q('key'), 0, 0));
    if (url.pathname === '/object') return Response.json(await env.GATES.get(env.GATES.idFromName(q('key'))).stats());
    if (url.pathname === '/unhandled') return Response.json([...unhandled.values()]);
    return new Response('no such route', { status: 404 });
  },
};
