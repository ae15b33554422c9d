// @ts-check
// The per-target backoff gate (`wasm-backoff/gate`): createGate, for
// `gate.run(key, task)` and for the `gate` option of the fetch driver.
// Per-request backoff lets thirty calls in flight hammer a failing target
// thirty times a round; a gate backs off for the target as a whole, holds
// its callers and sends one probe per round.
//
// The decisions and the counts (phases, which request probes, when to
// release, who is evicted, what each call does after its attempt, rounds,
// probes, timeouts) are the Rust core's (core/src/gate.rs, through
// src/gate.rs): every operation answers the target's whole status in the
// result record, so JavaScript never keeps a count of its own. JavaScript
// holds what only it can: the promises of held callers in arrival order,
// their abort listeners and deadline timers (a Slot's HeldQueue), and one
// wake-up timer per target while anything is held (its Slot). This file
// keeps the targets by key: a target's slot stays while it is idle (a
// healthy call through the gate is two wasm calls and allocates nothing);
// idle slots are dropped when the map has doubled since the last time it
// was pruned.
import { own, readAll, nullable, statuses, fn, abortSignal, count, ms } from '../options.js';
import { w, mem, write, record, load, check, OPTS, SCRATCH } from '../wasm.js';
import { job } from './run-job.js';
import { Call, drive } from '../engine/loop.js';
import { Slot } from './slot.js';
import { Ticket } from './ticket.js';
import { saved, rows, WHAT } from './saved.js';
import { THROTTLE_STATUSES } from '../gen/policy.js';
import { GATE_MESSAGES, F_LIMIT, F_MAX_ATTEMPTS, F_MAX_ELAPSED_MS, FROM_THE_FUTURE, GATE, SCHEDULE, LIMIT_KINDS } from '../gen/boundary.js';

/** Frees the slots of gates that were not freed by hand once they are garbage. */
const registry = new FinalizationRegistry((/** @type {Map<unknown, Slot>} */ slots) => {
  for (const s of slots.values()) s.drop();
});

/**
 * The default key of a fetch call: its origin.
 * @param {unknown} input
 */
function origin(input) {
  const url = typeof Request !== 'undefined' && input instanceof Request ? input.url : String(input);
  try {
    return new URL(url, globalThis.location?.href).origin;
  } catch {
    return url;
  }
}

/**
 * createGate's options (GateOptions) that JavaScript reads: the schedule's
 * (SCHEDULE) and the gate's (GATE) are the core's, checked by the module.
 */
export const GATE_OPTIONS = {
  // (null: the default, as undefined)
  throttleOn: nullable(statuses(new Set(THROTTLE_STATUSES))),
  onStateChange: fn(),
  key: fn(origin),
  retryable: fn(),
  maxAttempts: count(1, 5),
  maxElapsedMs: ms(Infinity),
};

/** gate.run's options (GateRunOptions); without them, the gate's own limits. */
export const RUN_OPTIONS = { signal: abortSignal(), maxAttempts: count(1), maxElapsedMs: ms() };

/** Supervises targets by key; see gate/index.d.ts for the options. */
export class Gate {
  /** @type {Map<unknown, Slot>} */
  #slots = new Map();
  #seq = 0;
  /** The counters of slots dropped while idle. */
  #retired = { evictions: 0, rounds: 0, probes: 0, timeouts: 0 };
  /** The map's size that triggers the next pruning of idle slots. */
  #prune = 64;
  #rec;
  #seeded;
  #retryable;
  #maxAttempts;
  #maxElapsedMs;
  #freed = false;
  /** What its slots share. @type {import('./slot.js').Shared} */
  #shared;

