// @ts-check
// The one retry loop. Every driver runs it: fetchWithBackoff / withBackoff
// and retry(fn) (js/fetch/), gate.run and a gated fetch (js/gate/), the
// fleet's shared gate (js/fleet/), a request at undici's dispatcher
// (js/undici-request.js). Each round is the same four steps:
//
//   pass     the lane lets the attempt go (after its wait, or its hold)
//   attempt  the job sends it (a fetch, or the caller's function)
//   judge    the job says whether it is worth another attempt ('' = yes)
//   after    the lane decides whether it gets one, and how long it waits
//
// What differs is behind two small interfaces: the job (what an attempt is,
// js/fetch/request.js and js/engine/task.js) and the lane (how attempts are
// spaced: a plain schedule, js/engine/schedule.js, or a gate's ticket). A
// feature is written once, here or in one of them.
import { observe } from '../hooks.js';
import { Call } from './call.js';

export { Call };

/**
 * What one attempt gave.
 * @typedef {object} Outcome
 * @property {boolean} failed it threw (`error`) rather than answered
 * @property {unknown} [error]
 * @property {Response} [res] fetch's answer
 * @property {unknown} [value] the function's value (retry(fn), gate.run)
 * @property {number} [status]
 * @property {number} [hintMs] the wait the server named (statuses >= 400; for retry(fn), the error's)
 * @property {boolean} [advice] the server's `x-should-retry` on a failure
 * @property {boolean} [network] a failure worth a retry (a network failure, a timeout; any for retry(fn))
 * @property {boolean} [hurt] what the lane counts against the target: set by the job's judge
 * @property {object} [about] more for onDone: which attempt won a hedge race, where a failover went (js/fetch/hedge.js, failover.js)
 */

/**
 * What an attempt is.
 * @typedef {object} Job
 * @property {(call: Call) => Promise<Outcome>} attempt sends attempt `call.n`
 * @property {(call: Call, o: Outcome) => string | Promise<string>} judge '' when another attempt is wanted, else why not ('success', 'not-retryable', …); a string when it needs no hook
 * @property {(call: Call, o: Outcome) => Promise<void>} [before] runs before every attempt after the first (beforeRetry)
 * @property {(o: Outcome, why: string) => unknown} [result] what a call that did not fail resolves with (it may throw: the call rejects)
 * @property {(o: Outcome, why: string) => unknown} [failure] what a call that failed rejects with (else the outcome's error)
 */

/**
 * How attempts are spaced, and whom a failure tells.
 * @typedef {object} Lane
 * @property {(call: Call) => Promise<void> | undefined} pass resolves when the next attempt may go (undefined: at once); rejects when it must not (see `why`)
 * @property {(call: Call, why: string, o: Outcome) => string} after '' = another attempt (after `call.delayMs`), else why the call ends
 * @property {() => void} [cancel] the call ends without an outcome (aborted, a hook threw)
 * @property {string} [why] why `pass` rejected ('circuit-open', 'exhausted', 'deadline', …)
 */

/** A finished attempt's nothing: before the first. @type {Outcome} */
const NONE = { failed: false };

/**
 * Runs `call` to its end: resolves with the job's result, or rejects with
 * the last error (or the signal's reason, the deadline's TimeoutError, a
 * gate's error). `onDone` is told why it ended, however it ends.
 *
 * `from`: the call goes on after an outcome it met after it had answered
 * (a body that broke, js/stream/resume.js): that outcome is judged worth
 * another attempt and the loop starts at the lane's decision on it (its
 * wait, the schedule's end, the deadline, the budget), then tells onRetry,
 * as for any failed attempt. onDone was told when the call answered: it
 * is not told again.
 * @param {Call} call
 * @param {Job} job
 * @param {Lane} lane
 * @param {Outcome} [from]
 */
export async function drive(call, job, lane, from) {
  // (wasm-backoff/otel: the job wrapped to trace each attempt, and the call's
  // onRetry/onDone to see its waits and its end; nothing without it)
  if (!from) job = call.c.telemetry?.(call, job) ?? job;
  let o = from ?? NONE;
  let why = '';
  /** @type {string | undefined} the judge's verdict on `o` (none before the first attempt) */
  let verdict = from && '';
  try {
    if (!call.n) call.c.budget?.deposit(call.start);
    for (;;) {
      if (verdict !== undefined) {
        call.o = o; // (the outcome the lane's wait is chosen for: Call.next)
        why = lane.after(call, verdict, o);
        if (call.fault) throw call.fault[0]; // (the delay hook threw, inside a gate's operation)
        if (why) break;
        if (call.c.onRetry)
          observe(call.c.onRetry, {
            attempt: call.n,
            delayMs: call.delayMs,
            status: o.status,
            error: o.error,
            retryAfterMs: o.hintMs,
            response: o.res,
          });
        drop(o); // (a response we will not return: its connection and memory are freed)
      }
      call.passing = true;
      // (no wait, no tick: a first attempt goes out in the same turn)
      const held = lane.pass(call);
      if (held) await held;
      call.passing = false;
      call.alive(); // (let through, then aborted or past the deadline: nothing is sent)
      if (call.n && job.before) await job.before(call, o);
      call.n++;
      o = await job.attempt(call);
      const v = job.judge(call, o);
      verdict = typeof v === 'string' ? v : await v;
    }
  } catch (e) {
    lane.cancel?.();
    drop(o);
    const [reason, error] = call.ended(e, lane.why);
    [why, o] = [reason, { failed: true, error, about: o.about }];
  } finally {
    call.close();
  }
  const done = call.c.onDone;
  if (done && !from)
    observe(done, { attempts: call.n, elapsedMs: Date.now() - call.start, reason: why, status: o.res?.status, error: o.error, ...o.about });
  if (o.failed) throw job.failure ? job.failure(o, why) : o.error;
  return job.result ? job.result(o, why) : (o.res ?? o.value);
}

/** Lets go of an outcome's response body. @param {Outcome} o */
const drop = (o) => o.res?.body?.cancel().catch(() => {});
