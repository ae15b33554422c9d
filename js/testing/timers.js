// @ts-check
// The virtual time and the timers armed on it (the virtual clock,
// js/testing/clock.js): what the clock's setTimeout, setInterval,
// clearTimeout and clearInterval do, which timer fires next, and firing it.
// Timers are clamped and ordered as browsers do (WHATWG HTML "timer
// initialization steps"): a delay is ToInt32'd, negative becomes 0, nested
// more than 5 deep below 4 ms becomes 4; same due time, first armed first.
import { workerd } from '../hooks.js';
import { G } from './globals.js';
import { drain, macrotask } from './macrotask.js';

/** Virtual timer ids start far above any runtime's own (as @sinonjs/fake-timers' do). */
const FIRST_ID = 1e12;

/**
 * A timer; `due` is the virtual ms since the clock's start at which it fires.
 * @typedef {{ id: number, f: Function, args: unknown[], ms: number, due: number, order: number, repeat: boolean, nesting: number, handle: any }} Timer
 */

/** Whether timer `a` fires before `b`: earlier due time, then armed first. */
const before = (/** @type {Timer} */ a, /** @type {Timer} */ b) => a.due < b.due || (a.due === b.due && a.order < b.order);

/**
 * The virtual time and its pending timers. The live ones are kept by id (what
 * a clear and pending() read) and in a binary heap by due time (what fires
 * next): a clear only takes a timer out of the map, and it stays in the heap
 * until it surfaces, so that clearing is O(1) and the heap never searched.
 * Once the heap holds more dead timers than live ones it is rebuilt from the
 * live: a test that clears many long timers (a 60 s timeout per call) keeps
 * no more than twice what is armed.
 */
export class Timers {
  /** Live timers by id. @type {Map<number, Timer>} */
  live = new Map();
  /** The delays setTimeout and setInterval were asked for, in call order (the clock's `asked`). @type {number[]} */
  asked = [];
  /** Called when a timer is armed (run's wait for work outside the clock). @type {(() => void) | undefined} */
  wake;
  /** Armed timers, a binary heap by `before` (a cleared one stays until it surfaces). @type {Timer[]} */
  #heap = [];
  #ids = FIRST_ID;
  #order = 0;
  /** The nesting level of the timer task running (0 outside one). */
  #nesting = 0;
  // Node and Bun hand out timer objects (ref, unref, refresh); browsers, Deno and workerd numbers.
  #objects = typeof G.process?.versions?.node === 'string' && !G.Deno && !workerd();
  /**
   * A timer object's last timer, until it is cleared: what its refresh() arms again, fired or not (as
   * Node's does: a timeout that already fired is armed again; a cleared one is not).
   * @type {WeakMap<object, Timer>}
   */
  #armed = new WeakMap();

  /**
   * Virtual ms since the start, exact (it may carry a fraction). Time and due
   * times count from the start, not from the epoch: near 1.8e12 a double
   * holds a ms to 2.4e-4 only, so `start + 150.99995` would read as 151 in
   * Date.now() while the wait asked was 150.99995 (a test asserting
   * `Math.floor(delayMs)` would fail once in ~7,000 draws of a jitter).
   */
  elapsed = 0;

  /** @param {number} start the virtual time to start at, in epoch ms */
  constructor(start) {
    /** The time it started at, in epoch ms. */
    this.start = start;
    this.#whole = Math.floor(start);
    this.#fraction = start - this.#whole;
  }

  #whole;
  #fraction;

  /** The virtual time in epoch ms (rounded as doubles are, near the epoch's 1.8e12). */
  get now() {
    return this.start + this.elapsed;
  }

  /** The virtual time in whole epoch ms, rounded down exactly (what Date.now() reads). */
  wholeNow() {
    return this.#whole + Math.floor(this.#fraction + this.elapsed);
  }

  /**
   * setTimeout and setInterval (`repeat`): a new timer; its handle.
   * @param {unknown} f
   * @param {unknown} ms
   * @param {unknown[]} args
   * @param {boolean} repeat
   */
  set(f, ms, args, repeat) {
    this.asked.push(/** @type {number} */ (ms));
    return this.#arm(this.#ids++, f, ms, args, repeat);
  }

  /**
   * clearTimeout and clearInterval: whether `handle` was a live timer of the
   * clock (if not, it may be a real one armed before the clock was installed).
   * @param {unknown} handle
   */
  clear(handle) {
    const id = Number(handle);
    // (a timer object's refresh() arms nothing once it is cleared, fired or not)
    this.#armed.delete(this.live.get(id)?.handle ?? handle);
    const had = this.live.delete(id);
    this.#compact();
    return had;
  }

