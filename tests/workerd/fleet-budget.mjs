// Workers sharing one retry budget through GateObject, for
// tests/fleet/budget.fleet.test.mjs. Every worker of the test runs this script
// (NAME tells which; each is its own isolate, with its own module-level
// budgets); `host` defines the Durable Object classes, the others bind them
// by its script name. The budget's options come from the bindings (TTL_MS,
// MIN_PER_SEC, RATIO). Routes:
//   GET /calls?n=&path=&key=&mode=   n concurrent calls to ORIGIN + path
//       through this isolate's budget of `key`: mode 'shared' (sharedBudget),
//       'local' (a RetryBudget of the same options per isolate), 'reject' /
//       'throw' (sharedBudget whose stubs reject, or cannot be had), 'broken'
//       (sharedBudget of a BrokenGate, whose budget() throws), 'slow' (of a
//       SlowGate, which answers 300 ms late); answers the
//       statuses and the budget's round trips
//   GET /cut?key=&path=&mode=   one call through the budget of `key`,
//                          answered as soon as it ends: the budget's request
//                          is left to this request (no flush handed to waitUntil)
//   GET /flush?key=&mode=  waits for the budget's request, then its counts
//   GET /object?key=       the object's stats (its RPCs, its budgets' counts)
//   GET /bad               the errors of bad options (name and message each)
//   GET /unhandled         the unhandled rejections seen in this isolate
import { withBackoff } from '../../pkg/workerd.js';
import { GateObject, sharedBudget } from '../../pkg/gate/workerd.js';
import { RetryBudget } from '../../pkg/budget/workerd.js';
import { DurableObject } from 'cloudflare:workers';

export { GateObject };

/** An object whose budget RPC fails (a GateObject that cannot start, say). */
export class BrokenGate extends DurableObject {
  budget() {
    throw new Error('broken object');
  }
}

// (a rejection handled a microtask later, as when an async function returns a rejected promise, is taken off again)
const unhandled = new Map();
addEventListener('unhandledrejection', (e) => unhandled.set(e.promise, String(e.reason?.stack ?? e.reason)));
addEventListener('rejectionhandled', (e) => unhandled.delete(e.promise));

/** A GateObject whose budget RPC answers 300 ms late. */
export class SlowGate extends GateObject {
  async budget(...args) {
    await new Promise((r) => setTimeout(r, 300));
    return super.budget(...args);
  }
}

/** A namespace whose stubs reject every call ('reject') or cannot be had ('throw'). */
const failing = (ns, how) => ({
  idFromName: (n) => ns.idFromName(n),
  get() {
    if (how === 'throw') throw new Error('no stub');
    return { budget: () => Promise.reject(new Error('unreachable object')) };
  },
});

// One budget per isolate and (mode, key), made at its first request (a binding comes with `env`).
const budgets = new Map();
function budgetOf(env, mode, key) {
  const id = `${mode} ${key}`;
  if (!budgets.has(id)) {
    const options = { ttlMs: Number(env.TTL_MS), minPerSec: Number(env.MIN_PER_SEC), retryRatio: Number(env.RATIO) };
    const ns =
      mode === 'broken'
        ? env.BROKEN
        : mode === 'slow'
          ? env.SLOW
          : mode === 'reject' || mode === 'throw'
            ? failing(env.GATES, mode)
            : env.GATES;
    budgets.set(id, mode === 'local' ? new RetryBudget(options) : sharedBudget(ns, { ...options, key }));
  }
  return budgets.get(id);
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const q = (k) => url.searchParams.get(k);
    if (url.pathname === '/calls') {
      const budget = budgetOf(env, q('mode'), q('key'));
      const api = withBackoff(fetch, {
        budget,
        baseMs: 5,
        maxDelayMs: 20,
        maxAttempts: 30,
        maxElapsedMs: 3000,
        attemptHeader: 'x-attempt',
      });
      const n = Number(q('n'));
      const res = await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const r = await api(`${env.ORIGIN}${q('path')}?by=${env.NAME}&i=${i}`);
          await r.body?.cancel();
          return r.status;
        }),
      );
      // The budget's request may still be out: let it end.
      if (budget.flush) ctx.waitUntil(budget.flush());
      return Response.json({ statuses: res, rpcs: budget.rpcs, failedRpcs: budget.failedRpcs });
    }
    if (url.pathname === '/cut') {
      const budget = budgetOf(env, q('mode'), q('key'));
      const res = await withBackoff(fetch, { budget, maxAttempts: 1 })(`${env.ORIGIN}${q('path')}?by=${env.NAME}`);
      await res.body?.cancel();
      return Response.json({ status: res.status, rpcs: budget.rpcs });
    }
    if (url.pathname === '/flush') {
      const budget = budgetOf(env, q('mode'), q('key'));
      await budget.flush();
      return Response.json({ rpcs: budget.rpcs, failedRpcs: budget.failedRpcs, available: budget.available() });
    }
    if (url.pathname === '/object') {
      return Response.json(await env.GATES.get(env.GATES.idFromName(q('key'))).stats());
    }
    if (url.pathname === '/bad') {
      const errors = [];
      for (const make of [
        () => sharedBudget({}, {}),
        () => sharedBudget(env.GATES, 5),
        () => sharedBudget(env.GATES, { key: '' }),
        () => sharedBudget(env.GATES, { key: 7 }),
        () => sharedBudget(env.GATES, { ttlMs: 0 }),
        () => sharedBudget(env.GATES, { minPerSec: '1' }),
        () => sharedBudget(env.GATES, { retryRatio: Number.NaN }),
        () => sharedBudget(env.GATES, { maxSlice: 0 }),
        () => sharedBudget(env.GATES, { maxSlice: 2.5 }),
        () => sharedBudget(env.GATES, { maxSlice: '4' }),
        () => sharedBudget(env.GATES, { key: 'bad' }).withdraw(Number.NaN),
        () => withBackoff(fetch, { budget: sharedBudget(env.GATES, { key: 'ok', maxSlice: 1000 }) }) && undefined,
      ]) {
        try {
          make();
          errors.push(null);
        } catch (e) {
          errors.push([e.name, e.message]);
        }
      }
      return Response.json(errors);
    }
    if (url.pathname === '/unhandled') return Response.json([...unhandled.values()]);
    return new Response('no such route', { status: 404 });
  },
};
