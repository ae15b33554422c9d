// Fake time for the engine's unit tests: node:test's mock timers (setTimeout
// and Date, Node >= 20.11), with a count of the timers still pending and a
// log of the delays asked for, so a test can say "nothing was left behind"
// and "no wait of 1,200 ms was started". Nothing here sleeps for real.
//
// A promise of a call is only awaited through `run` (fake time advances
// until it settles) or `already` (it must have settled by now): never
// directly, since a call that hangs on fake time leaves Node's event loop
// empty and node:test then cancels every later test of the file.
import { mock } from 'node:test';
import assert from 'node:assert/strict';

/** The fake epoch ms every test starts at (a round number, far from 0). */
export const T0 = 1_000_000;

/** Lets every pending promise reaction run (setImmediate is not faked). */
export async function settle() {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/**
 * Installs fake setTimeout/clearTimeout and Date (Date.now() = T0); call
 * `off()` after the test.
 */
export function install() {
  mock.timers.enable({ apis: ['setTimeout', 'Date'], now: T0 });
  const [set, clear] = [globalThis.setTimeout, globalThis.clearTimeout];
  /** Pending timers: id → due (fake epoch ms). */
  const live = new Map();
  /** Every delay asked of setTimeout, in order. */
  const asked = [];
  globalThis.setTimeout = /** @type {any} */ (
    (f, ms = 0, ...args) => {
      asked.push(ms);
      const id = set(
        (...a) => {
          live.delete(id);
          f(...a);
        },
        ms,
        ...args,
      );
      live.set(id, Date.now() + Math.max(0, ms));
      return id;
    }
  );
  globalThis.clearTimeout = /** @type {any} */ (
    (id) => {
      live.delete(id);
      clear(id);
    }
  );

  /** Moves fake time to epoch `t`, firing each timer due on the way at its own time, promises settling in between. */
  async function to(t) {
    for (;;) {
      await settle();
      const next = Math.min(...live.values());
      if (!(next <= t)) break;
      mock.timers.tick(Math.max(0, next - Date.now()));
    }
    if (t > Date.now()) mock.timers.tick(t - Date.now());
    await settle();
  }

  return {
    /** Timers pending now. */
    timers: () => live.size,
    /** Every delay asked of setTimeout so far. */
    asked,
    /** Fake ms since T0. */
    now: () => Date.now() - T0,
    /** Advances fake time by `ms`. */
    tick: (/** @type {number} */ ms) => to(Date.now() + ms),
    /** Advances fake time to `ms` after T0. */
    to: (/** @type {number} */ ms) => to(T0 + ms),
    /**
     * Advances fake time timer by timer until `p` settles; fails when it
     * cannot (nothing pending) or takes more than `maxMs` of fake time.
     * @template T
     * @param {Promise<T>} p
     */
    async run(p, maxMs = 60_000) {
      let done = false;
      p.then(
        () => (done = true),
        () => (done = true),
      );
      const end = Date.now() + maxMs;
      for (await settle(); !done; await settle()) {
        const next = Math.min(...live.values());
        if (next === Infinity) throw new Error('stuck: the call has not settled and no timer is pending');
        if (next > end) throw new Error(`still running after ${maxMs} ms of fake time`);
        mock.timers.tick(Math.max(0, next - Date.now()));
      }
      return p;
    },
    off() {
      globalThis.setTimeout = set;
      globalThis.clearTimeout = clear;
      mock.timers.reset();
    },
  };
}

/** Whether `p` has settled yet (after pending reactions ran), without waiting on it. */
export async function settled(p) {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await settle();
  return done;
}

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
