// Fake time for the engine's unit tests: the virtual clock of
// `wasm-backoff/testing` (js/testing/clock.js, from the sources: tests/engine
// runs without a build), the one clock of the project's tests and its
// users'. It stands in for setTimeout, setInterval, Date and
// performance.now(), counts the timers still pending and logs the delays
// asked for, so a test can say "nothing was left behind" and "no wait of
// 1,200 ms was started". Nothing here sleeps for real.
//
// A promise of a call is only awaited through `run` (fake time advances
// until it settles) or `already` (it must have settled by now): never
// directly, since a call that hangs on fake time leaves Node's event loop
// empty and node:test then cancels every later test of the file.
import { beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { drain, settled as settledNow, virtualClock } from '../../js/testing/clock.js';

/** The fake epoch ms every test starts at (a round number, far from 0). */
export const T0 = 1_000_000;

/** Lets every pending promise reaction run (a few real macrotasks). */
export const settle = drain;

/**
 * Installs the virtual clock (Date.now() = T0); call `off()` after the test.
 */
export function install() {
  // (performance.now() stays real: a test measures with it that nothing slept)
  const clock = virtualClock({ now: T0, performance: false });
  return {
    /** Timers pending now. */
    timers: clock.pending,
    /** Every delay asked of setTimeout so far. */
    asked: clock.asked,
    /** Fake ms since T0. */
    now: () => clock.now() - T0,
    /** Advances fake time by `ms`, firing each timer due on the way at its own time, promises settling in between. */
    tick: (/** @type {number} */ ms) => clock.tick(ms),
    /** Advances fake time to `ms` after T0 (if it is still ahead). */
    to: (/** @type {number} */ ms) => clock.tick(Math.max(0, T0 + ms - clock.now())),
    /**
     * Advances fake time timer by timer until `p` settles; fails when it
     * cannot (nothing pending) or takes more than `maxMs` of fake time.
     * @template T
     * @param {Promise<T>} p
     */
    run: (p, maxMs = 60_000) => clock.run(p, { maxMs, graceMs: 0 }),
    off: clock.uninstall,
  };
}

/** Whether `p` has settled yet (after pending reactions ran), without waiting on it. */
export const settled = settledNow;

/**
 * `p`, which must have settled by now (no fake time passing): fails the
 * test at once, naming `what`, if it has not.
 * @template T
 * @param {Promise<T>} p
 * @param {string} what
 */
export async function already(p, what) {
  assert.equal(await settled(p), true, `${what}: settled by now`);
  return p;
}

/**
 * The clock of every test of a node:test file: installed before each test,
 * uninstalled after it, and checked then to have left no timer pending. The
 * object returned stands for the running test's clock (its `timers`, `asked`,
 * `now`, `tick`, `to`, `run`); `off()` uninstalls it early, for a test on
 * real time (nothing is checked after that one).
 */
export function eachTest() {
  /** @type {ReturnType<typeof install> | undefined} */
  let c;
  const live = () => {
    if (!c) throw new Error('no virtual clock in this test (off() was called)');
    return c;
  };
  beforeEach(() => {
    c = install();
  });
  afterEach(() => {
    if (!c) return;
    const left = c.timers();
    c.off();
    c = undefined;
    assert.equal(left, 0, 'no timer left behind');
  });
  return {
    timers: () => live().timers(),
    get asked() {
      return live().asked;
    },
    now: () => live().now(),
    tick: (/** @type {number} */ ms) => live().tick(ms),
    to: (/** @type {number} */ ms) => live().to(ms),
    /**
     * @template T
     * @param {Promise<T>} p
     * @param {number} [maxMs]
     */
    run: (p, maxMs) => live().run(p, maxMs),
    off() {
      c?.off();
      c = undefined;
    },
  };
}
