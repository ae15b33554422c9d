// Scenarios of the adaptive limiter shared by the Chromium page
// (tests/browser/breaker.js) and the workerd worker (tests/workerd/breaker.mjs):
// plain JavaScript, no Node API, so both import this file.

/**
 * `state` (a gate's toJSON()) as if saved long enough ago that the round of
 * target `key` ended just before `now`: its times (savedAt, the target's
 * untilMs and windowAt) moved back alike, so that a test need not wait a
 * carried round out. What restore() then does with it is the gate's own.
 */
export function roundOver(state, key, now = Date.now()) {
  const t = state.targets[key];
  const back = Math.max(0, t.untilMs - now + 1);
  const moved = (x) => (typeof x === 'number' ? x - back : x);
  return {
    ...state,
    savedAt: state.savedAt - back,
    targets: { ...state.targets, [key]: { ...t, untilMs: t.untilMs - back, windowAt: moved(t.windowAt) } },
  };
}

/**
 * The limiter alone: off until throttled; after one success and a 429
 * naming 300 ms (stored nowhere: the cut's base is what the server took, the
 * one success over the shortest span, 100 ms: 10 req/s, so 7 req/s, a token
 * 143 ms away), the wait an acquire() with maxWaitMs asks for; a refused or
 * aborted acquire gives its token back.
 */
export async function limiterAlone(createLimiter) {
  const l = createLimiter();
  const off = String(l.rate);
  // (free: acquire() settles on microtasks, before a setTimeout(0) queued just before it; not wall
  // time, which a loaded machine stretches)
  const free = await new Promise((resolve) => {
    setTimeout(() => resolve('timer'), 0);
    l.acquire().then(
      () => resolve('acquire'),
      (e) => resolve(`rejected: ${e}`),
    );
  });
  l.record(false);
  const rate = l.record(true, 300);
  const refused = async (options) => {
    try {
      await l.acquire(options);
      return { resolved: true };
    } catch (e) {
      return { name: e.name, message: String(e.message ?? e), waitMs: Number(/wait \((\d+) ms\)/.exec(e.message)?.[1]) };
    }
  };
  const first = await refused({ maxWaitMs: 50 });
  const ac = new AbortController();
  const pending = refused({ signal: ac.signal });
  ac.abort(new Error('stop'));
  const aborted = await pending;
  const again = await refused({ maxWaitMs: 50 });
  l.free();
  return { off, free, rate, first, aborted, again };
}