  /** @param {import('../../types/gate/index.js').GateOptions} [options] */
  constructor(options) {
    const o = own(options, 'gate options');
    // The rounds' schedule and the gate's limits, as the record each
    // target's slot is made from (checked now; no entropy at module scope).
    write(o, SCHEDULE, () => 0);
    write(o, GATE);
    // maxAttempts and maxElapsedMs are per-call limits here (checked below),
    // not the rounds' schedule's: a target is never given up on.
    mem()[OPTS + F_MAX_ATTEMPTS] = mem()[OPTS + F_MAX_ELAPSED_MS] = NaN;
    this.#rec = record(GATE);
    w.gate_free(check(w.gate_new(Date.now()), GATE_MESSAGES));
    const c = readAll(o, GATE_OPTIONS);
    this.#shared = { on: c.onStateChange, limited: LIMIT_KINDS[this.#rec[F_LIMIT]] === 'adaptive', throttleOn: c.throttleOn };
    this.#seeded = o.seed !== undefined;
    /** The key of a fetch call (read by the fetch driver). */
    this.keyOf = c.key;
    this.#retryable = c.retryable;
    this.#maxAttempts = c.maxAttempts;
    this.#maxElapsedMs = c.maxElapsedMs;
    registry.register(this, this.#slots, this);
  }

  /**
   * The slot of `key`, made on first use. Idle slots stay (so a healthy
   * target costs nothing per call) until the map has grown to twice its
   * size at the last pruning.
   * @param {unknown} key
   * @returns {Slot}
   */
  #slot(key) {
    if (this.#freed) throw new TypeError('this Gate was freed');
    let s = this.#slots.get(key);
    if (!s) {
      if (this.#slots.size >= this.#prune) {
        for (const [k, x] of this.#slots) {
          if (!x.idle() || x.until > Date.now()) continue;
          x.count(this.#retired);
          x.drop();
          this.#slots.delete(k);
        }
        this.#prune = Math.max(64, 2 * this.#slots.size);
      }
      load(this.#rec, this.#seeded);
      s = new Slot(key, check(w.gate_new(Date.now()), GATE_MESSAGES), this.#shared);
      this.#slots.set(key, s);
    }
    return s;
  }

  /**
   * A ticket for one call to `key` (the fetch driver's and `run`'s handle):
   * `pass()` resolves when it may be sent, `settle(...)` reports the
   * outcome, `cancel()` an abort. `spend(hintMs)` answers the call's own
   * next delay in ms, or < 0 when it may not use one more attempt (each
   * failed round it waits through costs one).
   * @param {unknown} key
   * @param {AbortSignal | undefined} signal
   * @param {number} deadline
   * @param {(hintMs?: number) => number} spend
   * @param {boolean} [pace] a success saying no request remains paces the target
   */
  enter(key, signal, deadline, spend, pace = false) {
    if (this.#freed) throw new TypeError('this Gate was freed');
    // The slot is looked up at the first pass(), not now.
    return new Ticket(() => this.#slot(key), key, signal, deadline, spend, this.#seq++, this, pace);
  }

  /**
   * The lane of a fetch call (js/engine/loop.js) through this gate: a
   * ticket for the request's key (`keyOf`), spending the call's own
   * schedule; with the call's `pace`, a success saying no request remains
   * paces the target (`pace`).
   * @param {import('../engine/call.js').Call} call
   * @param {unknown} input
   * @param {RequestInit | undefined} init
   */
  lane(call, input, init) {
    return this.enter(this.keyOf(input, init), call.signal, call.end, (/** @type {number=} */ h) => call.next(h), !!call.c.pace);
  }

  /**
   * Runs `task({signal})` through the gate of `key`: straight away while the
   * target is healthy; held while it backs off; retried (held again) when it
   * rejects, until `maxAttempts` or `maxElapsedMs`.
   * @template T
   * @param {unknown} key
   * @param {(ctx: { signal?: AbortSignal }) => T | Promise<T>} task
   * @param {{ signal?: AbortSignal, maxAttempts?: number, maxElapsedMs?: number }} [options]
   * @returns {Promise<T>}
   */
  async run(key, task, options) {
    if (typeof task !== 'function') throw new TypeError('task must be a function');
    const { signal, maxAttempts: max = this.#maxAttempts, maxElapsedMs: limit = this.#maxElapsedMs } = readAll(own(options), RUN_OPTIONS);
    if (signal?.aborted) throw signal.reason;
    // Below the threshold, a failed task waits its own round of the gate's
    // schedule (made at its first failure, freed at the end). The deadline
    // bounds the waits; a task running at it is not aborted.
    const call = new Call({ rec: this.#rec, seeded: this.#seeded, maxElapsedMs: limit }, signal, false);
    let used = 0;
    const t = this.enter(key, signal, call.end, (hint) => (++used < max ? call.next(hint) : -1));
    return /** @type {Promise<T>} */ (drive(call, job(task, this.#retryable), t));
  }

  /** Counters since creation, and what is held or in flight now (all from the core). */
  stats() {
    const n = { ...this.#retired, held: 0, inFlight: 0, targets: 0 };
    for (const s of this.#slots.values()) {
      if (s.dead) continue;
      const idle = s.idle();
      s.count(n);
      const { held, inFlight } = s.view();
      n.held += held;
      n.inFlight += inFlight;
      n.targets += +!idle;
    }
    return n;
  }

  /**
   * Where the target `key` stands: its circuit's state (`closed`, `open`,
   * `half-open` — `probing` while its probe is out —, `isolated`), held and
   * in-flight calls, and how long until its round ends (`retryAfterMs`, as
   * a BrokenCircuitError's: 0 once over, Infinity while isolated).
   * @param {unknown} key
   * @returns {import('../../types/gate/index.js').GateTargetState}
   */
  state(key) {
    const s = this.#slots.get(key);
    if (!s || s.dead) return { state: 'closed', probing: false, held: 0, inFlight: 0, retryAfterMs: 0 };
    // The core's clock moves at its operations; with nothing held there is
    // no timer, so a round that is over (or restored over) would still read
    // 'open'. gate_take ticks it (and takes nothing: nothing is held).
    // With calls held, their timer does that at the round's end.
    if (s.queue.size === 0) s.op(w.gate_take, Date.now()), s.round(), s.sync();
    s.op(w.gate_status);
    return { ...s.view(), retryAfterMs: s.retryAfterMs() };
  }

  /**
   * Counts the outcomes of calls to `key` that were sent elsewhere — `ok`
   * successes, then `failed` failures — against the threshold while the
   * target is closed, as that many calls through this gate would be
   * counted (the core's Gate::record). A fleet's GateObject records its
   * isolates' reports so. Non-integers and negatives count as 0.
   * @param {unknown} key
   * @param {number} ok
   * @param {number} failed
   */
  record(key, ok, failed) {
    const n = (/** @type {unknown} */ v) => (typeof v === 'number' && v > 0 ? Math.min(Math.floor(v), 0xffffffff) : 0);
    const s = this.#slot(key);
    s.op(w.gate_record, n(ok), n(failed), Date.now());
    s.round();
    s.pump();
  }

  /**
   * Paces `key`: its calls that start in the next `ms` wait until then
   * before their first attempt (the fetch driver calls it when a success
   * says no request remains, `RateLimit-Remaining: 0`, until the reset).
   * Nothing else changes: the circuit, the counters, calls already out.
   * @param {unknown} key
   * @param {number} ms
   */
  pace(key, ms) {
    const s = this.#slot(key);
    if (ms > 0) s.until = Math.max(s.until, Date.now() + ms);
  }

  /**
   * Isolates `key` by hand: nothing is sent to it until `release(key)`;
   * new calls are held (or, with `mode: 'fail-fast'`, rejected with a
   * BrokenCircuitError). Calls in flight end with their own outcome.
   * @param {unknown} key
   */
  isolate(key) {
    this.#slot(key).op(w.gate_isolate, true);
  }

  /**
   * Ends an isolation (or a backoff) of `key` by hand: the circuit closes
   * and held calls go out in order.
   * @param {unknown} key
   */
  release(key) {
    const s = this.#slot(key);
    s.op(w.gate_isolate, false);
    s.pump();
  }

  /**
   * The state of every target with one worth carrying (string keys only)
   * to another isolate or invocation: `JSON.stringify(gate)` to store it,
   * `gate.restore(JSON.parse(text))` in the next. Times are epoch ms.
   * @returns {import('../../types/gate/index.js').GateState}
   */
  toJSON() {
    const savedAt = Date.now();
    /** @type {[string, any][]} */
    const targets = [];
    for (const [k, s] of this.#slots) {
      if (s.dead || typeof k !== 'string') continue;
      const t = saved(s.h, savedAt);
      if (t) targets.push([k, t]);
    }
    // (fromEntries defines, not assigns: a target keyed '__proto__' is a key like any other)
    return { version: 1, savedAt, targets: Object.fromEntries(targets) };
  }

  /**
   * Takes up a state from `toJSON()` (of this or another isolate): each
   * target resumes where it was (a round still running ends when it would
   * have; the next failure after a count of 4 is the 5th).
   * A state of the wrong shape throws a TypeError and changes nothing; a
   * target whose numbers are out of range, or a state saved in the future,
   * throws a RangeError naming it, and that target starts closed.
   * @param {import('../../types/gate/index.js').GateState} state
   */
  restore(state) {
    const now = Date.now();
    let refused;
    for (const [key, v] of rows(state)) {
      const s = this.#slot(key);
      if (s.dead) continue;
      mem().set(v, SCRATCH);
      const code = s.op(w.gate_restore, now);
      s.pump();
      if (code)
        refused ??= `${WHAT}: the target ${JSON.stringify(key)} is ${code === FROM_THE_FUTURE ? 'from the future' : 'malformed'}; it starts closed`;
    }
    if (refused) throw new RangeError(refused);
  }

  /**
   * Releases every target's memory in the module now. Held calls reject
   * with a TypeError; calls in flight end with their own outcome (not
   * retried through the gate); new calls throw.
   */
  free() {
    if (this.#freed) return;
    this.#freed = true;
    registry.unregister(this);
    for (const s of this.#slots.values()) {
      s.queue.free();
      s.drop();
    }
    this.#slots.clear();
  }

  /** `using gate = createGate()` frees at the end of the block. */
  [Symbol.dispose]() {
    this.free();
  }
}

/**
 * A gate for `run(key, task)` and for the `gate` option of the fetch driver.
 * @param {import('../../types/gate/index.js').GateOptions} [options]
 */
export function createGate(options) {
  return new Gate(options);
}
