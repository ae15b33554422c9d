// @ts-check
// The plain lane (js/engine/loop.js): a call that backs off on its own
// schedule. Its waits are the call's (the schedule lifts a delay to a
// server-named wait, with jitter above); the policy's timing rule says
// whether the wait is allowed; the retry budget whether a retry is.
import { sleep } from '../hooks.js';
import { timing } from '../policy.js';

/** @type {import('./loop.js').Lane} */
export const scheduled = {
  /** Before every attempt but the first: the wait the last `after` chose. */
  pass: (call) => (call.n ? sleep(call.delayMs, call.signal, call.ds) : undefined),

  after(call, why, o) {
    if (why) return why;
    const c = call.c;
    const delayMs = (call.delayMs = call.next(o.hintMs));
    const now = Date.now();
    return (
      timing({
        delayMs,
        hintMs: o.hintMs,
        maxRetryAfterMs: c.maxRetryAfterMs ?? Infinity,
        elapsedMs: now - call.start,
        maxElapsedMs: c.maxElapsedMs,
      }) || (c.budget && !c.budget.withdraw(now) ? 'budget' : '')
    );
  },
};
