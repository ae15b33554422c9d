// @ts-check
// The plain lane (js/engine/loop.js): a call that backs off on its own
// schedule. Its waits are the call's (the schedule lifts a delay to a
// server-named wait, with jitter above; the `delay` hook may choose
// another); the policy's timing rule says whether the wait is allowed; the
// retry budget whether a retry is. A withBackoff client's lane (`paced`)
// also keeps its origins' pacing: a success saying no request remains
// holds the origin's next calls until the reset, their first attempt too.
import { sleep } from '../hooks.js';
import { timing, honoured } from '../policy.js';

/**
 * The plain lane's decision: the call's own next wait, if the policy's
 * timing rule and the budget allow it.
 * @param {import('./call.js').Call} call
 * @param {import('./loop.js').Verdict} v
 * @param {import('./loop.js').Outcome} o
 * @returns {import('./loop.js').Decision}
 */
function after(call, v, o) {
  if (v.why) return { why: v.why, delayMs: 0 };
  const c = call.c;
  const most = c.maxRetryAfterMs ?? Infinity;
  const hintMs = honoured(o.hintMs, most, !!c.clamp);
  const delayMs = call.next(hintMs);
  const now = Date.now();
  const why =
    timing({ delayMs, hintMs, maxRetryAfterMs: most, elapsedMs: now - call.start, maxElapsedMs: c.maxElapsedMs }) ||
    (c.budget && !c.budget.withdraw(now) ? 'budget' : '');
  return { why, delayMs, hintMs };
}

/** @type {import('./loop.js').Lane} */
export const scheduled = {
  /** Before every attempt but the first: the wait the last `after` chose. */
  pass: (call, delayMs) => (call.n ? sleep(delayMs, call.signal, call.ds) : undefined),
  after,
};

/**
 * The plain lane of a call to `key` in a client that paces its origins
 * (`at`: until when each said no request remains, epoch ms).
 * @param {Map<string, number>} at
 * @param {string} key
 * @returns {import('./loop.js').Lane}
 */
export const paced = (at, key) => ({
  pass(call, delayMs) {
    const held = (at.get(key) ?? 0) - Date.now();
    return call.n || held > 0 ? sleep(Math.max(call.n ? delayMs : 0, held), call.signal, call.ds) : undefined;
  },
  after(call, v, o) {
    if (o.pace !== undefined) paceFor(at, key, o.pace);
    return after(call, v, o);
  },
});

/**
 * Holds `key`'s next calls for `ms` in `at` (a client's pacing record), and
 * lets go of the entries past: the map keeps only the origins holding now,
 * not every origin a long-lived client ever paced.
 * @param {Map<string, number>} at
 * @param {string} key
 * @param {number} ms
 */
export function paceFor(at, key, ms) {
  const now = Date.now();
  for (const [k, t] of at) if (t <= now) at.delete(k);
  at.set(key, now + ms);
}
