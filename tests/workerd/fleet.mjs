// Workers sharing one gate per target through GateObject, for
// tests/fleet/gate.fleet.test.mjs. Every worker of the test runs this script
// (NAME tells which; each is its own isolate, with its own module-level
// gate); `host` defines the Durable Object class, the others bind it by its
// script name. Routes:
//   GET /calls?n=&path=   n concurrent calls to ORIGIN + path through this
//                         isolate's shared gate; answers their statuses and
//                         this isolate's round trips to the object
//   GET /object?key=      the object's stats (its RPCs, its gate's counters,
//                         its limiters)
//   GET /rpc?key=&n=      n round trips to the object in a row (a report of
//                         nothing: the object answers its state), timed here
//                         (bench/fleet.mjs)
import { withBackoff } from '../../pkg/workerd.js';
import { GateObject, sharedGate } from '../../pkg/gate/workerd.js';

export { GateObject };

// One gate per isolate, made at the first request (a binding comes with `env`).
let gate;
const gateOf = (env) =>
  (gate ??= sharedGate(env.GATES, {
    baseMs: Number(env.BASE_MS),
    maxDelayMs: 1000,
    jitter: 'none',
    // The fleet's threshold: the first failure reported opens the circuit, so every retry waits for
    // the object. (With 3, an isolate whose ten answers came back apart, as on a loaded machine, could
    // report 1-2 failures first, be told "closed", and retry them before the circuit opened: a probe
    // fewer than the test counts. A threshold summed over isolates is gate.node.test.mjs's, on virtual
    // time.)
    consecutive: 1,
    pollMs: 2000,
  }));

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const q = (k) => url.searchParams.get(k);
    const gate = gateOf(env);
    if (url.pathname === '/calls') {
      // (a 503's own retry waits on 10 × baseMs, jittered: 50 ms at most, not a second, before the gate holds it)
      const api = withBackoff(fetch, { gate, baseMs: 5, maxAttempts: 100, maxElapsedMs: 20_000, attemptHeader: 'x-attempt' });
      const n = Number(q('n'));
      const res = await Promise.all(Array.from({ length: n }, (_, i) => api(`${env.ORIGIN}${q('path')}?by=${env.NAME}&i=${i}`)));
      // A call of this request may have been the fleet's probe: its outcome must reach the object.
      ctx.waitUntil(gate.flush());
      return Response.json({ statuses: res.map((r) => r.status), rpcs: gate.rpcs, stats: gate.stats() });
    }
    if (url.pathname === '/object') {
      return Response.json(await env.GATES.get(env.GATES.idFromName(q('key'))).stats());
    }
    if (url.pathname === '/rpc') {
      const n = Number(q('n'));
      const t0 = Date.now(); // (workerd's clock moves on at each I/O: here, each round trip)
      for (let i = 0; i < n; i++) await gate.rpc('report', q('key'), 0, 0);
      return Response.json({ ms: (Date.now() - t0) / n });
    }
    return new Response('no such route', { status: 404 });
  },
};
