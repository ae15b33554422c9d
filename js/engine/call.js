// @ts-check
// One call's state across its attempts (js/engine/loop.js runs it): the
// caller's signal and the hard deadline, the attempt count, the call's own
// schedule (made at its first retry: most calls succeed at once and never
// need one), and how an abnormal end is named. Its state is its own: other
// modules read it and ask its methods; none writes into it.
import { w, load, check } from '../wasm.js';
import { deadline } from '../hooks.js';

/**
 * What the loop needs of a call's options (js/fetch/options.js makes them
 * for the fetch driver and retry(fn); gate.run its own).
 * @typedef {object} CallOptions
 * @property {number[]} rec the schedule's options record (js/wasm.js `record`)
 * @property {boolean} seeded the options name a seed (else each schedule gets a fresh one)
 * @property {number} maxElapsedMs the hard deadline (Infinity: none)
 * @property {number} [timeoutMs] per attempt
 * @property {number} [maxRetryAfterMs]
 * @property {(o: import('./loop.js').Outcome | undefined) => number} [base] the base of the step after an outcome (NaN: the schedule's own; js/engine/waits.js)
 * @property {(call: Call, d: number, hintMs: number | undefined) => number} [pick] the `delay` hook's choice for the proposal `d` (js/engine/waits.js); what it throws ends the call
 * @property {boolean} [clamp] a server's wait over maxRetryAfterMs is waited as maxRetryAfterMs (retryAfterOverMax 'clamp')
 * @property {boolean} [pace] a success saying no request remains holds the target's next calls
 * @property {{ deposit(now: number): void, withdraw(now: number): boolean }} [budget]
 * @property {(info: any) => unknown} [onRetry]
 * @property {(info: any) => unknown} [onDone]
 * @property {(call: Call, job: import('./loop.js').Job) => import('./loop.js').Tap | undefined} [telemetry] wasm-backoff/otel's: an observer of the call's attempts, waits and end
 */

export class Call {
  /** Attempts sent so far. */
  #n = 0;
  /** The schedule's handle (0 until the first retry, and again once closed). */
  #h = 0;
  /** Delays drawn from the schedule so far (a schedule made again goes on after them). */
  #drawn = 0;
  /** @type {any} The deadline's timer. */
  #timer;
  /** @type {import('./loop.js').Outcome | undefined} The outcome the next wait is chosen for. */
  #o;
  /** @type {[unknown] | undefined} What the delay hook threw (rethrown by the loop: a gate's operation catches everything). */
  #fault;

  /**
   * @param {CallOptions} c
   * @param {AbortSignal | undefined} signal the caller's
   * @param {boolean} [hard] the deadline aborts what runs at it (the drivers'); else it bounds the waits only (gate.run's)
   */
  constructor(c, signal, hard = true) {
    this.c = c;
    this.signal = signal;
    this.start = Date.now();
    /** The epoch ms past which no wait may end. */
    this.end = this.start + c.maxElapsedMs;
    /** @type {AbortSignal | undefined} aborted at the hard deadline */
    this.ds = undefined;
    if (hard) this.#arm();
  }

  /** Attempts sent so far. */
  get n() {
    return this.#n;
  }

  /** One more attempt goes: its number. */
  count() {
    return ++this.#n;
  }

  /** The last outcome, as the loop told it (`seen`). */
  get last() {
    return this.#o;
  }

  /** The outcome the next wait is chosen for (the loop tells it before the lane's step). @param {import('./loop.js').Outcome} o */
  seen(o) {
    this.#o = o;
  }

  /** Arms the hard deadline, at `end` (maxElapsedMs after the start). */
  #arm() {
    const max = this.c.maxElapsedMs;
    if (max === Infinity) return;
    let dl;
    [dl, this.#timer] = deadline('maxElapsedMs', max, this.end - Date.now());
    this.ds = dl.signal;
  }

  /**
   * The call goes on after it answered (a resumed body, js/stream/resume.js):
   * its hard deadline is armed again, still at its start plus maxElapsedMs,
   * and `signal` (the body's cancel) aborts it too, with the caller's.
   * @param {AbortSignal} signal
   */
  reopen(signal) {
    this.signal = this.signal ? AbortSignal.any([this.signal, signal]) : signal;
    this.#arm();
  }

  /**
   * The call's own next delay (ms) for a server-named wait `hintMs` (the
   * one honoured), or -1 when its schedule is exhausted, GAVE_UP when the
   * `delay` hook gave up (-1 when it threw: `rethrow` then throws it). The
   * schedule is made at the first use (made again after `close`, it is
   * stepped past the delays drawn); the step is drawn on the base the
   * options name for the last outcome (a throttled attempt's:
   * throttleBaseMs), then the `delay` hook may choose another
   * (js/engine/waits.js).
   * @param {number} [hintMs]
   */
  next(hintMs) {
    const c = this.c;
    if (!this.#h) {
      load(c.rec, c.seeded);
      this.#h = check(w.backoff_new());
      // (made again after the call answered: it goes on where it was)
      for (let i = 0; i < this.#drawn; i++) w.backoff_next(this.#h, NaN, NaN);
    }
    this.#drawn++;
    const d = w.backoff_next(this.#h, hintMs ?? NaN, c.base?.(this.#o) ?? NaN);
    if (!c.pick || d < 0) return d;
    try {
      return c.pick(this, d, hintMs);
    } catch (e) {
      this.#fault = [e];
      return -1;
    }
  }

  /** Throws what the `delay` hook threw, if it did. */
  rethrow() {
    if (this.#fault) throw this.#fault[0];
  }

  /** Throws the caller's abort reason, or the deadline's, when either has happened. */
  alive() {
    if (this.signal?.aborted) throw this.signal.reason;
    if (this.ds?.aborted) throw this.ds.reason;
  }

  /**
   * How a call that threw `e` ends: why ('aborted', 'deadline', the lane's
   * reason `why`, or 'hook-error': a decision hook threw) and what it
   * rejects with (the caller's reason; a gate's own error for a held call
   * that ran out, GateTimeoutError, whichever timer fired first; the
   * deadline's TimeoutError; else `e`).
   * @param {unknown} e
   * @param {string | undefined} why
   * @param {boolean} passing it threw in the lane's pass (held by a gate, or waiting)
   * @returns {[string, unknown]}
   */
  ended(e, why, passing) {
    if (this.signal?.aborted) return ['aborted', this.signal.reason];
    if (passing && (why === 'deadline' || why === 'exhausted')) return [why, e];
    return this.ds?.aborted ? ['deadline', this.ds.reason] : [why ?? 'hook-error', e];
  }

  /** Lets go of the deadline's timer and the schedule. */
  close() {
    clearTimeout(this.#timer);
    if (this.#h) w.backoff_free(this.#h);
    this.#h = 0;
  }
}
