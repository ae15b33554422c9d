// @ts-check
// A quota's lane (js/quota/index.js), around the call's lane (the plain
// schedule, a gate's ticket, failover's): the inner lane lets each attempt
// go (its wait, its hold), then the attempt reserves its units of its key's
// budgets (js/quota/bucket.js) and waits until they are there, unless that
// would end past the call's deadline: then it is refused at once, nothing
// reserved, nothing sent. While it waits, the answers of other calls may
// take budget off (another client spends on the same key) or hold the key
// (a 429's wait): when its wait ends it waits that much more, and is
// refused (its units given back) if that would now end past its deadline.
// After each answer the key's budgets follow its headers; the decision to
// retry, and after what wait, is the inner lane's.
import { sleep } from '../hooks.js';
import { said } from './headers.js';
import { QuotaError } from './errors.js';

export class QuotaLane {
  /** An attempt of this call has gone (its answer's headers are read). */
  #went = false;
  /** The last reservation is waiting (its units are given back if the wait is given up). */
  #waiting = false;
  /** Why this lane refused (the inner lane's own otherwise). @type {string | undefined} */
  #why;
  /** The ms this call waited for its budget, over its attempts. */
  waitedMs = 0;
  /** The answers whose headers the budgets followed. @type {WeakSet<object>} */
  #heard = new WeakSet();

  /**
   * @param {import('../engine/loop.js').Lane} inner
   * @param {import('./index.js').Budgets} b
   * @param {string} key
   * @param {number} cost tokens per attempt
   */
  constructor(inner, b, key, cost) {
    this.inner = inner;
    this.b = b;
    this.key = key;
    this.cost = cost;
  }

  /** Why `pass` refused: the deadline (this lane's), or the inner lane's reason. */
  get why() {
    return this.#why ?? this.inner.why;
  }

  /**
   * The inner lane's pass, then the attempt's budget.
   * @param {import('../engine/call.js').Call} call
   * @param {number} delayMs
   * @returns {Promise<void> | undefined}
   */
  pass(call, delayMs) {
    const held = this.inner.pass(call, delayMs);
    return held ? held.then(() => this.#budget(call)) : this.#budget(call);
  }

  /**
   * Reserves the attempt's units and waits for them (undefined: they are
   * there, no wait); throws QuotaError when that wait would end past the
   * call's deadline (or never: a limit of 0).
   * @param {import('../engine/call.js').Call} call
   * @returns {Promise<void> | undefined}
   */
  #budget(call) {
    const w = this.#due(call);
    this.#units('take');
    this.#waiting = true;
    if (!w) return void this.#go();
    return this.#wait(call, w, call.signal).then(
      () => this.#go(),
      (e) => {
        this.#giveBack();
        throw e;
      },
    );
  }

  /** A send's units, taken from the budgets (reserved), sent, or given back. @param {'take' | 'go' | 'give'} op */
  #units(op) {
    this.b.requests[op](1);
    this.b.tokens[op](this.cost);
  }

  /** The ms until the key's budgets have a send's units, from `now` (Infinity: never). @param {number} now */
  #wait0(now) {
    const { b, cost } = this;
    return Math.max(b.until - now, b.requests.wait(now, 1), b.tokens.wait(now, cost), 0);
  }

  /**
   * The wait for a send's units from now; throws QuotaError when it would
   * end past the call's deadline (or never: a limit of 0).
   * @param {import('../engine/call.js').Call} call
   */
  #due(call) {
    const now = Date.now();
    const w = this.#wait0(now);
    // (a wait that ends at the deadline is past it: the deadline's abort comes first)
    if (w === Infinity || (w > 0 && now + w >= call.end)) {
      this.#why = 'deadline';
      throw new QuotaError(this.key, w);
    }
    return w;
  }

  /**
   * Waits `w` ms, then as much more as the answers that came meanwhile
   * took off the budgets or held the key; refused when that would end past
   * the deadline (or cut short by `signal`).
   * @param {import('../engine/call.js').Call} call
   * @param {number} w
   * @param {AbortSignal | undefined} signal
   */
  async #wait(call, w, signal) {
    const { b } = this;
    for (;;) {
      const from = [b.requests.lowered, b.tokens.lowered];
      this.waitedMs += w;
      await sleep(w, signal, call.ds);
      const now = Date.now();
      w = Math.max(b.until - now, b.requests.later(from[0]), b.tokens.later(from[1]), 0);
      if (!w) return;
      if (w === Infinity || now + w >= call.end) {
        this.#why = 'deadline';
        throw new QuotaError(this.key, w);
      }
    }
  }

  /** The reservation goes. */
  #go() {
    this.#waiting = false;
    this.#went = true;
    this.#units('go');
  }

  /** A reservation still waiting gives its units back (its attempt will not go). */
  #giveBack() {
    if (!this.#waiting) return;
    this.#waiting = false;
    this.#units('give');
  }

  /**
   * The key's budgets follow the answer's headers (and a 429's wait, up
   * to maxRetryAfterMs, holds the key); the decision is the inner lane's.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Verdict} v
   * @param {import('../engine/loop.js').Outcome} o
   */
  after(call, v, o) {
    this.heard(call, o);
    return this.inner.after(call, v, o);
  }

  /**
   * An answer of this call (the attempt's, or a hedge's as it comes: a
   * racer's 429 holds the key while the race goes on): the key's budgets
   * follow its headers, once per answer.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   */
  heard(call, o) {
    const { b } = this;
    const res = o.res;
    if (!res || !this.#went || this.#heard.has(o)) return;
    this.#heard.add(o);
    const now = Date.now();
    const { requests: r, tokens: t } = said(res.headers, now);
    if (r) b.requests.told(now, r.limit, r.remaining, r.resetMs);
    if (t) b.tokens.told(now, t.limit, t.remaining, t.resetMs);
    if (o.status === 429 && o.hintMs !== undefined) {
      b.until = Math.max(b.until, now + Math.min(o.hintMs, call.c.maxRetryAfterMs ?? Infinity));
    }
  }

  /** The call ends without an outcome: a reservation still waiting is given back. */
  cancel() {
    this.#giveBack();
    this.inner.cancel?.();
  }

  /** Whether the inner lane's target looks healthy (a hedge may go). */
  healthy() {
    return this.inner.healthy?.() ?? true;
  }

  /** Whether a hedge's request and tokens are there now (a hedge never waits for them: it would go late). */
  spare() {
    return this.#wait0(Date.now()) <= 0;
  }

  /** The hedge goes (right after `spare`): its units are taken from the budgets, as a sent attempt's. */
  spend() {
    this.#units('take');
    this.#units('go');
  }

  /**
   * Another send inside an attempt (auth's, after a refresh): its units
   * reserved and waited for as an attempt's, refused (QuotaError) when the
   * wait would end past the deadline, given back if `signal` aborts first.
   * (Its own reservation, not the lane's: each racer of a hedge may resend.)
   * @param {import('../engine/call.js').Call} call
   * @param {AbortSignal | undefined} signal
   */
  async again(call, signal) {
    const w = this.#due(call);
    this.#units('take');
    try {
      if (w) await this.#wait(call, w, signal);
    } catch (e) {
      this.#units('give');
      throw e;
    }
    this.#units('go');
  }

  /** The inner lane's, and how long the quota held the call (`quotaMs`), for onDone. */
  about() {
    const more = this.inner.about?.();
    return this.waitedMs ? { ...more, quotaMs: this.waitedMs } : more;
  }
}
