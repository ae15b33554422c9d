// A Cloudflare Worker (run by miniflare's real workerd) with a backoff gate:
// /fanout sends 10 calls through a gate made for that request; /shared sends
// one call through a gate shared by every incoming request (made at module
// scope: no randomness there, the schedules are seeded at the first call).
import { withBackoff } from '../../pkg/workerd.js';
import { createGate } from '../../pkg/gate/workerd.js';

// (consecutive: 1: these scenarios test the gate's rounds, which start at the first failure)
const ROUNDS = { baseMs: 20, maxDelayMs: 80, jitter: 'none', consecutive: 1 };
const shared = createGate(ROUNDS);
const sharedFetch = withBackoff(fetch, { gate: shared, maxAttempts: Infinity });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/fanout') {
      const gate = createGate(ROUNDS);
      const calls = [];
      const f = withBackoff((input, init) => (calls.push(Number(new URL(input).searchParams.get('i'))), fetch(input, init)), {
        gate,
        maxAttempts: Infinity,
      });
      const res = await Promise.all(Array.from({ length: 10 }, (_, i) => f(`${env.ORIGIN}/gate-fanout?i=${i}`)));
      return Response.json({ bodies: await Promise.all(res.map((r) => r.text())), calls, stats: gate.stats() });
    }
    const res = await sharedFetch(`${env.ORIGIN}/gate-shared${url.search}`);
    return Response.json({ body: await res.text(), stats: shared.stats() });
  },
};
