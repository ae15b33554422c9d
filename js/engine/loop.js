// @ts-check
// The one retry loop. Every driver runs it: fetchWithBackoff / withBackoff
// and retry(fn) (js/fetch/), gate.run and a gated fetch (js/gate/), the
// fleet's shared gate (js/fleet/), a request at undici's dispatcher
// (js/undici/job.js), a resumed body (js/stream/resume.js). Each round
// is the same four steps:
//
//   pass     the lane lets the attempt go (after its wait, or its hold)
//   attempt  the job sends it (a fetch, or the caller's function)
//   judge    the job's verdict: is it worth another attempt, does it count against the target
//   after    the lane's decision: does it get one, and after what wait
//
// What differs is behind two small interfaces: the job (what an attempt
// is, js/fetch/request.js and js/engine/task.js) and the lane (how attempts
// are spaced: a plain schedule, js/engine/schedule.js, or a gate's ticket).
// Each step returns a value: nothing writes into another step's objects
// (outcomes are frozen). A feature is a job or a lane around another
// (hedging, failover), or an observer (telemetry, onRetry, onDone), which
// sees each step and cannot change an outcome.
import { observe, drop, abortable } from '../hooks.js';
import { Call } from './call.js';

export { Call };

/**
 * What one attempt gave (frozen: a fact, for every step to read).
 * @typedef {object} Outcome
 * @property {boolean} failed it threw (`error`) rather than answered
 * @property {unknown} [error]
 * @property {Response} [res] fetch's answer
 * @property {unknown} [value] the function's value (retry(fn), gate.run)
 * @property {number} [status]
 * @property {number} [hintMs] the wait the server named (statuses >= 400; for retry(fn), the error's)
 * @property {boolean} [advice] the server's `x-should-retry` on a failure
 * @property {boolean} [network] a failure worth a retry (a network failure, a timeout; any for retry(fn))
 * @property {number} [pace] how long the target asks its next calls to hold (a success saying no request remains)
 */

/**
 * The job's judgement of an outcome.
 * @typedef {object} Verdict
 * @property {string} why '' when another attempt is wanted, else why not ('success', 'not-retryable', …)
 * @property {boolean} hurt the outcome counts against its target (a gate's failure)
 * @property {unknown} [error] the call ends with this error rather than the outcome's (a hook of the job's threw)
 */

/**
 * The lane's decision after a verdict.
 * @typedef {object} Decision
 * @property {string} why '' = another attempt, after `delayMs`; else why the call ends
 * @property {number} delayMs the wait before the next attempt (told to onRetry)
 * @property {number} [hintMs] the server's wait, as honoured (told to onRetry)
 * @property {boolean} [held] the wait is a gate round's, not the call's own backoff (a failover may move the call)
 */

/**
 * What an attempt is.
 * @typedef {object} Job
 * @property {(call: Call, n: number, signal: AbortSignal | undefined) => Promise<Outcome>} attempt sends attempt `n` under `signal` (the caller's; a hedge's racer has its own)
 * @property {(call: Call, o: Outcome) => Verdict | Promise<Verdict>} judge a Verdict at once when it needs no hook
 * @property {(call: Call, o: Outcome) => Promise<void>} [before] runs before every attempt after the first (beforeRetry)
 * @property {(o: Outcome, why: string) => unknown} [result] what a call that did not fail resolves with (it may throw: the call rejects)
 * @property {(o: Outcome, why: string) => unknown} [failure] what a call that failed rejects with (else the outcome's error)
 * @property {() => object | undefined} [about] more for onDone (a hedge race's winner)
 */

/**
 * How attempts are spaced, and whom a failure tells.
 * @typedef {object} Lane
 * @property {(call: Call, delayMs: number) => Promise<void> | undefined} pass resolves when the next attempt may go, `delayMs` after the last (undefined: at once); rejects when it must not (see `why`)
 * @property {(call: Call, v: Verdict, o: Outcome) => Decision} after
 * @property {() => void} [cancel] the call ends without an outcome (aborted, a hook threw)
 * @property {string} [why] why `pass` rejected ('circuit-open', 'exhausted', 'deadline', …)
 * @property {() => boolean} [held] the call waits in its target's held queue now (a failover may move it)
 * @property {() => boolean} [healthy] the target looks healthy now (a hedge may go)
 * @property {() => boolean} [spare] a hedge's units of a quota are there now (checked before the budget)
 * @property {() => void} [spend] the hedge goes: its units are spent (right after `spare`)
 * @property {(call: Call, o: Outcome) => void} [heard] a racer's answer, as it comes (a quota follows its headers)
 * @property {(call: Call, signal: AbortSignal | undefined) => Promise<void>} [again] another send inside an attempt may go (auth's resend: a quota's units)
 * @property {() => object | undefined} [about] more for onDone (where a failover went)
 */

/**
 * An observer of a call (wasm-backoff/otel's): each method is optional and
 * guarded; what it throws is reported and changes nothing.
 * @typedef {object} Tap
 * @property {(n: number, run: () => void) => void} [attempt] runs the attempt (`run`, once) in its own context
 * @property {(n: number, o: Outcome) => void} [attempted]
 * @property {(info: any) => void} [retry] what onRetry is told
 * @property {(info: any) => void} [done] what onDone is told
 */

/** A finished attempt's nothing: before the first. @type {Outcome} */
const NONE = Object.freeze({ failed: false });

