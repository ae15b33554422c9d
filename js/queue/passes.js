// When a queue's passes run (task-queue.js): on a macrotask after a
// wake-up, one at a time, then again after pollMs or when the next record
// falls due; less often while the store fails; and, without start(), as
// long as a drain() waits. What one pass does is the scheduler's
// (scheduler.js).
import { MAX_TIMER } from '../gen/boundary.js';

/** The longest wait between passes while the store keeps failing (unless pollMs is longer). */
const STORE_ERROR_CAP = 30000;

/** Runs `f` on the next macrotask (not a microtask: the event loop runs between passes); `cancel(handle)` undoes it. */
const G = /** @type {any} */ (globalThis);
/** @type {(f: () => void) => any} */
const soon = typeof G.setImmediate === 'function' ? (f) => G.setImmediate(f) : (f) => setTimeout(f, 0);
/** @type {(h: any) => void} */
const cancel = typeof G.clearImmediate === 'function' ? (h) => G.clearImmediate(h) : (h) => clearTimeout(h);

/** @typedef {{ next: number, wait: number, error: unknown }} Ended a pass's end: the next due time, the wait before the next pass, the store's error */

/**
 * The passes of one queue: started (a timer for the next one) or draining
 * (passes back to back until none has anything to do now).
 */
export class Passes {
  #pass;
  #busy;
  #pollMs;
  #storeError;
  #started = false;
  #storeErrors = 0; // consecutive passes the store failed
  /** @type {any} */
  #timer;
  /** @type {Promise<void> | undefined} the promise of the pass in progress */
  #ticking;
  /** @type {any} the macrotask that starts the next pass */
  #soon;
  #again = false;
  /** @type {{ resolve: (next: number) => void, reject: (e: unknown) => void }[]} drain() calls waiting for the queue to be idle */
  #drains = [];

  /**
   * @param {{ pass: () => Promise<number>, busy: () => number, pollMs: number, storeError: (error: unknown) => void }} o
   *   `pass` runs one pass and resolves with the time the next record falls due; `busy` counts the handlers in flight.
   */
  constructor(o) {
    this.#pass = o.pass;
    this.#busy = o.busy;
    this.#pollMs = o.pollMs;
    this.#storeError = o.storeError;
  }

  /** Whether start() was called and stop() was not. */
  get started() {
    return this.#started;
  }

  /** Whether passes run: started, or a drain() waits. */
  get on() {
    return this.#started || this.#drains.length > 0;
  }

  start() {
    this.#started = true;
    this.wake();
  }

  /** No more passes: a drain() in progress rejects with an AbortError; resolves once the pass in progress ended. */
  async stop() {
    this.#started = false;
    for (const d of this.#drains.splice(0)) d.reject(new DOMException('stop() was called before the drain ended', 'AbortError'));
    clearTimeout(this.#timer);
    this.#timer = undefined;
    cancel(this.#soon);
    this.#soon = undefined;
    await this.#ticking;
  }

  /**
   * Passes until one finds nothing to do now while no handler runs; resolves with the time the next record falls due.
   * @returns {Promise<number>}
   */
  drain() {
    return new Promise((resolve, reject) => {
      this.#drains.push({ resolve, reject });
      this.wake();
    });
  }

  /** The store is tried again at once, not after the wait of its failures (connectivity came back). */
  retryStore() {
    this.#storeErrors = 0;
  }

  /**
   * Asks for a pass: on the next macrotask (never straight from the last
   * one's promise: a pass that claims a task whose handler fails at once,
   * with a zero backoff, would otherwise chain passes on microtasks and
   * starve the event loop), or after the pass in progress.
   */
  wake() {
    if (!this.on) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#soon ??= soon(() => {
      this.#soon = undefined;
      this.#run();
    });
  }

  #run() {
    if (!this.on || this.#ticking) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#ticking = this.#pass()
      .then(
        (next) => this.#ended(next),
        (error) => this.#failed(error),
      )
      .then((ended) => this.#then(ended));
  }

  /**
   * A pass that read the store: the next one after pollMs, or when the next record falls due.
   * @param {number} next
   * @returns {Ended}
   */
  #ended(next) {
    this.#storeErrors = 0;
    const wait = Math.min(this.#pollMs, next - Date.now());
    // A custom store may hand back a NaN time: poll as usual then.
    return { next, wait: Number.isNaN(wait) ? this.#pollMs : wait, error: undefined };
  }

  /**
   * A pass the store failed: a store that is down is not hammered, the wait
   * doubles from pollMs per consecutive failed pass, up to max(pollMs, 30 s).
   * @param {unknown} error
   * @returns {Ended}
   */
  #failed(error) {
    this.#storeError(error);
    const n = Math.min(this.#storeErrors++, 31);
    return { next: NaN, wait: Math.min(this.#pollMs * 2 ** n, Math.max(this.#pollMs, STORE_ERROR_CAP)), error };
  }

  /** @param {Ended} ended */
  #then({ next, wait, error }) {
    this.#ticking = undefined;
    // A drain ends with a pass that found nothing to do now while no handler runs, or with a store error.
    if (error || (!this.#busy() && !this.#again && wait > 0)) {
      for (const d of this.#drains.splice(0)) error ? d.reject(error) : d.resolve(next);
    }
    if (!this.on) return;
    // Draining without start(): the next pass comes when a run ends, or now.
    if (this.#again || (!this.#started && !this.#busy())) {
      this.#again = false;
      return this.wake();
    }
    if (this.#started) this.#timer = setTimeout(() => this.#run(), Math.max(1, Math.min(wait, MAX_TIMER)));
  }
}
