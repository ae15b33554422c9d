// @ts-check
// RetryBudget: retries may be at most a fraction of recent traffic plus a
// small floor (Finagle's and tower's TpsBudget, Envoy's retry budgets). It
// is a sliding window of ten slots over `ttlMs`.
//
// Plain JavaScript in a subpath of its own (`wasm-backoff/budget`), unlike
// the schedules: in wasm it was ~0.9 KB of module (twiggy: its constructor,
// operations and shims) that every fetchWithBackoff user downloaded, for
// thirty lines of additions over ten numbers, and a handle to free. Here it
// owns nothing a caller must free and costs only its users. The fetch driver
// takes any object with deposit() and withdraw().

/** Slots of the sliding window (a shared budget's credit expires by the same steps). */
export const SLOTS = 10;

import { own, readAll, must, ms } from './options.js';

/** RetryBudget's options (RetryBudgetOptions), in the order they are checked: tower's defaults. */
export const BUDGET_OPTIONS = {
  ttlMs: ms(10000, true, true),
  minPerSec: ms(10, false, true),
  retryRatio: ms(0.2, false, true),
};

export class RetryBudget {
  #slot;
  #floor;
  #ratio;
  #deposits = new Float64Array(SLOTS);
  #withdrawals = new Float64Array(SLOTS);
  #current = 0;
  /** Index of the current slot on the time axis (floor(now / slot)). */
  #epoch = -Infinity;

  /** @param {import('../types/budget/index.js').RetryBudgetOptions} [options] */
  constructor(options) {
    // Own properties only, each read once (as every options object here).
    const { ttlMs, minPerSec, retryRatio } = readAll(own(options), BUDGET_OPTIONS);
    this.#slot = ttlMs / SLOTS;
    this.#floor = (minPerSec * ttlMs) / 1000;
    this.#ratio = retryRatio;
  }

  /**
   * Moves the window to `now`, forgetting slots older than the ttl. A clock
   * that goes back a little (less than the window) stays put; one that goes
   * back further, after a jump ahead (a timestamp from another clock, a
   * mistaken +1 day), starts the window again at `now` rather than
   * refusing retries until real time catches up.
   */
  /** This budget, made by its constructor (an Object.create(RetryBudget.prototype) has none of its fields). */
  static #own(/** @type {RetryBudget} */ b) {
    if (!(#slot in b)) throw new TypeError('budget must be a RetryBudget made by new RetryBudget()');
    return b;
  }

  #advance(/** @type {number} */ now) {
    if (!Number.isFinite(now)) throw new RangeError('nowMs must be a finite number (ms)');
    const epoch = Math.floor(now / this.#slot);
    if (this.#epoch === -Infinity || epoch < this.#epoch - SLOTS) {
      this.#epoch = epoch;
      this.#deposits.fill(0);
      this.#withdrawals.fill(0);
    }
    for (let n = Math.min(epoch - this.#epoch, SLOTS); n > 0; n--) {
      this.#current = (this.#current + 1) % SLOTS;
      this.#deposits[this.#current] = this.#withdrawals[this.#current] = 0;
    }
    if (epoch > this.#epoch) this.#epoch = epoch;
  }

  /** Records one request (a first attempt), or `count` of them. */
  deposit(now = Date.now(), count = 1) {
    if (count !== 1) must(count, 'count', ms(1, false, true));
    RetryBudget.#own(this).#advance(now);
    this.#deposits[this.#current] += count;
  }

  /** Retries available now (may be fractional; one retry needs >= 1). */
  available(now = Date.now()) {
    RetryBudget.#own(this).#advance(now);
    let d = 0;
    let w = 0;
    for (let i = 0; i < SLOTS; i++) (d += this.#deposits[i]), (w += this.#withdrawals[i]);
    const a = this.#floor + this.#ratio * d - w;
    // biome-ignore lint/complexity/useMathMinMax: a NaN (never expected) reads as 0 here; Math.max would keep it
    return a > 0 ? a : 0;
  }

  /** Takes one retry if the budget has one. */
  withdraw(now = Date.now()) {
    const ok = this.available(now) >= 1;
    if (ok) this.#withdrawals[this.#current]++;
    return ok;
  }
}
