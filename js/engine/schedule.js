// @ts-check
// The plain lane (js/engine/loop.js): a call that backs off on its own
// schedule. Its waits are the call's (the schedule lifts a delay to a
// server-named wait, with jitter above; the `delay` hook may choose
// another); the policy's timing rule says whether the wait is allowed; the
// retry budget whether a retry is. A call of a client that was told no
// request remains (`call.hold`) waits that out before its first attempt too.
import { sleep } from '../hooks.js';
import { timing, honoured } from '../policy.js';

/** @type {import('./loop.js').Lane} */
export const scheduled = {
  /** Before every attempt but the first: the wait the last `after` chose. */
  pass(call) {
    const held = call.hold?.() ?? 0;
    return call.n || held > 0 ? sleep(Math.max(call.n ? call.delayMs : 0, held), call.signal, call.ds) : undefined;
  },

  after(call, why, o) {
    if (why) return why;
    const c = call.c;
    const most = c.maxRetryAfterMs ?? Infinity;
    const hintMs = (o.hintMs = honoured(o.hintMs, most, !!c.clamp));
    const delayMs = (call.delayMs = call.next(hintMs));
    const now = Date.now();
    return (
      timing({
        delayMs,
        hintMs,
        maxRetryAfterMs: most,
        elapsedMs: now - call.start,
        maxElapsedMs: c.maxElapsedMs,
      }) || (c.budget && !c.budget.withdraw(now) ? 'budget' : '')
    );
  },
};
