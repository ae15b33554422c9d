// @ts-check
// The virtual clock of `wasm-backoff/testing`: while installed it stands in
// for the globals every timer of the package (and of most code) reads at
// call time — setTimeout, clearTimeout, setInterval, clearInterval, Date
// (`Date.now()`, `new Date()`, `Date()`) and performance.now() — as
// @sinonjs/fake-timers does, in any runtime (Node, Deno, Bun, browsers,
// workerd). Time moves only when the test says so (tick, run,
// runUntilIdle), one timer at a time, each at its own due time, with a
// real macrotask between timers so promise reactions run as they would.
//
// A clock is its time and timers (timers.js: the clamps and order browsers
// use), the globals it replaces and puts back (globals.js) and its moves
// (moves.js: tick, run, runUntilIdle), which wait real macrotasks
// (macrotask.js); this module ties them into the object a test holds, and
// lets one move run at a time.
import { readAll, flag, num, own } from '../options.js';
import * as moves from './moves.js';
import { install } from './globals.js';
import { settled } from './macrotask.js';
import { Timers } from './timers.js';

export { drain, settled } from './macrotask.js';
export { CLOCK_RUN_OPTIONS } from './moves.js';

/** virtualClock()'s options (VirtualClockOptions). */
export const CLOCK_OPTIONS = { now: num('a finite number', Number.isFinite, 0), performance: flag(true) };

/**
 * Installs a virtual clock at once (see types/testing/index.d.ts).
 * @param {{ now?: number, performance?: boolean }} [options]
 */
export function virtualClock(options) {
  const { now: start, performance } = readAll(own(options), CLOCK_OPTIONS);
  const timers = new Timers(start);
  const restore = install(timers, performance);
  let installed = true;
  let moving = false;

  /**
   * Runs `move` as the clock's one move at a time (two would fire timers out of order), none once uninstalled.
   * @template T
   * @param {string} what
   * @param {() => Promise<T>} move
   */
  async function advance(what, move) {
    if (!installed) throw new Error(`${what}: the clock is uninstalled`);
    if (moving) throw new Error(`${what}: the clock is already moving (await the previous tick, run or runUntilIdle)`);
    moving = true;
    try {
      return await move();
    } finally {
      moving = false;
    }
  }

  function uninstall() {
    if (!installed) return;
    installed = false;
    restore();
    timers.reset();
  }

  /** @param {number} ms */
  const tick = (ms) => advance('tick', () => moves.tick(timers, ms));
  const clock = {
    /** The virtual time in epoch ms (`Date.now()` reads it rounded down, exactly). */
    now: () => timers.now,
    /** The virtual ms since the install, exact. */
    elapsed: () => timers.elapsed,
    tick,
    tickAsync: tick,
    /** @param {{ maxMs?: number }} [opts] */
    runUntilIdle: (opts) => advance('runUntilIdle', () => moves.runUntilIdle(timers, opts)),
    /**
     * @template T
     * @param {PromiseLike<T> | T} p
     * @param {{ maxMs?: number, graceMs?: number }} [opts]
     * @returns {Promise<Awaited<T>>}
     */
    run: (p, opts) => advance('run', () => moves.run(timers, p, opts)),
    /** Timers pending now. */
    pending: () => timers.live.size,
    asked: timers.asked,
    settled,
    uninstall,
  };
  if (Symbol.dispose) /** @type {any} */ (clock)[Symbol.dispose] = uninstall;
  return clock;
}
