// Workers sharing one retry budget through GateObject, for the smoke of
// tests/fleet/budget.fleet.test.mjs. Every worker of the test runs this
// script (NAME tells which; each is its own isolate, with its own
// module-level budgets); `host` defines the Durable Object class, the others
// bind it by its script name. The budget's options come from the bindings
// (TTL_MS, MIN_PER_SEC, RATIO). Routes:
//   GET /calls?n=&path=&key=   n concurrent calls to ORIGIN + path through
//       this isolate's sharedBudget of `key`; answers the statuses and the
//       budget's round trips
//   GET /flush?key=        waits for the budget's request, then its counts
//   GET /object?key=       the object's stats (its RPCs, its budgets' counts)
//   GET /unhandled         the unhandled rejections seen in this isolate
import { withBackoff } from '../../pkg/workerd.js';
import { GateObject, sharedBudget } from '../../pkg/gate/workerd.js';

export { GateObject };

// (a rejection handled a microtask later, as when an async function returns a rejected promise, is taken off again)
const unhandled = new Map();
addEventListener('unhandledrejection', (e) => unhandled.set(e.promise, String(e.reason?.stack ?? e.reason)));
addEventListener('rejectionhandled', (e) => unhandled.delete(e.promise));

// One budget per isolate and key, made at its first request (a binding comes with `env`).
const budgets = new Map();
function budgetOf(env, key) {
  if (!budgets.has(key)) {
    const options = { ttlMs: Number(env.TTL_MS), minPerSec: Number(env.MIN_PER_SEC), retryRatio: Number(env.RATIO) };
    budgets.set(key, sharedBudget(env.GATES, { ...options, key }));
  }
  return budgets.get(key);
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const q = (k) => url.searchParams.get(k);
    if (url.pathname === '/calls') {
      const budget = budgetOf(env, q('key'));
      const api = withBackoff(fetch, { budget, baseMs: 5, maxDelayMs: 20, maxAttempts: 30, attemptHeader: 'x-attempt' });
      const res = await Promise.all(
        Array.from({ length: Number(q('n')) }, async (_, i) => {
          const r = await api(`${env.ORIGIN}${q('path')}?by=${env.NAME}&i=${i}`);
          await r.body?.cancel();
          return r.status;
        }),
      );
      // The budget's request may still be out: let it end.
      ctx.waitUntil(budget.flush());
      return Response.json({ statuses: res, rpcs: budget.rpcs, failedRpcs: budget.failedRpcs });
    }
    if (url.pathname === '/flush') {
      const budget = budgetOf(env, q('key'));
      await budget.flush();
      return Response.json({ rpcs: budget.rpcs, failedRpcs: budget.failedRpcs, available: budget.available() });
    }
    if (url.pathname === '/object') {
      return Response.json(await env.GATES.get(env.GATES.idFromName(q('key'))).stats());
    }
    if (url.pathname === '/unhandled') return Response.json([...unhandled.values()]);
    return new Response('no such route', { status: 404 });
  },
};
