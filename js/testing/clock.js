// @ts-check
// The virtual clock of `wasm-backoff/testing`: while installed it stands in
// for the globals every timer of the package (and of most code) reads at
// call time — setTimeout, clearTimeout, setInterval, clearInterval, Date
// (`Date.now()`, `new Date()`, `Date()`) and performance.now() — as
// @sinonjs/fake-timers does, in any runtime (Node, Deno, Bun, browsers,
// workerd). Time moves only when the test says so (tick, run,
// runUntilIdle), one timer at a time, each at its own due time, with a
// real macrotask between timers so promise reactions run as they would.
// Timers are clamped and ordered as browsers do (WHATWG HTML "timer
// initialization steps"): a delay is ToInt32'd, negative becomes 0, nested
// more than 5 deep below 4 ms becomes 4; same due time, first armed first.
import { must, readAll, flag, num, ms, own } from '../options.js';
import { workerd } from '../hooks.js';

const G = /** @type {any} */ (globalThis);
/** Marks the globals while a clock is installed (a second copy of the kit sees it too). */
const MARK = Symbol.for('wasm-backoff.testing.clock');
/** Virtual timer ids start far above any runtime's own (as @sinonjs/fake-timers' do). */
const FIRST_ID = 1e12;
/** Real macrotasks between timers: enough for reactions that hop through a few (a stream's read, a setImmediate). */
const ROUNDS = 5;
/** The default bound of run and runUntilIdle, in virtual ms (10 minutes). */
const MAX_MS = 600_000;
/** Timers fired at one virtual time before the clock calls it a loop (a timer re-arming at the same time). */
const SPIN = 10_000;

// The real macrotask, saved at import (before a test's own fakes): setImmediate
// where there is one (Node, Bun), else a MessageChannel (browsers, Deno,
// workerd), else a real setTimeout(0).
const realTimeout = G.setTimeout;
const realClear = G.clearTimeout;
const immediate = G.setImmediate;
/** @type {(() => void)[]} */
const posted = [];
/** @type {MessagePort | undefined} */
let port;
/** One real macrotask. @returns {Promise<void>} */
const macrotask = () =>
  new Promise((resolve) => {
    if (typeof immediate === 'function') return void immediate(resolve);
    if (typeof MessageChannel === 'function') {
      if (!port) {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => /** @type {() => void} */ (posted.shift())();
        port = ch.port2;
      }
      posted.push(resolve);
      return port.postMessage(0);
    }
    realTimeout(resolve, 0);
  });

/** Lets every pending promise reaction run (a few real macrotasks; no virtual time passes). */
export async function drain() {
  for (let i = 0; i < ROUNDS; i++) await macrotask();
}

/**
 * Whether `p` has settled, once pending reactions ran (no virtual time passes).
 * @param {Promise<unknown>} p
 */
export async function settled(p) {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await drain();
  return done;
}

/**
 * @typedef {{ id: number, f: Function, args: unknown[], ms: number, due: number, order: number, repeat: boolean, nesting: number, handle: any }} Timer
 */

/** Whether timer `a` fires before `b`: earlier due time, then armed first. */
const before = (/** @type {Timer} */ a, /** @type {Timer} */ b) => a.due < b.due || (a.due === b.due && a.order < b.order);

/** virtualClock()'s options (VirtualClockOptions). */
export const CLOCK_OPTIONS = { now: num('a finite number', Number.isFinite, 0), performance: flag(true) };

/** tick()'s argument. */
const finiteMs = ms(0, false, true);

/** The options of run() and runUntilIdle() (RunOptions; runUntilIdle takes maxMs only). */
export const CLOCK_RUN_OPTIONS = {
  maxMs: ms(MAX_MS),
  graceMs: num('a number in [0, 2^31)', (v) => v >= 0 && v < 2 ** 31, 1000),
};

/**
 * Installs a virtual clock at once (see types/testing/index.d.ts).
 * @param {{ now?: number, performance?: boolean }} [options]
 */
