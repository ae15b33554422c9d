// @ts-check
// One call's passage through a gate: the lane of the retry engine
// (js/engine/loop.js) for a gated fetch and gate.run: pass (held while the
// target backs off, or its own backoff below the threshold, or the
// adaptive limiter's token), after (the outcome told to the core, which
// decides what the call does next), cancel.
import { w } from '../wasm.js';
import { sleep, workerd } from '../hooks.js';
import { honoured } from '../policy.js';
import { GateTimeoutError, BrokenCircuitError } from './errors.js';
import { ended } from './answers.js';
import { CANCELLED, FAILED, GATE_WAKE, REACHED, TIMED_OUT } from '../gen/boundary.js';

/** @typedef {import('./slot.js').Slot} Slot */

/**
 * Where a ticket stands (`state`): not yet admitted, held in its slot's
 * queue, let go (may send with its tag), refused (rejected with `error`),
 * done (its outcome told).
 */
export const T_NEW = 0;
export const T_HELD = 1;
export const T_GO = 2;
export const T_OUT = 3;
export const T_DONE = 4;

// workerd cancels a request that waits with nothing pending in its own
// context (a promise another incoming request will resolve looks hung), and
// the timers of a finished request. There, a held call also polls from its
// own context (until the round's end while backing off, every 25 ms
// otherwise), which keeps it alive and drives the gate should the request
// that armed the gate's timer be gone; so a gate can be shared by incoming
// requests.
const POLL = workerd();

/** One call's passage through the gate. */
export class Ticket {
  /** T_NEW, T_HELD, T_GO, T_OUT or T_DONE. */
  state = T_NEW;
  /** @type {Slot} its slot, from the first pass() */
  s = /** @type {any} */ (undefined);
  /** The core's tag while sent. */
  tag = 0;
  /** @type {unknown} once rejected */
  error;
  /** @type {string | undefined} why it was rejected: 'evicted', 'exhausted', 'deadline', 'aborted', 'circuit-open' */
  why;
  /** @type {(() => void) | undefined} settles the promise of pass() */
  #wake;
  /** @type {any} while held: its deadline timer (js/gate/held.js) */
  timer;
  /** @type {any} (workerd) its poll timer */
  poll;
  /** @type {(() => void) | undefined} while held: its abort listener */
  onAbort;
  /** Its own backoff before the next admission (a failure below the threshold), ms. */
  #delayMs = 0;
  /** When it took the adaptive limiter's token (NaN: it did not): the rate its attempt was paced by. */
  #paced = NaN;
  /** When its attempt went, after the token's wait (its round trip, for the limiter). */
  #sent = NaN;
  /** @type {() => Slot} */
  #slot;
  /** @type {(hintMs?: number) => number} */
  #spend;
  /** @type {{ state(key: unknown): { state: string }, pace(key: unknown, ms: number): void }} */
  #of;
  /** @type {boolean} */
  #paces;

  /**
   * @param {() => Slot} slot
   * @param {unknown} key
   * @param {AbortSignal | undefined} signal
   * @param {number} deadline
   * @param {(hintMs?: number) => number} spend
   * @param {number} seq
   * @param {{ state(key: unknown): { state: string }, pace(key: unknown, ms: number): void }} of the gate (its view of the target; its pacing)
   * @param {boolean} [pace] a success saying no request remains paces the target (the fetch driver's `pace`)
   */
  constructor(slot, key, signal, deadline, spend, seq, of, pace = false) {
    this.#slot = slot;
    this.key = key;
    this.signal = signal;
    this.deadline = deadline;
    this.#spend = spend;
    this.seq = seq;
    this.#of = of;
    this.#paces = pace;
  }

