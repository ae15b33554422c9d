// Virtual time for the queue's tests on the js/ sources: the clock of
// `wasm-backoff/testing` (js/testing/clock.js, the one clock of the
// project's tests, as tests/engine/clock.mjs uses it), installed per test,
// with the queues a test made stopped (in virtual time) when it ends, so a
// test that fails half-way leaves no queue and no timer behind.
//
// A queue starts its passes on a real macrotask (setImmediate, as Node runs
// them before any timer), which the clock does not own: left alone, the
// clock would fire the next timer (a poll, pollMs ahead) after a few
// macrotasks while a chain of passes is still under way, and time would
// jump. So `run` and `tick` here move time one timer at a time, and only
// once no setImmediate of the code under test is pending: what is due now
// all happens now, and the times a test asserts are exact.
import { virtualClock } from '../../js/testing/clock.js';
import { TaskQueue } from '../../js/queue/task-queue.js';

/** The virtual epoch ms every test starts at (a round number, far from 0). */
export const T0 = 1_000_000;

const G = globalThis;
/** How many real macrotasks the code under test may chain without a timer before `run` calls it a spin. */
const SPIN = 100_000;
/** How many timers may fire at one virtual time before `run` and `tick` call it a loop. */
const LOOP = 10_000;

/**
 * The clock for test `t` (Date.now() = T0 until time moves), and `queue`,
 * a TaskQueue maker whose queues are stopped when the test ends.
 * @param {import('node:test').TestContext} t
 */
export function world(t) {
  // (performance.now() stays real: the diagnostics measure real time with it)
  const clock = virtualClock({ now: T0, performance: false });
  const made = [];
  const time = follow(clock);
  t.after(async () => {
    try {
      await time.run(Promise.all(made.map((q) => q.stop())), 600_000);
    } finally {
      time.off();
      clock.uninstall();
    }
  });
  return {
    clock,
    /** Virtual ms since T0. */
    at: () => clock.now() - T0,
    /** Moves time timer by timer until `p` settles (at most `maxMs` of virtual time), then settles as it does. */
    run: time.run,
    /** Moves time by `ms`, each timer due on the way firing at its own time once what is due before it ran. */
    tick: time.tick,
    /** A TaskQueue (js/ sources), stopped when the test ends. */
    queue(options) {
      const q = new TaskQueue(options);
      made.push(q);
      return q;
    },
    /** `x` (anything with a stop(): an Outbox), stopped when the test ends. */
    keep(x) {
      made.push(x);
      return x;
    },
  };
}

/**
 * The timers of `clock` and the setImmediate calls of the code under test,
 * followed (both wrapped while installed), and the clock moved by them.
 * @param {ReturnType<typeof virtualClock>} clock
 */