export function virtualClock(options) {
  const { now: start, performance } = readAll(own(options), CLOCK_OPTIONS);
  const perf = performance ? G.performance : undefined;
  if (G[MARK]) throw new Error('a virtual clock is already installed: uninstall() it first');
  const saved = {
    setTimeout: G.setTimeout,
    clearTimeout: G.clearTimeout,
    setInterval: G.setInterval,
    clearInterval: G.clearInterval,
    Date: G.Date,
  };
  /** @type {DateConstructor} */
  const RealDate = saved.Date;
  const perfOwn = perf && Object.getOwnPropertyDescriptor(perf, 'now');
  const perfAt = typeof perf?.now === 'function' ? perf.now() : 0;
  // Node and Bun hand out timer objects (ref, unref, refresh); browsers, Deno and workerd numbers.
  const objects = typeof G.process?.versions?.node === 'string' && !G.Deno && !workerd();

  let now = start;
  let ids = FIRST_ID;
  let order = 0;
  /** The nesting level of the timer task running (0 outside one). */
  let nesting = 0;
  let installed = true;
  /** Whether tick, run or runUntilIdle is moving the clock. */
  let moving = false;
  /** Live timers by id. @type {Map<number, Timer>} */
  const live = new Map();
  /** A binary heap of armed timers (a cleared one stays until it surfaces). @type {Timer[]} */
  const heap = [];
  /** @type {number[]} */
  const asked = [];
  /** Called when a timer is armed (run's wait for work outside the clock). @type {(() => void) | undefined} */
  let wake;

  /** @param {Timer} t */
  const push = (t) => {
    let i = heap.push(t) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(heap[i], heap[p])) break;
      [heap[i], heap[p]] = [heap[p], heap[i]];
      i = p;
    }
  };
  const pop = () => {
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
  };
  /** The next live timer, or undefined. */
  const next = () => {
    while (heap.length > 0 && live.get(heap[0].id) !== heap[0]) pop();
    return heap[0];
  };

  /**
   * Arms timer `id` (a new one, or an interval's next run).
   * @param {number} id
   * @param {unknown} f
   * @param {unknown} delay
   * @param {unknown[]} args
   * @param {boolean} repeat
   * @param {any} [handle]
   */
  function arm(id, f, delay, args, repeat, handle) {
    if (typeof f !== 'function') throw new TypeError(`${repeat ? 'setInterval' : 'setTimeout'}: the callback must be a function`);
    // The HTML clamps: NaN and negative are 0, past a `long` wraps (ToInt32),
    // nested more than 5 deep below 4 ms is 4. A fraction is kept (browsers
    // truncate it, Node rounds up): waits then add up exactly.
    let ms = Number(delay);
    if (!(ms >= 0)) ms = 0;
    else if (ms >= 2 ** 31) ms = Math.max(0, ms | 0);
    if (nesting > 5 && ms < 4) ms = 4;
    handle ??= objects ? timerObject(id) : id;
    queue({ id, f, args, ms, due: 0, order: 0, repeat, nesting: nesting + 1, handle });
    return handle;
  }

  /** Queues timer `t` to fire `t.ms` from now, after every timer armed before it for the same time. @param {Timer} t */
  function queue(t) {
    t.due = now + t.ms;
    t.order = order++;
    live.set(t.id, t);
    push(t);
    wake?.();
  }

  /** A Node-style timer object for id `id`. @param {number} id */
  function timerObject(id) {
    const h = {
      ref: () => h,
      unref: () => h,
      hasRef: () => true,
      refresh() {
        const t = live.get(id);
        if (t) queue({ ...t });
        return h;
      },
      [Symbol.toPrimitive]: () => id,
    };
    return h;
  }

  /** @param {unknown} handle */
  function clear(handle) {
    const id = Number(handle);
    if (live.delete(id)) return;
    // (a real timer armed before the clock was installed)
    if (handle != null) saved.clearTimeout.call(G, handle);
  }

  /** Fires timer `t` at its due time (an interval is armed again after it ran, unless cleared). @param {Timer} t */
  function fire(t) {
    if (t.due > now) now = t.due;
    if (!t.repeat) live.delete(t.id);
    nesting = t.nesting;
    try {
      t.f(...t.args);
    } finally {
      if (t.repeat && live.get(t.id) === t) arm(t.id, t.f, t.ms, t.args, true, t.handle);
    }
  }

  /**
   * Fires `t`, then lets reactions run: its microtasks as part of its task
   * (a timer they arm is nested in it), then a few real macrotasks.
   * @param {Timer} t
   */
  async function step(t) {
    try {
      fire(t);
      await macrotask();
    } finally {
      nesting = 0;
    }
    await drain();
  }

  /**
   * Runs `body` as the one advance of the clock at a time.
   * @template T
   * @param {string} what
   * @param {() => Promise<T>} body
   */
  async function advance(what, body) {
    if (!installed) throw new Error(`${what}: the clock is uninstalled`);
    if (moving) throw new Error(`${what}: the clock is already moving (await the previous tick, run or runUntilIdle)`);
    moving = true;
    try {
      return await body();
    } finally {
      moving = false;
    }
  }

  /** The bound of run and runUntilIdle, in virtual ms. @param {unknown} opts @param {string} what */
  const bound = (opts, what) => {
    return readAll(own(opts, `${what} options`), CLOCK_RUN_OPTIONS);
  };

  /**
   * Fires `t` (step), unless timers keep firing without time moving: a
   * timer that re-arms itself at the same time (a zero-delay loop) would
   * never let tick, run or runUntilIdle return.
   * @param {Timer} t
   * @param {{ at: number, n: number }} spin the time of the last timer fired and how many fired at it
   */
  async function stepOnce(t, spin) {
    if (t.due !== spin.at) [spin.at, spin.n] = [t.due, 0];
    if (++spin.n > SPIN)
      throw new Error(`${SPIN} timers fired at ${t.due - start} ms of virtual time: one re-arms at the same time without end`);
    await step(t);
  }

  /** @param {number} ms */
  const tick = (ms) =>
    advance('tick', async () => {
      const end = now + must(ms, 'ms', finiteMs);
      const spin = { at: NaN, n: 0 };
      await drain();
      for (let t = next(); t && t.due <= end; t = next()) await stepOnce(t, spin);
      if (end > now) now = end;
      return now;
    });

  // (Date.now() is a whole number, as the real one: virtual time may carry a fraction)
  const epoch = () => Math.floor(now);
  function VirtualDate(/** @type {any[]} */ ...a) {
    if (!new.target) return new RealDate(epoch()).toString();
    return Reflect.construct(RealDate, a.length > 0 ? a : [epoch()], new.target);
  }
  VirtualDate.prototype = RealDate.prototype;
  Object.setPrototypeOf(VirtualDate, RealDate);
  Object.defineProperties(VirtualDate, {
    name: { value: 'Date' },
    length: { value: 7 },
    now: { value: epoch, writable: true, configurable: true },
  });

  function uninstall() {
    if (!installed) return;
    installed = false;
    Object.assign(G, saved);
    delete G[MARK];
    try {
      if (perfOwn) Object.defineProperty(perf, 'now', perfOwn);
      else if (perf) delete perf.now;
    } catch {}
    live.clear();
    heap.length = 0;
  }

  Object.assign(G, {
    setTimeout: (/** @type {unknown} */ f, /** @type {unknown} */ ms = 0, /** @type {unknown[]} */ ...args) => {
      asked.push(/** @type {number} */ (ms));
      return arm(ids++, f, ms, args, false);
    },
    setInterval: (/** @type {unknown} */ f, /** @type {unknown} */ ms = 0, /** @type {unknown[]} */ ...args) => {
      asked.push(/** @type {number} */ (ms));
      return arm(ids++, f, ms, args, true);
    },
    clearTimeout: clear,
    clearInterval: clear,
    Date: VirtualDate,
    [MARK]: true,
  });
  try {
    if (perf) Object.defineProperty(perf, 'now', { value: () => perfAt + (now - start), writable: true, configurable: true });
  } catch {}

  const clock = {
    /** The virtual time in epoch ms, exact (`Date.now()` reads it rounded down). */
    now: () => now,
    tick,
    tickAsync: tick,
    /** @param {{ maxMs?: number }} [opts] */
    runUntilIdle: (opts) =>
      advance('runUntilIdle', async () => {
        const { maxMs } = bound(opts, 'runUntilIdle');
        const end = now + maxMs;
        const spin = { at: NaN, n: 0 };
        for (let t = (await drain(), next()); t; t = next()) {
          if (t.due > end)
            throw new Error(
              `runUntilIdle: ${live.size} timer(s) still pending after ${maxMs} ms of virtual time (the next due in ${t.due - now} ms): one that re-arms (an interval, a poll) never lets the clock idle; clear it, or pass a larger maxMs`,
            );
          await stepOnce(t, spin);
        }
        return now;
      }),
    /**
     * @template T
     * @param {PromiseLike<T> | T} p
     * @param {{ maxMs?: number, graceMs?: number }} [opts]
     * @returns {Promise<Awaited<T>>}
     */
    run: (p, opts) =>
      /** @type {Promise<Awaited<T>>} */ (
        advance('run', async () => {
          const { maxMs, graceMs } = bound(opts, 'run');
          let done = false;
          const seen = Promise.resolve(p).then(
            () => (done = true),
            () => (done = true),
          );
          const end = now + maxMs;
          const spin = { at: NaN, n: 0 };
          for (await drain(); !done; await drain()) {
            let t = next();
            if (!t && graceMs > 0) {
              // Nothing pending: work outside the clock (real I/O) may still settle it or arm a timer.
              /** @type {any} */
              let real;
              await new Promise((resolve) => {
                wake = /** @type {() => void} */ (resolve);
                real = realTimeout(resolve, graceMs);
                seen.then(resolve);
              });
              wake = undefined;
              realClear(real);
              if (done) break;
              t = next();
            }
            if (!t)
              throw new Error('run: stuck: the promise has not settled and no timer is pending (it waits on something no timer ends)');
            if (t.due > end) throw new Error(`run: not settled after ${maxMs} ms of virtual time (${live.size} timer(s) pending)`);
            await stepOnce(t, spin);
          }
          return await p;
        })
      ),
    /** Timers pending now. */
    pending: () => live.size,
    asked,
    settled,
    uninstall,
  };
  if (Symbol.dispose) /** @type {any} */ (clock)[Symbol.dispose] = uninstall;
  return clock;
}
