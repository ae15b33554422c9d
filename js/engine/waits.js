// @ts-check
// The waits the outcome chooses (issue 26) for the calls of the fetch
// driver and retry(fn): the base of a throttled attempt's step, and the
// `delay` hook's answer. js/fetch/options.js puts them in a call's options
// (`base`, `pick`) and Call.next asks them; gate.run's calls have neither,
// so the gate's bundle does without this module and the policy's lists.
import { choose, throttled } from '../policy.js';
import { unawaited } from '../hooks.js';

/**
 * The base of the step after an attempt's outcome: `ms` (throttleBaseMs; <
 * 0: that multiple of the schedule's own) for a 429 or 503, else NaN (the
 * schedule's own).
 * @param {number} ms
 * @returns {(o: import('./loop.js').Outcome | undefined) => number}
 */
export const throttleBase = (ms) => (o) => (throttled(o?.status) ? ms : NaN);

/**
 * The `delay` hook as Call.next asks it: the wait chosen for the schedule's
 * proposal `d` (js/policy.js `choose`: GAVE_UP for false), or `d` itself
 * when the server's wait `hintMs` is over maxRetryAfterMs (the call ends
 * anyway). What the hook throws, Call.next keeps and the loop rethrows (a
 * gate's operation catches everything). A promise it returns (it is
 * synchronous) is refused by `choose`; its rejection is handled
 * (`unawaited`), never left unhandled.
 * @param {(info: any) => unknown} delay
 * @returns {(call: import('./call.js').Call, d: number, hintMs: number | undefined) => number}
 */
export const chooser = (delay) => (call, d, hintMs) => {
  if (/** @type {number} */ (hintMs) > (call.c.maxRetryAfterMs ?? Infinity)) return d;
  const o = call.last;
  const answer = delay({ attempt: call.n, status: o?.status, error: o?.error, response: o?.res, retryAfterMs: hintMs, delayMs: d });
  unawaited(answer);
  return choose(d, answer);
};
