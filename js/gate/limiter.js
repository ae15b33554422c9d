// @ts-check
// The adaptive limiter alone (createLimiter): the core's Limiter behind a
// handle; a gate with `limit: 'adaptive'` uses the same state machine.
import { own, readAll, ms, abortSignal } from '../options.js';
import { w, check } from '../wasm.js';
import { sleep } from '../hooks.js';
import { GATE_MESSAGES } from '../gen/boundary.js';

/** Frees the limiters not freed by hand once they are garbage. */
const limiters = new FinalizationRegistry((/** @type {number} */ h) => w.limiter_free(h));

/** Acquire times kept for record() at most (older ones go first). */
const PACED_MAX = 10_000;
/** An acquire time older than this is dropped unanswered at the next record() (ms). */
const PACED_MS = 60_000;

/** acquire()'s options (AcquireOptions). */
export const ACQUIRE_OPTIONS = { signal: abortSignal(), maxWaitMs: ms(Infinity) };

/** The adaptive limiter alone; see gate/index.d.ts. */
export class AdaptiveLimiter {
  #h;
  /** The calls let go and not yet answered (oldest first), when each took its token and when it was let go: record() pairs them in order. */
  #paced = /** @type {[number, number][]} */ ([]);

  constructor() {
    this.#h = check(w.limiter_new(Date.now()), GATE_MESSAGES);
    limiters.register(this, this.#h, this);
  }

  #live() {
    if (!this.#h) throw new TypeError('this AdaptiveLimiter was freed');
    return this.#h;
  }

  /** @param {{ signal?: AbortSignal, maxWaitMs?: number }} [options] */
  async acquire(options) {
    const { signal, maxWaitMs: max } = readAll(own(options), ACQUIRE_OPTIONS);
    if (signal?.aborted) throw signal.reason;
    const h = this.#live();
    const now = Date.now();
    const d = w.limiter_acquire(h, now);
    if (d > max) {
      w.limiter_cancel(h);
      throw new RangeError(`the adaptive limiter's wait (${Math.ceil(d)} ms) exceeds maxWaitMs`);
    }
    if (d > 0) {
      try {
        await sleep(d, signal);
      } catch (e) {
        if (this.#h) w.limiter_cancel(h);
        throw e;
      }
    }
    if (this.#paced.push([now, Date.now()]) > PACED_MAX) this.#paced.shift();
  }

  /**
   * @param {boolean} throttled
   * @param {number} [retryAfterMs]
   */
  record(throttled, retryAfterMs) {
    if (typeof throttled !== 'boolean') throw new TypeError('throttled must be a boolean');
    if (retryAfterMs !== undefined && !(typeof retryAfterMs === 'number' && retryAfterMs >= 0)) {
      throw new (typeof retryAfterMs === 'number' ? RangeError : TypeError)('retryAfterMs must be a number >= 0 (Infinity included)');
    }
    const h = this.#live();
    const now = Date.now();
    while (this.#paced.length && this.#paced[0][1] < now - PACED_MS) this.#paced.shift();
    const [paced, sent] = this.#paced.shift() ?? [NaN, NaN];
    return w.limiter_record(h, +throttled, paced, sent, now);
  }

  get rate() {
    return w.limiter_rate(this.#live());
  }

  free() {
    if (!this.#h) return;
    limiters.unregister(this);
    w.limiter_free(this.#h);
    this.#h = 0;
    this.#paced.length = 0;
  }
}

/** A stand-alone adaptive limiter. */
export function createLimiter() {
  return new AdaptiveLimiter();
}
