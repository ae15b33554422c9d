// @ts-check
// How a virtual clock moves (js/testing/clock.js): tick, run and
// runUntilIdle fire the timers due one at a time, each at its own due time
// (Timers#step, with real macrotasks after each so that promise reactions
// run between two timers as they would between real ones), each within a
// bound of virtual time, so that a test that would wait for ever fails with
// what was pending instead.
import { must, readAll, num, ms, own } from '../options.js';
import { drain, realClear, realTimeout } from './macrotask.js';
/** @typedef {import('./timers.js').Timers} Timers */
/** @typedef {import('./timers.js').Timer} Timer */

/** The default bound of run and runUntilIdle, in virtual ms (10 minutes). */
const MAX_MS = 600_000;
/** run's grace is counted in real timeouts of this many ms (moves.run). */
const GRACE_STEP = 10;
/** Timers fired at one virtual time before the clock calls it a loop (a timer re-arming at the same time). */
const SPIN = 10_000;

/** tick()'s argument. */
const finiteMs = ms(0, false, true);

/** The options of run() and runUntilIdle() (RunOptions; runUntilIdle takes maxMs only). */
export const CLOCK_RUN_OPTIONS = {
  maxMs: ms(MAX_MS),
  graceMs: num('a number in [0, 2^31)', (v) => v >= 0 && v < 2 ** 31, 1000),
};

/** The bound of run and runUntilIdle, in virtual ms. @param {unknown} opts @param {string} what */
const bound = (opts, what) => {
  return readAll(own(opts, `${what} options`), CLOCK_RUN_OPTIONS);
};

/**
 * clock.tick(ms): fires every timer due within `ms`, then sets the time to its end.
 * @param {Timers} timers
 * @param {number} ms
 */
export async function tick(timers, ms) {
  const end = timers.elapsed + must(ms, 'ms', finiteMs);
  const spin = { at: NaN, n: 0 };
  await drain();
  for (let t = timers.next(); t && t.due <= end; t = timers.next()) await stepOnce(timers, t, spin);
  if (end > timers.elapsed) timers.elapsed = end;
  return timers.now;
}

/**
 * clock.runUntilIdle(opts): fires timers until none is left, within maxMs.
 * @param {Timers} timers
 * @param {unknown} opts
 */
export async function runUntilIdle(timers, opts) {
  const { maxMs } = bound(opts, 'runUntilIdle');
  const end = timers.elapsed + maxMs;
  const spin = { at: NaN, n: 0 };
  for (let t = (await drain(), timers.next()); t; t = timers.next()) {
    if (t.due > end)
      throw new Error(
        `runUntilIdle: ${timers.live.size} timer(s) still pending after ${maxMs} ms of virtual time (the next due in ${t.due - timers.elapsed} ms): one that re-arms (an interval, a poll) never lets the clock idle; clear it, or pass a larger maxMs`,
      );
    await stepOnce(timers, t, spin);
  }
  return timers.now;
}

/**
 * clock.run(p, opts): fires timers until `p` settles, within maxMs; its value.
 * @template T
 * @param {Timers} timers
 * @param {PromiseLike<T> | T} p
 * @param {unknown} opts
 * @returns {Promise<Awaited<T>>}
 */
export async function run(timers, p, opts) {
  const { maxMs, graceMs } = bound(opts, 'run');
  let done = false;
  const seen = Promise.resolve(p).then(
    () => (done = true),
    () => (done = true),
  );
  const end = timers.elapsed + maxMs;
  const spin = { at: NaN, n: 0 };
  for (await drain(); !done; await drain()) {
    let t = timers.next();
    if (!t && graceMs > 0) {
      // Nothing pending: work outside the clock (real I/O) may still settle it or arm a timer.
      /** @type {any} */
      let real;
      await new Promise((resolve) => {
        timers.wake = /** @type {() => void} */ (resolve);
        seen.then(resolve);
        // In steps of GRACE_STEP real ms, each a turn of the event loop: a
        // process the machine paused for longer than graceMs (a busy CI)
        // spends one step, not the whole grace, before the work it waits
        // for gets a turn.
        const step = Math.min(graceMs, GRACE_STEP);
        let left = Math.ceil(graceMs / step);
        const wait = () => (--left > 0 ? (real = realTimeout(wait, step)) : resolve(undefined));
        real = realTimeout(wait, step);
      });
      timers.wake = undefined;
      realClear(real);
      if (done) break;
      t = timers.next();
    }
    if (!t) throw new Error('run: stuck: the promise has not settled and no timer is pending (it waits on something no timer ends)');
    if (t.due > end) throw new Error(`run: not settled after ${maxMs} ms of virtual time (${timers.live.size} timer(s) pending)`);
    await stepOnce(timers, t, spin);
  }
  return await p;
}

/**
 * Fires `t` (Timers#step), unless timers keep firing without time moving: a
 * timer that re-arms itself at the same time (a zero-delay loop) would
 * never let tick, run or runUntilIdle return.
 * @param {Timers} timers
 * @param {Timer} t
 * @param {{ at: number, n: number }} spin the time of the last timer fired and how many fired at it
 */
async function stepOnce(timers, t, spin) {
  if (t.due !== spin.at) [spin.at, spin.n] = [t.due, 0];
  if (++spin.n > SPIN) throw new Error(`${SPIN} timers fired at ${t.due} ms of virtual time: one re-arms at the same time without end`);
  await timers.step(t);
}
