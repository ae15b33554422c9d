// @ts-check
// One call's passage through a gate: the lane of the retry engine
// (js/engine/loop.js) for a gated fetch and gate.run: pass (held while the
// target backs off, or its own backoff below the threshold, or the
// adaptive limiter's token), after (the outcome told to the core), cancel.
import { w } from '../wasm.js';
import { sleep } from '../hooks.js';
import { GateTimeoutError, BrokenCircuitError } from './errors.js';
/** @typedef {import('./slot.js').Slot} Slot */
import { T_NEW, T_HELD, T_GO, T_OUT, T_DONE, POLL, op, canWait, spent, go, enqueue, out, rounds, pump } from './slot.js';
import { REJECTED, GATE_PHASE, GATE_UNTIL, GATE_WAKE, PHASES } from '../gen/boundary.js';

/** One call's passage through the gate. */
export class Ticket {
  /** T_NEW, T_HELD, T_GO, T_OUT or T_DONE (js/gate/slot.js). */
  state = T_NEW;
  /** @type {Slot} its slot, from the first pass() */
  s = /** @type {any} */ (undefined);
  /** The core's tag while sent. */
  tag = 0;
  /** @type {unknown} once rejected */
  error;
  /** @type {string | undefined} why it was rejected: 'evicted', 'exhausted', 'deadline', 'aborted' */
  why;
  /** @type {(() => void) | undefined} settles the promise of pass() */
  wake;
  /** @type {any} while held: its deadline timer */
  timer;
  /** @type {any} (workerd) its poll timer */
  poll;
  /** @type {(() => void) | undefined} while held: its abort listener */
  onAbort;
  /** Its own backoff before the next admission (a failure below the threshold), ms. */
  delayMs = 0;
  /** When it took the adaptive limiter's token (NaN: it did not): the rate its attempt was paced by. */
  paced = NaN;
  /** When its attempt went, after the token's wait (its round trip, for the limiter). */
  sent = NaN;

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
    this.slot = slot;
    this.key = key;
    this.signal = signal;
    this.deadline = deadline;
    this.spend = spend;
    this.seq = seq;
    this.of = of;
    this.paces = pace;
  }

  /**
   * Resolves when the call may be sent; rejects when it must not be (see `why`).
   * @param {unknown} [_call]
   * @param {number} [delayMs] the wait the loop was told (its own backoff; carried from another endpoint's ticket by failover)
   * @returns {Promise<void>}
   */
  async pass(_call, delayMs = 0) {
    if (this.state === T_NEW) {
      let s = (this.s = this.slot());
      // Its own backoff (below the threshold), or the target's pause after a success
      // that said no request remains (Gate.pace), then the adaptive limiter's wait.
      const wait = Math.max(delayMs, this.delayMs, s.until - Date.now());
      if (wait > 0) await this.nap(wait);
      this.delayMs = 0;
      this.paced = NaN;
      if (s.limited && !s.dead) {
        // (negative: its token wait and a round trip end past its deadline; refused now, no token taken)
        const d = w.gate_acquire(s.h, (this.paced = Date.now()), this.deadline);
        if (d < 0) return this.nap(Infinity);
        try {
          if (d > 0) await this.nap(d);
        } catch (e) {
          if (!s.dead) w.gate_unacquire(s.h);
          throw e;
        }
        this.sent = Date.now();
      }
      s = this.s = this.slot();
      const r = op(s, w.gate_admit, Date.now());
      rounds(s); // (a hung probe may have timed out: a round this call did not wait through)
      if (r === REJECTED) {
        const until = s.st[GATE_UNTIL];
        const isolated = PHASES[s.st[GATE_PHASE]] === 'isolated';
        const ms = isolated ? Infinity : until < 0 ? 0 : Math.max(0, until - Date.now());
        Object.assign(this, { state: T_OUT, why: 'circuit-open', error: new BrokenCircuitError(this.key, ms, isolated) });
      } else if (r >= 0) go(this, r);
      else {
        enqueue(this, r);
        pump(s);
      }
    }
    return new Promise((resolve, reject) => {
      const done = (this.wake = () => (this.state === T_GO ? resolve() : reject(this.error)));
      if (this.state !== T_HELD) return done();
      if (!POLL) return;
      const poll = () => {
        if (this.state === T_HELD) op(this.s, w.gate_status), pump(this.s);
        if (this.state !== T_HELD) return done();
        const ms = this.waitMs();
        this.poll = setTimeout(poll, ms > 0 ? Math.min(ms, 250) : 25);
      };
      poll();
    });
  }

  /** Sleeps `ms` of this call's (abortable), unless that ends past its deadline. */
  nap(/** @type {number} */ ms) {
    if (Date.now() + ms > this.deadline) {
      this.why = 'deadline';
      return Promise.reject(new GateTimeoutError(this.key, 'deadline'));
    }
    return sleep(ms, this.signal);
  }

  /**
   * The sent call's outcome: `hurt` = the target failed; `retry` = the call
   * wants another attempt, `hintMs` a Retry-After. Returns '' when it gets
   * one (await `pass()` again: held while the circuit is open, or after its
   * own backoff while the target is below its threshold), else why it is
   * over: 'done' (not retried), 'exhausted' or 'deadline' (its own limits),
   * 'circuit-open' (failing fast).
   * @param {boolean} hurt
   * @param {boolean} retry
   * @param {number} [hintMs]
   */
  settle(hurt, retry, hintMs) {
    const s = this.s;
    let why = 'done';
    this.state = T_DONE;
    if (s.dead) return why; // the gate was freed while the call was out
    if (hurt) {
      op(s, w.gate_failed, this.tag, hintMs ?? NaN, Date.now());
      const closed = s.st[GATE_PHASE] === 0;
      rounds(s);
      if (retry) {
        const d = spent(this, hintMs);
        why = d === -2 ? 'vetoed' : d < 0 ? 'exhausted' : !canWait(this) ? 'deadline' : ''; // (-2: the delay hook gave up)
        if (why) {
          // out of attempts or time
        } else if (closed) [this.state, this.delayMs] = [T_NEW, d];
        else if (s.failFast) why = 'circuit-open';
        else enqueue(this, op(s, w.gate_hold));
      }
    } else op(s, w.gate_succeeded, this.tag, Date.now());
    pump(s);
    return why;
  }

  /**
   * The call ends without an outcome (aborted, or a callback of the caller
   * threw): it says nothing about the target and leaves the gate, sent or held.
   */
  cancel() {
    if (this.state === T_HELD) out(this, 'aborted', false, null);
    if (this.state !== T_GO) return;
    this.state = T_DONE;
    op(this.s, w.gate_cancelled, this.tag);
    pump(this.s);
  }

  /**
   * The lane's step after an attempt (js/engine/loop.js): reports the
   * outcome to the gate (the verdict's `hurt`: the target failed) and
   * decides whether the call gets another attempt (held while the circuit
   * is open, `held`; or after its own backoff below the threshold), and
   * what it waits.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Verdict} v the job's verdict ('' = another attempt wanted)
   * @param {import('../engine/loop.js').Outcome} o
   * @returns {import('../engine/loop.js').Decision & { held?: boolean }}
   */
  after(call, v, o) {
    // The gate was freed while the call was out: it ends with its own outcome.
    const s = this.s;
    if (s.dead) return { why: v.why || 'freed', delayMs: 0 };
    // A success saying no request remains holds the target's next calls until the reset.
    if (o.pace !== undefined && this.paces) this.of.pace(this.key, o.pace);
    // Every answer feeds the adaptive limiter: throttling slows it down (once per round trip: the
    // core ignores throttles of attempts paced before its last cut). A server-named wait delays this
    // call's retry only; the limiter stores none (docs/protections.md: what a server-named wait pauses).
    if (s.limited && !o.failed) {
      const throttled = s.throttleOn.has(/** @type {number} */ (o.status)) || (o.status === 503 && o.hintMs !== undefined);
      w.gate_throttled(s.h, +throttled, this.paced, this.sent, Date.now());
    }
    this.paced = this.sent = NaN; // (a held call's next attempt takes no token)
    let why = v.why;
    let ra = v.hurt ? o.hintMs : undefined;
    // The call returns at once; the target's round still waits (up to maxRetryAfterMs).
    const most = call.c.maxRetryAfterMs ?? Infinity;
    // (retryAfterOverMax 'clamp': a longer wait is waited as maxRetryAfterMs)
    if (/** @type {number} */ (ra) > most) [why, ra] = [why || (call.c.clamp ? '' : 'retry-after'), most];
    if (!why && call.c.budget && !call.c.budget.withdraw(Date.now())) why = 'budget';
    const end = this.settle(v.hurt, !why, ra);
    why ||= end;
    return why ? { why, delayMs: 0, hintMs: ra } : { why, delayMs: this.waitMs(), hintMs: ra, held: this.state === T_HELD };
  }

  /** Whether the target looks healthy now (a hedge may go): its circuit is closed. */
  healthy() {
    return this.of.state(this.key).state === 'closed';
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
    op(this.s, w.gate_status);
    return Math.max(this.delayMs, this.s.st[GATE_WAKE] - Date.now());
  }
}