function follow(clock) {
  const [setT, clearT, setI, clearI] = [G.setTimeout, G.clearTimeout, G.setImmediate, G.clearImmediate];
  /** Virtual timers pending: id -> due time (as asked; the clock may clamp it later). */
  const due = new Map();
  /** The code's setImmediate calls pending. */
  const immediates = new Set();
  let fired = 0;
  let last = Number.NaN;
  let same = 0;
  G.setTimeout = (f, ms = 0, ...args) => {
    const h = setT(
      (...a) => {
        due.delete(Number(h));
        fired++;
        same = clock.now() === last ? same + 1 : 0;
        last = clock.now();
        // (thrown out of the clock's tick: the test fails, naming it, rather than hang)
        if (same > LOOP) throw new Error(`${LOOP} timers fired at ${last - T0} ms: they re-arm without end (a loop)`);
        f(...a);
      },
      ms,
      ...args,
    );
    due.set(Number(h), clock.now() + Math.max(0, Number(ms) || 0));
    return h;
  };
  G.clearTimeout = (h) => {
    due.delete(Number(h));
    clearT(h);
  };
  G.setImmediate = (f, ...args) => {
    const h = setI(() => {
      immediates.delete(h);
      f(...args);
    });
    immediates.add(h);
    return h;
  };
  G.clearImmediate = (h) => {
    immediates.delete(h);
    clearI(h);
  };
  const macrotask = () => new Promise((r) => setI(r));
  /** Lets the code under test run until it waits only on timers (or on nothing). */
  async function quiet() {
    for (let n = 0; ; n++) {
      for (let i = 0; i < 3; i++) await macrotask();
      if (!immediates.size) return;
      if (n > SPIN) throw new Error('the code under test chains macrotasks without end (a spin)');
    }
  }
  const earliest = () => (due.size ? Math.min(...due.values()) : undefined);
  /** Fires the next timer (at `at`); a timer the clock clamped later than asked is reached 1 ms at a time. */
  async function step(at) {
    const before = fired;
    await clock.tick(Math.max(0, at - clock.now()));
    if (fired === before) await clock.tick(1);
  }
  return {
    /**
     * @template T
     * @param {Promise<T>} p
     * @param {number} [maxMs]
     * @returns {Promise<T>}
     */
    async run(p, maxMs = 600_000) {
      let done = false;
      const seen = Promise.resolve(p).then(
        () => (done = true),
        () => (done = true),
      );
      const end = clock.now() + maxMs;
      for (;;) {
        await quiet();
        if (done) return p;
        const at = earliest();
        if (at === undefined) {
          await Promise.race([seen, new Promise((r) => setI(r))]);
          if (done) return p;
          throw new Error('run: stuck: the promise has not settled and no timer is pending');
        }
        if (at > end) throw new Error(`run: not settled after ${maxMs} ms of virtual time (${due.size} timer(s) pending)`);
        await step(at);
      }
    },
    /** @param {number} ms */
    async tick(ms) {
      const end = clock.now() + ms;
      for (;;) {
        await quiet();
        const at = earliest();
        if (at === undefined || at > end) break;
        await step(at);
      }
      await clock.tick(Math.max(0, end - clock.now()));
      await quiet();
      return clock.now();
    },
    off() {
      Object.assign(G, { setTimeout: setT, clearTimeout: clearT, setImmediate: setI, clearImmediate: clearI });
    },
  };
}

/** A task record as an instance would have written it (pending, due now), with `fields` over it. */
export function taskRecord(fields) {
  const now = Date.now();
  return {
    id: 'x',
    payload: 0,
    state: 'pending',
    lockedBy: null,
    completeBy: 0,
    failureCount: 0,
    nextAttemptAt: now,
    createdAt: now,
    seed: 1,
    version: 0,
    lastError: null,
    ...fields,
  };
}

/** The final states. */
const FINAL = new Set(['processed', 'error']);
const EVENTS = ['processed', 'retry', 'error', 'storeerror'];

/**
 * Resolves with the records of `ids` once each is final (processed or
 * error) in the store of the first of `queues`: checked now and after each
 * event of any of them. Await it through `run`.
 * @param {TaskQueue | TaskQueue[]} queues
 * @param {string[]} ids
 */
export function final(queues, ids) {
  const qs = [queues].flat();
  return new Promise((resolve, reject) => {
    const off = () => {
      for (const q of qs) for (const type of EVENTS) q.removeEventListener(type, check);
    };
    function check() {
      Promise.all(ids.map((id) => qs[0].store.get(id))).then((recs) => {
        if (!recs.every((r) => r && FINAL.has(r.state))) return;
        off();
        resolve(recs);
      }, reject);
    }
    for (const q of qs) for (const type of EVENTS) q.addEventListener(type, check);
    check();
  });
}

/**
 * Resolves with the first `type` event of `target` (a queue) that `test` accepts.
 * @param {EventTarget} target
 * @param {string} type
 * @param {(e: any) => boolean} [test]
 */
export const next = (target, type, test = () => true) =>
  new Promise((resolve) => {
    const on = (e) => {
      if (!test(e)) return;
      target.removeEventListener(type, on);
      resolve(e);
    };
    target.addEventListener(type, on);
  });
