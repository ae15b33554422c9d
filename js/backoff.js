// @ts-check
// The public `Backoff`: a handle to a schedule in the wasm module's slab.
// The options are read here (types; `write` in wasm.js), the module checks
// ranges, applies presets and does all the arithmetic.
import { own, must, required, int } from './options.js';
import { w, mem, write, record, check, OPTS, OUT, SCRATCH } from './wasm.js';
import {
  CHUNK,
  COUNTER_ATTEMPT,
  COUNTER_ELAPSED_MS,
  COUNTER_MAX_ATTEMPTS,
  COUNTER_RESETS,
  COUNTER_TOTAL_RETRIES,
  F_FALLBACK_ATTEMPTS,
  F_MAX_ELAPSED_MS,
  MAX_RETRY,
  SCHEDULE,
} from './gen/boundary.js';
import { MAX_ATTEMPTS } from './gen/policy.js';

/**
 * Frees the schedules that were not freed by hand once they are garbage
 * (the safety net: `free()` / `using` release at once). Every supported
 * runtime has FinalizationRegistry.
 */
const registry = new FinalizationRegistry(w.backoff_free);

/**
 * A new schedule from `options`; its handle. Throws TypeError / RangeError.
 * @param {unknown} options
 * @param {() => number} [seed] the seed when the options give none
 */
export const schedule = (options, seed) => {
  write(own(options), SCHEDULE, seed);
  return check(w.backoff_new());
};

/**
 * The fetch driver's schedule: the options' schedule fields checked now, as
 * a record that the first retry of each call loads. Five attempts unless
 * the options or the preset say otherwise; `maxElapsedMs` is the driver's
 * wall-clock deadline, not a sum of delays. Also answers the schedule's
 * attempt limit (Infinity for none), which the attempt header names.
 * @param {Record<string, any>} o from `own`
 * @returns {[number[], number]}
 */
export function plan(o) {
  write(o, SCHEDULE, () => 0);
  const m = mem();
  m[OPTS + F_MAX_ELAPSED_MS] = NaN;
  m[OPTS + F_FALLBACK_ATTEMPTS] = MAX_ATTEMPTS;
  const rec = record(SCHEDULE);
  const h = check(w.backoff_new());
  const max = counters(h)[OUT + COUNTER_MAX_ATTEMPTS];
  w.backoff_free(h);
  return [rec, max];
}

/** @param {number} h */
const counters = (h) => (w.backoff_counters(h), mem());

/** A retry schedule; see index.d.ts for the options and their defaults. */
export class Backoff {
  #h;

  /** @param {import('../types/index.js').BackoffOptions} [options] */
  constructor(options) {
    this.#h = schedule(options);
    registry.register(this, this.#h, this);
  }

  /** The handle, or a TypeError once freed (a freed slot may be someone else's). */
  get #live() {
    if (!this.#h) throw new TypeError('this Backoff was freed');
    return this.#h;
  }

  /** The delay in ms before the next retry, or `undefined` to give up. */
  next() {
    const d = w.backoff_next(this.#live, NaN, NaN);
    return d < 0 ? undefined : d;
  }

  /** `for (const delay of backoff)`: the delays until it gives up (as `next()`). */
  *[Symbol.iterator]() {
    for (let d; (d = this.next()) !== undefined; ) yield d;
  }

  /** Back to the first retry (what a success does). */
  reset() {
    w.backoff_reset(this.#live);
  }

  /** Retries handed out since the last reset. */
  get attempt() {
    return counters(this.#live)[OUT + COUNTER_ATTEMPT];
  }

  /** Retries handed out since construction. */
  get totalRetries() {
    return counters(this.#live)[OUT + COUNTER_TOTAL_RETRIES];
  }

  /** Calls of reset() after a retry, plus slotted wraps past the ceiling. */
  get resets() {
    return counters(this.#live)[OUT + COUNTER_RESETS];
  }

  /** Sum of the delays handed out since the last reset, in ms. */
  get elapsedMs() {
    return counters(this.#live)[OUT + COUNTER_ELAPSED_MS];
  }

  /** Releases the schedule's memory in the module now; the object is unusable afterwards. */
  free() {
    const h = this.#h;
    if (h) {
      this.#h = 0;
      registry.unregister(this);
      w.backoff_free(h);
    }
  }

  /** `using b = new Backoff()` frees at the end of the block (every supported runtime has Symbol.dispose). */
  [Symbol.dispose]() {
    this.free();
  }

  /**
   * `count` independent draws of the delay before retry `attempt` (1 = first retry).
   * @param {import('../types/index.js').BackoffOptions | undefined} options
   * @param {number} attempt
   * @param {number} count
   */
  static sample(options, attempt, count) {
    const a = must(attempt, 'attempt', required(int(1, MAX_RETRY)));
    const n = must(count, 'count', required(int(0, 16777216)));
    const h = schedule(options);
    try {
      const out = new Float64Array(n);
      // The module fills a fixed scratch buffer; copy each chunk out.
      for (let i = 0; i < n; i += CHUNK) {
        const k = Math.min(CHUNK, n - i);
        w.backoff_draws(h, a, k);
        out.set(mem().subarray(SCRATCH, SCRATCH + k), i);
      }
      return out;
    } finally {
      w.backoff_free(h);
    }
  }
}