  /**
   * Resolves when the call may be sent; rejects when it must not be (see `why`).
   * @param {unknown} [_call]
   * @param {number} [delayMs] the wait the loop was told (its own backoff; carried from another endpoint's ticket by failover)
   * @returns {Promise<void>}
   */
  async pass(_call, delayMs = 0) {
    if (this.state === T_NEW) await this.#enter(delayMs);
    return new Promise((resolve, reject) => {
      const done = (this.#wake = () => (this.state === T_GO ? resolve() : reject(this.error)));
      if (this.state !== T_HELD) return done();
      if (!POLL) return;
      const poll = () => {
        if (this.state === T_HELD) this.s.op(w.gate_status), this.s.pump();
        if (this.state !== T_HELD) return done();
        const ms = this.waitMs();
        this.poll = setTimeout(poll, ms > 0 ? Math.min(ms, 250) : 25);
      };
      poll();
    });
  }

  /**
   * A new attempt asks to go: after its own backoff (or the target's pause
   * after a success that said no request remains: Gate.pace), then the
   * adaptive limiter's token; then the core admits it (a tag), holds it,
   * or refuses it (failing fast).
   * @param {number} delayMs
   */
  async #enter(delayMs) {
    let s = (this.s = this.#slot());
    const wait = Math.max(delayMs, this.#delayMs, s.until - Date.now());
    if (wait > 0) await this.nap(wait);
    this.#delayMs = 0;
    this.#paced = NaN;
    if (s.shared.limited && !s.dead) {
      // (negative: its token wait and a round trip end past its deadline; refused now, no token taken)
      const d = w.gate_acquire(s.h, (this.#paced = Date.now()), this.deadline);
      if (d < 0) return this.nap(Infinity);
      try {
        if (d > 0) await this.nap(d);
      } catch (e) {
        if (!s.dead) w.gate_unacquire(s.h);
        throw e;
      }
      this.#sent = Date.now();
    }
    s = this.s = this.#slot();
    const r = s.op(w.gate_admit, Date.now());
    s.round(); // (a hung probe may have timed out: a round this call did not wait through)
    const why = ended(r);
    if (why) {
      const ms = s.retryAfterMs();
      this.refuse(why, new BrokenCircuitError(this.key, ms, ms === Infinity));
    } else if (r >= 0) this.go(r);
    else {
      s.queue.hold(this, r);
      s.pump();
    }
  }

  /** Sleeps `ms` of this call's (abortable), unless that ends past its deadline. */
  nap(/** @type {number} */ ms) {
    if (Date.now() + ms > this.deadline) {
      this.why = 'deadline';
      return Promise.reject(new GateTimeoutError(this.key, 'deadline'));
    }
    return sleep(ms, this.signal);
  }

  /** It joins its slot's held calls (js/gate/held.js). */
  hold() {
    this.state = T_HELD;
  }

  /** It may be sent, with `tag`. @param {number} tag */
  go(tag) {
    this.tag = tag;
    this.state = T_GO;
    this.#woken();
  }

  /**
   * It may not be sent: its pass() rejects with `error`.
   * @param {string} why
   * @param {unknown} error
   */
  refuse(why, error) {
    Object.assign(this, { state: T_OUT, why, error });
    this.#woken();
  }

  /** Settles the promise of pass(), if one waits. */
  #woken() {
    this.#wake?.();
    this.#wake = undefined;
  }

  /**
   * Its own next delay for one more attempt (the caller's `spend`: the
   * fetch driver makes its schedule there, at the first failure), as
   * Call.next answers it; -1 (no attempt left) should `spend` throw (out
   * of memory): it runs inside the gate's operations, even from its timer.
   * @param {number} [hintMs] a server-named wait
   */
  spent(hintMs) {
    try {
      return this.#spend(hintMs);
    } catch {
      return -1;
    }
  }

  /**
   * The sent call's outcome: `hurt` = the target failed; `retry` = the call
   * wants another attempt, `hintMs` a server-named wait. The core records
   * it and decides: '' when the call gets one (await `pass()` again: held
   * while the circuit is open, or after its own backoff below the
   * threshold), else why it is over: 'exhausted', 'vetoed' or 'deadline'
   * (its own limits), 'circuit-open' (failing fast); 'done' when it wanted none.
   * @param {boolean} hurt
   * @param {boolean} retry
   * @param {number} [hintMs]
   */
  settle(hurt, retry, hintMs) {
    const s = this.s;
    this.state = T_DONE;
    if (s.dead) return 'done'; // the gate was freed while the call was out
    const own = retry ? this.spent(hintMs) : NaN;
    const r = s.op(w.gate_settle, this.tag, hurt ? FAILED : REACHED, hintMs ?? NaN, own, this.deadline, Date.now());
    s.round();
    const why = retry ? ended(r) : 'done';
    if (!why && r >= 0) [this.state, this.#delayMs] = [T_NEW, r];
    else if (!why) s.queue.hold(this, r);
    s.pump();
    return why;
  }

  /**
   * The call ends without an outcome (aborted, or a callback of the caller
   * threw): it leaves the gate, sent or held. Sent and cut by its deadline,
   * it timed out (the probe's counts as failed, as the core says).
   */
  cancel() {
    if (this.state === T_HELD) this.s.queue.out(this, 'aborted', false, null);
    if (this.state !== T_GO) return;
    this.state = T_DONE;
    const s = this.s;
    const now = Date.now();
    s.op(w.gate_settle, this.tag, now >= this.deadline ? TIMED_OUT : CANCELLED, NaN, NaN, this.deadline, now);
    s.round();
    s.pump();
  }

  /**
   * Whether this sent call's outcome is news about the target (the core's
   * Gate::news): it was sent in the current healthy period, or it is the
   * probe; not when a round (an isolation, a restore) began since it went.
   */
  news() {
    return this.state === T_GO && !this.s.dead && !!w.gate_news(this.s.h, this.tag);
  }

  /**
   * The lane's step after an attempt (js/engine/loop.js): tells the core
   * the outcome (the verdict's `hurt`: the target failed) and what the call
   * wants; the core decides whether it gets another attempt (held while the
   * circuit is open, `held`; or after its own backoff below the threshold).
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Verdict} v the job's verdict ('' = another attempt wanted)
   * @param {import('../engine/loop.js').Outcome} o
   * @returns {import('../engine/loop.js').Decision}
   */
  after(call, v, o) {
    // The gate was freed while the call was out: it ends with its own outcome.
    if (this.s.dead) return { why: v.why || 'freed', delayMs: 0 };
    // A success saying no request remains holds the target's next calls until the reset.
    if (o.pace !== undefined && this.#paces) this.#of.pace(this.key, o.pace);
    this.#told(o);
    const c = call.c;
    const most = c.maxRetryAfterMs ?? Infinity;
    // The server's wait as the call honours it (the policy's rule): over maxRetryAfterMs,
    // clamped (retryAfterOverMax 'clamp') or not waited for, the call returning at once;
    // the target's round waits it up to maxRetryAfterMs either way.
    const ra = honoured(v.hurt ? o.hintMs : undefined, most, !!c.clamp);
    let why = v.why || (ra !== undefined && ra > most ? 'retry-after' : '');
    const round = honoured(ra, most, true);
    if (!why && c.budget && !c.budget.withdraw(Date.now())) why = 'budget';
    const end = this.settle(v.hurt, !why, round);
    why ||= end;
    return why ? { why, delayMs: 0, hintMs: round } : { why, delayMs: this.waitMs(), hintMs: round, held: this.state === T_HELD };
  }

  /**
   * Every answer feeds the adaptive limiter: throttling slows it down (once
   * per round trip: the core ignores throttles of attempts paced before its
   * last cut). A server-named wait delays this call's retry only; the
   * limiter stores none (docs/protections.md: what a server-named wait pauses).
   * @param {import('../engine/loop.js').Outcome} o
   */
  #told(o) {
    const s = this.s;
    if (s.shared.limited && !o.failed) {
      const throttled = s.shared.throttleOn.has(/** @type {number} */ (o.status)) || (o.status === 503 && o.hintMs !== undefined);
      w.gate_throttled(s.h, +throttled, this.#paced, this.#sent, Date.now());
    }
    this.#paced = this.#sent = NaN; // (a held call's next attempt takes no token)
  }

  /** Whether the call waits in its target's held queue now (a failover may move it). */
  held() {
    return this.state === T_HELD;
  }

  /** Whether the target looks healthy now (a hedge may go): its circuit is closed. */
  healthy() {
    return this.#of.state(this.key).state === 'closed';
  }

  /** Nothing more for onDone. */
  about() {
    return undefined;
  }

  /**
   * How long this call waits before its next pass, in ms: its own backoff
   * below the threshold, else what the target's round still waits (0: none).
   * What onRetry is told, and a held call's poll.
   */
  waitMs() {
    this.s.op(w.gate_status);
    return Math.max(this.#delayMs, this.s.st[GATE_WAKE] - Date.now());
  }
}