/** The verdict on a break the call met after it answered (`from`): another attempt, which counts against the target. */
const BROKE = Object.freeze({ why: '', hurt: true });

/**
 * Tells `info` to the observer's `step` (called on it) and to the caller's
 * hook, each through `observe`: what either throws is reported and changes
 * nothing, and one that is not there is passed over.
 * @param {Tap | undefined} tap
 * @param {'retry' | 'done'} step
 * @param {((info: any) => void) | undefined} hook onRetry, onDone
 * @param {object} info
 */
function tell(step, tap, hook, info) {
  observe((i) => tap?.[step]?.(i), info);
  observe(hook, info);
}

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
 *
 * A fetch call that failed for good (a rejection but the caller's abort
 * and an error that is no network failure, 'not-retryable': a request
 * fetch cannot build; or a final answer of `retryOn`) settles with what
 * the `fallback` option returns (that answer's body let go unless it is
 * returned), or rejects with what it throws; the caller's signal still
 * aborts it. Its info is onDone's, with the answer (`response`).
 * @param {Call} call
 * @param {Job} job
 * @param {Lane} lane
 * @param {Outcome} [from]
 */
export async function drive(call, job, lane, from) {
  const c = call.c;
  const tap = from ? undefined : tapped(call, job);
  let o = from ?? NONE;
  /** @type {Verdict | undefined} the verdict on `o` (none before the first attempt) */
  let v = from && BROKE;
  let why = '';
  let delayMs = 0;
  let passing = false;
  try {
    if (!call.n) c.budget?.deposit(call.start);
    for (;;) {
      if (v) {
        call.seen(o); // (the outcome the lane's wait is chosen for: Call.next)
        const d = lane.after(call, v, o);
        call.rethrow(); // (the delay hook threw, inside a gate's operation)
        if (v.error !== undefined) drop(o), (o = Object.freeze({ failed: true, error: v.error }));
        if ((why = d.why)) break;
        delayMs = d.delayMs;
        const info = { attempt: call.n, delayMs, status: o.status, error: o.error, retryAfterMs: d.hintMs, response: o.res };
        tell('retry', tap, c.onRetry, info);
        drop(o); // (a response we will not return: its connection and memory are freed)
      }
      passing = true;
      // (no wait, no tick: a first attempt goes out in the same turn)
      const held = lane.pass(call, delayMs);
      if (held) await held;
      passing = false;
      call.alive(); // (let through, then aborted or past the deadline: nothing is sent)
      if (call.n && job.before) await job.before(call, o);
      o = Object.freeze(await attempt(tap, job, call, call.count()));
      const j = job.judge(call, o);
      v = 'why' in j ? j : await j;
    }
  } catch (e) {
    lane.cancel?.();
    drop(o);
    let error;
    [why, error] = call.ended(e, lane.why, passing);
    o = Object.freeze({ failed: true, error });
  } finally {
    call.close();
  }
  // (an option of the fetch driver's: js/fetch/options.js)
  const fb = !from && /** @type {any} */ (c).fallback;
  if (!from && (tap?.done || c.onDone || fb)) {
    const info = { attempts: call.n, elapsedMs: Date.now() - call.start, reason: why, status: o.res?.status, error: o.error };
    Object.assign(info, job.about?.(), lane.about?.());
    tell('done', tap, c.onDone, info);
    // (failed for good: settles with what `fallback` returns, as above)
    if (fb && (o.failed ? why !== 'aborted' && why !== 'not-retryable' : /** @type {any} */ (c).retryOn.has(o.status))) {
      const x = await abortable(fb({ ...info, response: o.res }), call.signal);
      if (x !== o.res) drop(o);
      return x;
    }
  }
  if (o.failed) throw job.failure ? job.failure(o, why) : o.error;
  return job.result ? job.result(o, why) : (o.res ?? o.value);
}

/**
 * The call's observer (the `telemetry` option's), or none: what making it
 * throws is reported, and the call goes on unobserved.
 * @param {Call} call
 * @param {Job} job
 * @returns {Tap | undefined}
 */
function tapped(call, job) {
  const make = call.c.telemetry;
  if (!make) return;
  try {
    return make(call, job);
  } catch (e) {
    observe(() => {
      throw e;
    }, {});
  }
}

/**
 * Attempt `n`, in the observer's context when there is one. The attempt's
 * own promise is the outcome: the observer runs it (once) but cannot
 * replace it, and what the observer throws, before or after, is reported.
 * @param {Tap | undefined} tap
 * @param {Job} job
 * @param {Call} call
 * @param {number} n
 * @returns {Promise<Outcome>}
 */
async function attempt(tap, job, call, n) {
  if (!tap?.attempt) return job.attempt(call, n, call.signal);
  /** @type {Promise<Outcome> | undefined} */
  let p;
  const run = () => void (p ??= job.attempt(call, n, call.signal));
  observe(() => tap.attempt?.(n, run), {});
  run();
  /** @type {Outcome} */
  let o;
  try {
    o = await /** @type {Promise<Outcome>} */ (p);
  } catch (error) {
    // (aborted, or past the deadline: the call ends with it; the observer is told)
    observe(() => tap.attempted?.(n, { failed: true, error }), {});
    throw error;
  }
  observe(() => tap.attempted?.(n, o), {});
  return o;
}