  /** Timers in the heap, live or cleared (tests: what a clear leaves). */
  get heaped() {
    return this.#heap.length;
  }

  /** Rebuilds the heap from the live timers once most of it is dead (amortised O(1) per clear). */
  #compact() {
    if (this.#heap.length <= 64 || this.#heap.length <= 2 * this.live.size) return;
    // (a sorted array is a heap; an interval's or a refreshed timer's old entry is not the live one)
    this.#heap = this.#heap.filter((t) => this.live.get(t.id) === t).sort((a, b) => (before(a, b) ? -1 : 1));
  }

  /** The next live timer, or undefined. */
  next() {
    const heap = this.#heap;
    while (heap.length > 0 && this.live.get(heap[0].id) !== heap[0]) pop(heap);
    return heap[0];
  }

  /**
   * Fires `t`, then lets reactions run: its microtasks as part of its task
   * (a timer they arm is nested in it), then a few real macrotasks.
   * @param {Timer} t
   */
  async step(t) {
    try {
      this.#fire(t);
      await macrotask();
    } finally {
      this.#nesting = 0;
    }
    await drain();
  }

  /** Drops every timer (the clock is uninstalled). */
  reset() {
    this.live.clear();
    this.#heap.length = 0;
  }

  /** Fires timer `t` at its due time (an interval is armed again after it ran, unless cleared). @param {Timer} t */
  #fire(t) {
    if (t.due > this.elapsed) this.elapsed = t.due;
    if (!t.repeat) this.live.delete(t.id);
    this.#nesting = t.nesting;
    try {
      t.f(...t.args);
    } finally {
      if (t.repeat && this.live.get(t.id) === t) this.#arm(t.id, t.f, t.ms, t.args, true, t.handle);
    }
  }

  /**
   * Arms timer `id` (a new one, or an interval's next run).
   * @param {number} id
   * @param {unknown} f
   * @param {unknown} delay
   * @param {unknown[]} args
   * @param {boolean} repeat
   * @param {any} [handle]
   */
  #arm(id, f, delay, args, repeat, handle) {
    if (typeof f !== 'function') throw new TypeError(`${repeat ? 'setInterval' : 'setTimeout'}: the callback must be a function`);
    // The HTML clamps: NaN and negative are 0, past a `long` wraps (ToInt32),
    // nested more than 5 deep below 4 ms is 4. A fraction is kept (browsers
    // truncate it, Node rounds up): waits then add up exactly.
    let ms = Number(delay);
    if (!(ms >= 0)) ms = 0;
    else if (ms >= 2 ** 31) ms = Math.max(0, ms | 0);
    if (this.#nesting > 5 && ms < 4) ms = 4;
    handle ??= this.#objects ? this.#object(id) : id;
    this.#queue({ id, f, args, ms, due: 0, order: 0, repeat, nesting: this.#nesting + 1, handle });
    return handle;
  }

  /** Queues timer `t` to fire `t.ms` from now (its `due`: elapsed ms), after every timer armed before it for the same time. @param {Timer} t */
  #queue(t) {
    t.due = this.elapsed + t.ms;
    t.order = this.#order++;
    this.live.set(t.id, t);
    if (typeof t.handle === 'object') this.#armed.set(t.handle, t);
    push(this.#heap, t);
    this.#compact();
    this.wake?.();
  }

  /** A Node-style timer object for id `id`. @param {number} id */
  #object(id) {
    const h = {
      ref: () => h,
      unref: () => h,
      hasRef: () => true,
      refresh: () => {
        const t = this.#armed.get(h);
        if (t) this.#queue({ ...t });
        return h;
      },
      [Symbol.toPrimitive]: () => id,
    };
    return h;
  }
}

/**
 * Adds `t` to the binary heap `heap`.
 * @param {Timer[]} heap
 * @param {Timer} t
 */
function push(heap, t) {
  let i = heap.push(t) - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!before(heap[i], heap[p])) break;
    [heap[i], heap[p]] = [heap[p], heap[i]];
    i = p;
  }
}

/**
 * Takes the first timer out of the binary heap `heap`.
 * @param {Timer[]} heap
 */
function pop(heap) {
  const top = heap[0];
  const last = /** @type {Timer} */ (heap.pop());
  if (heap.length > 0) {
    heap[0] = last;
    for (let i = 0; ; ) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let m = i;
      if (l < heap.length && before(heap[l], heap[m])) m = l;
      if (r < heap.length && before(heap[r], heap[m])) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  }
  return top;
}
