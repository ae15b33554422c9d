// @ts-check
// The per-target backoff gate (`wasm-backoff/gate`): createGate, for
// `gate.run(key, task)` and for the `gate` option of the fetch driver.
// Per-request backoff lets thirty calls in flight hammer a failing target
// thirty times a round; a gate backs off for the target as a whole, holds
// its callers and sends one probe per round.
//
// The decisions and the counts (phases, which request probes, when to
// release, who is evicted, rounds, probes, timeouts) are the Rust core's
// (src/gate.rs): every operation answers the target's whole status in the
// result record, so JavaScript never keeps a count of its own. This file
// holds what only JavaScript can: the promises of held callers in arrival
// order, their abort listeners and deadline timers, and one wake-up timer
// per target while anything is held. A target's slot stays while it is
// idle (a healthy call through the gate is two wasm calls and allocates
// nothing); idle slots are dropped when the map has doubled since the last
// time it was pruned.
import { w, mem, own, write, load, record, check, number, fn, OPTS, OUT, SCRATCH } from './wasm.js';
import { abortable, observe, signalOf, sleep } from './hooks.js';
import { Call, drive } from './engine/loop.js';
import {
  ALL_MESSAGES,
  BUCKETS,
  CAUSES,
  CIRCUIT,
  EVICT_HEAD,
  F_LIMIT,
  F_MODE,
  HELD,
  REJECTED,
  SAVED,
  SAVED_LEN,
  SAVED_STATES,
  WAKE_IDLE,
  WAKE_NONE,
  F_MAX_ATTEMPTS,
  F_MAX_ELAPSED_MS,
  GATE,
  GATE_CAUSE,
  GATE_EVICTIONS,
  GATE_HELD,
  GATE_IN_FLIGHT,
  GATE_PHASE,
  GATE_PROBES,
  GATE_ROUNDS,
  GATE_TIMEOUTS,
  GATE_UNTIL,
  GATE_WAKE,
  MAX_TIMER,
  PHASES,
  SCHEDULE,
} from './gen/boundary.js';

// workerd cancels a request that waits with nothing pending in its own
// context (a promise another incoming request will resolve looks hung), and
// the timers of a finished request. There, a held call also polls from its
// own context (until the round's end while backing off, every 25 ms
// otherwise), which keeps it alive and drives the gate should the request
// that armed the gate's timer be gone; so a gate can be shared by incoming
// requests.
const POLL = globalThis.navigator?.userAgent === 'Cloudflare-Workers';

const named = (key) => (typeof key === 'string' ? key : 'the target');

/** A held call dropped because the target's queue was full (`maxQueued`). */
export class GateOverflowError extends Error {
  constructor(key) {
    super(`the backoff gate's queue for ${named(key)} is full (maxQueued)`);
    this.name = /** @type {const} */ ('GateOverflowError');
    this.key = key;
  }
}

/** A held call that ran out of attempts or time before the target recovered. */
export class GateTimeoutError extends Error {
  constructor(key, reason) {
    super(`gave up waiting for ${named(key)} to recover (${reason === 'deadline' ? 'maxElapsedMs' : 'maxAttempts'})`);
    this.name = /** @type {const} */ ('GateTimeoutError');
    this.key = key;
    /** 'exhausted' (maxAttempts) or 'deadline' (maxElapsedMs). */
    this.reason = /** @type {'exhausted' | 'deadline'} */ (reason);
  }
}

/**
 * A call refused at once because its target's circuit is open (`mode:
 * 'fail-fast'`), or isolated by hand.
 */
export class BrokenCircuitError extends Error {
  constructor(key, retryAfterMs, isolated) {
    super(`the circuit of ${named(key)} is ${isolated ? 'isolated' : 'open'}`);
    this.name = /** @type {const} */ ('BrokenCircuitError');
    this.key = key;
    /** Time until the next probe may go, in ms (0: due now or a probe is out; Infinity: isolated). */
    this.retryAfterMs = retryAfterMs;
    this.isolated = isolated;
  }
}

/**
 * A per-call count: an integer >= `min`, or Infinity.
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {number} dflt
 * @param {number} min
 */
const count = (o, key, dflt, min) =>
  number(o, key, dflt, (v) => v === Infinity || (Number.isInteger(v) && v >= min), `an integer >= ${min} or Infinity`);

/**
 * A per-call deadline option, a number >= 0 in ms.
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {number} dflt
 */
const ms = (o, key, dflt) => number(o, key, dflt, (v) => v >= 0, 'a number >= 0');

/** The default key of a fetch call: its origin. */
function origin(input) {
  const url = typeof Request !== 'undefined' && input instanceof Request ? input.url : String(input);
  try {
    return new URL(url, globalThis.location?.href).origin;
  } catch {
    return url;
  }
}

/**
 * Operation `f` of the core on the gate of slot `s` (a dropped slot answers
 * -1 to late callers: nothing to send, nothing to wake). The status it
 * answers is then in the result record: `st(k)`; a change of the circuit's
 * state is reported to `onStateChange`.
 * @param {Slot} s
 * @param {(h: number, ...args: any[]) => any} f
 * @param {...any} args
 */
function op(s, f, ...args) {
  if (s.dead) return -1;
  const r = f(s.h, ...args);
  const p = st(GATE_PHASE);
  if (p !== s.phase) {
    const [from, to] = [CIRCUIT[s.phase], CIRCUIT[p]];
    s.phase = p;
    if (from !== to && s.on) {
      const info = { key: s.key, from, to, reason: CAUSES[st(GATE_CAUSE)] };
      // (later, outside the gate's own bookkeeping: the hook may call the gate)
      queueMicrotask(() => observe(s.on, info));
    }
  }
  return r;
}

/** Whether held call `t` can still be served by waiting (its deadline is not before the round's end). */
const canWait = (/** @type {Ticket} */ t) => t.s.dead || w.gate_can_wait(t.s.h, t.deadline);

/** Field `k` of the status the last gate operation answered. */
const st = (/** @type {number} */ k) => mem()[OUT + k];

/**
 * @typedef {{ key: unknown, h: number, queue: Ticket[], at: number, rounds: number, phase: number, on?: (info: any) => unknown, limited: boolean, failFast: boolean, throttleOn: Set<number>, dead?: boolean, timer?: any }} Slot
 */

/** A timer for the epoch time `at` (ms). */
const at = (f, t) => setTimeout(f, Math.min(Math.max(0, Math.ceil(t - Date.now())), MAX_TIMER));

/** Frees the slots of gates that were not freed by hand once they are garbage. */
const registry = new FinalizationRegistry((/** @type {Map<unknown, Slot>} */ slots) => slots.forEach(drop));

/** Frees a slot's gate in the module; late callers get -1 from `op`. */
function drop(/** @type {Slot} */ s) {
  if (!s.dead) {
    s.dead = true;
    clearTimeout(s.timer);
    w.gate_free(s.h);
  }
}

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
  /** @type {((info: any) => unknown) | undefined} */
  #on;
  #limited;
  #failFast;
  #throttleOn;

  /** @param {import('../types/gate/index.js').GateOptions} [options] */
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
    w.gate_free(check(w.gate_new(Date.now()), ALL_MESSAGES));
    this.#failFast = this.#rec[F_MODE] === 1;
    this.#limited = this.#rec[F_LIMIT] === 1;
    this.#on = fn(o, 'onStateChange');
    const th = o.throttleOn ?? [429];
    if (!Array.isArray(th) || !th.every((x) => Number.isInteger(x) && x >= 100 && x <= 599)) {
      throw new (Array.isArray(th) ? RangeError : TypeError)('throttleOn must be an array of integer HTTP statuses (100-599)');
    }
    this.#throttleOn = new Set(th);
    this.#seeded = o.seed !== undefined;
    /** The key of a fetch call (read by the fetch driver). */
    this.keyOf = fn(o, 'key') ?? origin;
    this.#retryable = fn(o, 'retryable');
    this.#maxAttempts = count(o, 'maxAttempts', 5, 1);
    this.#maxElapsedMs = ms(o, 'maxElapsedMs', Infinity);
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
          op(x, w.gate_status);
          if (st(GATE_WAKE) === WAKE_IDLE) {
            this.#retire(x);
            this.#slots.delete(k);
          }
        }
        this.#prune = Math.max(64, 2 * this.#slots.size);
      }
      load(this.#rec, this.#seeded);
      s = {
        key,
        h: check(w.gate_new(Date.now()), ALL_MESSAGES),
        queue: [],
        at: WAKE_NONE,
        rounds: 0,
        phase: 0,
        on: this.#on,
        limited: this.#limited,
        failFast: this.#failFast,
        throttleOn: this.#throttleOn,
      };
      this.#slots.set(key, s);
    }
    return s;
  }

  /** Adds the counters of slot `s` (just asked for its status) to the retired ones, and frees it. */
  #retire(/** @type {Slot} */ s) {
    const r = this.#retired;
    r.evictions += st(GATE_EVICTIONS);
    r.rounds += st(GATE_ROUNDS);
    r.probes += st(GATE_PROBES);
    r.timeouts += st(GATE_TIMEOUTS);
    drop(s);
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
   */
  enter(key, signal, deadline, spend) {
    if (this.#freed) throw new TypeError('this Gate was freed');
    // The slot is looked up at the first pass(), not now.
    return new Ticket(() => this.#slot(key), key, signal, deadline, spend, this.#seq++);
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
    const o = own(options);
    const signal = signalOf(o);
    const max = count(o, 'maxAttempts', this.#maxAttempts, 1);
    const limit = ms(o, 'maxElapsedMs', this.#maxElapsedMs);
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
      op(s, w.gate_status);
      n.evictions += st(GATE_EVICTIONS);
      n.rounds += st(GATE_ROUNDS);
      n.probes += st(GATE_PROBES);
      n.timeouts += st(GATE_TIMEOUTS);
      n.held += st(GATE_HELD);
      n.inFlight += st(GATE_IN_FLIGHT);
      n.targets += +(st(GATE_WAKE) !== WAKE_IDLE);
    }
    return n;
  }

  /**
   * Where the target `key` stands: its circuit's state (`closed`, `open`,
   * `half-open` — `probing` while its probe is out —, `isolated`), held and
   * in-flight calls.
   * @param {unknown} key
   * @returns {{ state: import('../types/gate/index.js').CircuitState, probing: boolean, held: number, inFlight: number }}
   */
  state(key) {
    const s = this.#slots.get(key);
    if (!s || s.dead) return { state: 'closed', probing: false, held: 0, inFlight: 0 };
    // The core's clock moves at its operations; with nothing held there is
    // no timer, so a round that is over (or restored over) would still read
    // 'open'. gate_take ticks it (and takes nothing: nothing is held).
    // With calls held, their timer does that at the round's end.
    if (s.queue.length === 0) op(s, w.gate_take, Date.now()), rounds(s), sync(s);
    op(s, w.gate_status);
    const p = st(GATE_PHASE);
    return { state: /** @type {any} */ (CIRCUIT[p]), probing: PHASES[p] === 'probing', held: st(GATE_HELD), inFlight: st(GATE_IN_FLIGHT) };
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
    op(s, w.gate_record, n(ok), n(failed), Date.now());
    rounds(s);
    pump(s);
  }

  /**
   * Isolates `key` by hand: nothing is sent to it until `release(key)`;
   * new calls are held (or, with `mode: 'fail-fast'`, rejected with a
   * BrokenCircuitError). Calls in flight end with their own outcome.
   * @param {unknown} key
   */
  isolate(key) {
    op(this.#slot(key), w.gate_isolate);
  }

  /**
   * Ends an isolation (or a backoff) of `key` by hand: the circuit closes
   * and held calls go out in order.
   * @param {unknown} key
   */
  release(key) {
    const s = this.#slot(key);
    op(s, w.gate_release);
    pump(s);
  }

  /**
   * The state of every target with one worth carrying (string keys only)
   * to another isolate or invocation: `JSON.stringify(gate)` to store it,
   * `gate.restore(JSON.parse(text))` in the next. Times are epoch ms.
   * @returns {import('../types/gate/index.js').GateState}
   */
  toJSON() {
    const savedAt = Date.now();
    /** @type {Record<string, any>} */
    const targets = {};
    for (const [k, s] of this.#slots) {
      if (s.dead || typeof k !== 'string') continue;
      w.gate_save(s.h, savedAt);
      const v = Array.from(mem().subarray(OUT, OUT + SAVED_LEN));
      /** @type {Record<string, any>} */
      const t = {};
      for (let i = 1; i < SAVED.length; i++) t[SAVED[i]] = v[i];
      t.state = SAVED_STATES[v[1]];
      t.calls = v.slice(SAVED.length, SAVED.length + BUCKETS);
      t.fails = v.slice(SAVED.length + BUCKETS);
      // A closed target with nothing counted has nothing to carry.
      const clean = t.state === 'closed' && t.round === 0 && t.failures === 0 && t.calls.every((x) => x === 0);
      // (defined, not assigned: a target keyed '__proto__' is a key like any other)
      if (!clean) Object.defineProperty(targets, k, { value: t, enumerable: true, writable: true, configurable: true });
    }
    return { version: 1, savedAt, targets: /** @type {any} */ (targets) };
  }

  /**
   * Takes up a state from `toJSON()` (of this or another isolate): each
   * target resumes where it was (a round still running ends when it would
   * have; the next failure after a count of 4 is the 5th).
   * A state of the wrong shape throws a TypeError and changes nothing; a
   * target whose numbers are out of range, or a state saved in the future,
   * throws a RangeError naming it, and that target starts closed.
   * @param {import('../types/gate/index.js').GateState} state
   */
  restore(state) {
    const what = 'state (from gate.toJSON())';
    if (typeof state !== 'object' || state === null) throw new TypeError(`${what} must be an object`);
    const { version, savedAt, targets } = /** @type {any} */ (state);
    if (version !== 1) throw new RangeError(`${what}: version must be 1`);
    if (typeof savedAt !== 'number') throw new TypeError(`${what}: savedAt must be a number`);
    if (typeof targets !== 'object' || targets === null) throw new TypeError(`${what}: targets must be an object`);
    /** @type {[string, number[]][]} */
    const rows = [];
    for (const key of Object.keys(targets)) {
      const t = targets[key];
      const bad = (/** @type {string} */ f) => new TypeError(`${what}: targets[${JSON.stringify(key)}].${f} has the wrong type`);
      if (typeof t !== 'object' || t === null) throw bad('');
      const v = [savedAt, SAVED_STATES.indexOf(t.state)];
      if (v[1] < 0) throw bad('state');
      for (let i = 2; i < SAVED.length; i++) {
        const x = t[SAVED[i]] ?? (SAVED[i] === 'windowAt' ? NaN : undefined);
        if (typeof x !== 'number') throw bad(SAVED[i]);
        v.push(x);
      }
      for (const f of ['calls', 'fails']) {
        if (!Array.isArray(t[f]) || t[f].length !== BUCKETS || !t[f].every((x) => typeof x === 'number')) throw bad(f);
        v.push(...t[f]);
      }
      rows.push([key, v]);
    }
    const now = Date.now();
    let refused;
    for (const [key, v] of rows) {
      const s = this.#slot(key);
      if (s.dead) continue;
      mem().set(v, SCRATCH);
      const code = op(s, w.gate_restore, now);
      pump(s);
      if (code)
        refused ??= `${what}: the target ${JSON.stringify(key)} is ${code === 2 ? 'from the future' : 'malformed'}; it starts closed`;
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
      for (const t of [...s.queue]) out(t, 'freed', false, new TypeError('this Gate was freed'));
      drop(s);
    }
    this.#slots.clear();
  }

  /** `using gate = createGate()` frees at the end of the block. */
  [Symbol.dispose]() {
    this.free();
  }
}

/** One call's passage through the gate. */
class Ticket {
  // 0 new, 1 held, 2 go (may send with `tag`), 3 out (rejected with
  // `error`), 4 done; literals, as esbuild would keep named constants.
  state = 0 /* new */;
  /** @type {Slot} its slot, from the first pass() */
  s;
  /** The core's tag while sent. */
  tag = 0;
  /** @type {unknown} once rejected */
  error;
  /** @type {string | undefined} why it was rejected: 'evicted', 'exhausted', 'deadline', 'aborted' */
  why;
  /** @type {(() => void) | undefined} settles the promise of pass() */
  wake;
  /** @type {any} while held: its deadline timer */
  timer;
  /** @type {any} (workerd) its poll timer */
  poll;
  /** @type {(() => void) | undefined} while held: its abort listener */
  onAbort;
  /** Its own backoff before the next admission (a failure below the threshold), ms. */
  delayMs = 0;
  /** When it took the adaptive limiter's token (NaN: it did not): the rate its attempt was paced by. */
  paced = Number.NaN;
  /** When its attempt went, after the token's wait (its round trip, for the limiter). */
  sent = Number.NaN;

  /**
   * @param {() => Slot} slot
   * @param {unknown} key
   * @param {AbortSignal | undefined} signal
   * @param {number} deadline
   * @param {(hintMs?: number) => number} spend
   * @param {number} seq
   */
  constructor(slot, key, signal, deadline, spend, seq) {
    this.slot = slot;
    this.key = key;
    this.signal = signal;
    this.deadline = deadline;
    this.spend = spend;
    this.seq = seq;
  }

  /** Resolves when the call may be sent; rejects when it must not be (see `why`). */
  async pass() {
    if (this.state === 0 /* new */) {
      let s = (this.s = this.slot());
      // Its own backoff (below the threshold), then the adaptive limiter's wait.
      if (this.delayMs > 0) await this.nap(this.delayMs);
      this.delayMs = 0;
      this.paced = Number.NaN;
      if (s.limited && !s.dead) {
        // (negative: its token wait and a round trip end past its deadline; refused now, no token taken)
        const d = w.gate_acquire(s.h, (this.paced = Date.now()), this.deadline);
        if (d < 0) return this.nap(Infinity);
        try {
          if (d > 0) await this.nap(d);
        } catch (e) {
          if (!s.dead) w.gate_unacquire(s.h);
          throw e;
        }
        this.sent = Date.now();
      }
      s = this.s = this.slot();
      const r = op(s, w.gate_admit, Date.now());
      rounds(s); // (a hung probe may have timed out: a round this call did not wait through)
      if (r === REJECTED) {
        const until = st(GATE_UNTIL);
        const isolated = PHASES[st(GATE_PHASE)] === 'isolated';
        const ms = isolated ? Infinity : until < 0 ? 0 : Math.max(0, until - Date.now());
        Object.assign(this, { state: 3 /* out */, why: 'circuit-open', error: new BrokenCircuitError(this.key, ms, isolated) });
      } else if (r >= 0) go(this, r);
      else {
        enqueue(this, r);
        pump(s);
      }
    }
    return new Promise((resolve, reject) => {
      const done = (this.wake = () => (this.state === 2 /* go */ ? resolve() : reject(this.error)));
      if (this.state !== 1 /* held */) return done();
      if (!POLL) return;
      const poll = () => {
        if (this.state === 1 /* held */) op(this.s, w.gate_status), pump(this.s);
        if (this.state !== 1 /* held */) return done();
        const ms = this.waitMs();
        this.poll = setTimeout(poll, ms > 0 ? Math.min(ms, 250) : 25);
      };
      poll();
    });
  }

  /** Sleeps `ms` of this call's (abortable), unless that ends past its deadline. */
  nap(/** @type {number} */ ms) {
    if (Date.now() + ms > this.deadline) {
      this.why = 'deadline';
      return Promise.reject(new GateTimeoutError(this.key, 'deadline'));
    }
    return sleep(ms, this.signal);
  }

  /**
   * The sent call's outcome: `hurt` = the target failed; `retry` = the call
   * wants another attempt, `hintMs` a Retry-After. Returns '' when it gets
   * one (await `pass()` again: held while the circuit is open, or after its
   * own backoff while the target is below its threshold), else why it is
   * over: 'done' (not retried), 'exhausted' or 'deadline' (its own limits),
   * 'circuit-open' (failing fast).
   */
  settle(hurt, retry, hintMs) {
    const s = this.s;
    let why = 'done';
    this.state = 4 /* done */;
    if (s.dead) return why; // the gate was freed while the call was out
    if (hurt) {
      op(s, w.gate_failed, this.tag, hintMs ?? NaN, Date.now());
      const closed = st(GATE_PHASE) === 0;
      rounds(s);
      if (retry) {
        const d = spent(this, hintMs);
        why = d < 0 ? 'exhausted' : !canWait(this) ? 'deadline' : '';
        if (why) {
          // out of attempts or time
        } else if (closed) [this.state, this.delayMs] = [0 /* new */, d];
        else if (s.failFast) why = 'circuit-open';
        else enqueue(this, op(s, w.gate_hold));
      }
    } else op(s, w.gate_succeeded, this.tag, Date.now());
    pump(s);
    return why;
  }

  /**
   * The call ends without an outcome (aborted, or a callback of the caller
   * threw): it says nothing about the target and leaves the gate, sent or held.
   */
  cancel() {
    if (this.state === 1 /* held */) out(this, 'aborted', false, null);
    if (this.state !== 2 /* go */) return;
    this.state = 4 /* done */;
    op(this.s, w.gate_cancelled, this.tag);
    pump(this.s);
  }

  /**
   * The lane's step after an attempt (js/engine/loop.js): reports the
   * outcome to the gate (`o.hurt`: the target failed) and returns why the
   * call ends, or '' when it gets another attempt (held while the circuit
   * is open, or after its own backoff below the threshold).
   * @param {import('./engine/call.js').Call} call
   * @param {string} why the job's verdict ('' = another attempt wanted)
   * @param {import('./engine/loop.js').Outcome} o
   */
  after(call, why, o) {
    // The gate was freed while the call was out: it ends with its own outcome.
    const s = this.s;
    if (s.dead) return why || 'freed';
    // Every answer feeds the adaptive limiter: throttling slows it down (once per round trip: the
    // core ignores throttles of attempts paced before its last cut). A server-named wait delays this
    // call's retry only; the limiter stores none (README: what a server-named wait pauses).
    if (s.limited && !o.failed) {
      const throttled = s.throttleOn.has(/** @type {number} */ (o.status)) || (o.status === 503 && o.hintMs !== undefined);
      w.gate_throttled(s.h, +throttled, this.paced, this.sent, Date.now());
    }
    this.paced = this.sent = Number.NaN; // (a held call's next attempt takes no token)
    let ra = o.hurt ? o.hintMs : undefined;
    // The call returns at once; the target's round still waits (up to maxRetryAfterMs).
    const most = call.c.maxRetryAfterMs ?? Infinity;
    if (/** @type {number} */ (ra) > most) [why, ra] = [why || 'retry-after', most];
    if (!why && call.c.budget && !call.c.budget.withdraw(Date.now())) why = 'budget';
    o.hintMs = ra;
    const end = this.settle(!!o.hurt, !why, ra);
    call.delayMs = why || end ? 0 : this.waitMs();
    return why || end;
  }

  /** How long the target's current round still waits, in ms (0 when not waiting). */
  waitMs() {
    op(this.s, w.gate_status);
    return Math.max(0, st(GATE_WAKE) - Date.now());
  }
}

/**
 * The job of gate.run: one attempt is one call of `task`; a rejection is
 * retried (and counts against the target) unless `retryable` says false.
 * @param {(ctx: { signal?: AbortSignal }) => unknown} task
 * @param {((error: unknown) => unknown) | undefined} retryable
 * @returns {import('./engine/loop.js').Job}
 */
const job = (task, retryable) => ({
  async attempt(call) {
    try {
      return { failed: false, value: await abortable(task({ signal: call.signal }), call.signal) };
    } catch (error) {
      call.alive();
      return { failed: true, error };
    }
  },
  async judge(_call, o) {
    if (!o.failed) return 'success';
    try {
      o.hurt = !retryable || retryable(o.error) !== false;
    } catch (thrown) {
      // (the target is told of the failure whatever `retryable` does; the call rejects with what it threw)
      [o.hurt, o.error] = [true, thrown];
      return 'hook-error';
    }
    return o.hurt ? '' : 'not-retryable';
  },
});

/**
 * `t`'s next own delay (ms), or < 0 when it may not spend one more
 * attempt. `spend()` is the caller's (the
 * fetch driver makes its schedule there, at the first failure) and runs
 * inside the gate's operations, even from its timer: should it throw (out
 * of memory), the call is out of attempts, and the gate carries on.
 * @param {Ticket} t
 * @param {number} [hintMs] a server-named wait
 */
function spent(t, hintMs) {
  try {
    return t.spend(hintMs);
  } catch {
    return -1;
  }
}

function go(t, tag) {
  t.tag = tag;
  t.state = 2 /* go */;
}

/** Holds `t` in arrival order, then evicts as the core said (`code`: HELD, EVICT_HEAD, EVICT_TAIL). */
function enqueue(t, code) {
  const q = t.s.queue;
  let i = q.length;
  while (i > 0 && q[i - 1].seq > t.seq) i--;
  q.splice(i, 0, t);
  t.state = 1 /* held */;
  if (code !== HELD) {
    const victim = code === EVICT_HEAD ? q[0] : q[q.length - 1];
    out(victim, 'evicted', false, new GateOverflowError(t.key));
    if (victim === t) return;
  }
  if (t.signal?.aborted) return out(t, 'aborted');
  if (!canWait(t)) return out(t, 'deadline');
  if (t.signal) t.signal.addEventListener('abort', (t.onAbort = () => out(t, 'aborted', true)), { once: true });
  // (re-armed when the timer was clamped to MAX_TIMER, or fired early)
  const arm = () => (t.timer = at(() => (Date.now() < t.deadline ? arm() : out(t, 'deadline', true)), t.deadline));
  if (t.deadline !== Infinity) arm();
}

/** Lets go of held `t`'s deadline timer and abort listener. */
function unhook(t) {
  clearTimeout(t.timer);
  t.signal?.removeEventListener('abort', t.onAbort);
  t.timer = t.onAbort = undefined;
}

/**
 * Takes held `t` out of the queue and rejects it, `why` being 'evicted'
 * (the core has not counted it as held), 'aborted', 'deadline' or
 * 'exhausted'; `own` = called from t's own context (its abort or deadline).
 */
function out(t, why, own, error = why === 'aborted' ? t.signal.reason : new GateTimeoutError(t.key, why)) {
  const s = t.s;
  const i = s.queue.indexOf(t);
  if (i < 0) return;
  s.queue.splice(i, 1);
  unhook(t);
  if (why !== 'evicted') op(s, w.gate_left, why === 'deadline' || why === 'exhausted');
  Object.assign(t, { state: 3 /* out */, error, why });
  if (own) clearTimeout(t.poll);
  wake(t);
  sync(s);
}

/** Settles held-then-released (or rejected) `t`'s promise. */
function wake(t) {
  t.wake?.();
  t.wake = undefined;
}

/**
 * When a round started (a failure, or a probe that timed out), each held call
 * was tried by proxy and spends an attempt.
 */
function rounds(/** @type {Slot} */ s) {
  if (s.dead) return;
  const r = st(GATE_ROUNDS);
  if (r === s.rounds) return;
  s.rounds = r;
  for (const t of [...s.queue]) {
    if (spent(t) < 0) out(t, 'exhausted');
    else if (!canWait(t)) out(t, 'deadline');
  }
}

/** Sends whatever the core releases (the probe, or the held calls in order), then syncs the timer. */
function pump(s) {
  if (s.dead) return;
  for (let tag; s.queue.length > 0 && (tag = op(s, w.gate_take, Date.now())) >= 0; ) {
    const t = s.queue.shift();
    unhook(t);
    go(t, tag);
    wake(t);
  }
  rounds(s);
  sync(s);
}

/**
 * One timer per target, armed exactly while the core wants a wake-up (the
 * status of the last operation on `s` says when).
 * @param {Slot} s
 */
function sync(s) {
  if (s.dead) return; // (the status record may hold another slot's answer)
  const t = Math.max(st(GATE_WAKE), WAKE_NONE);
  if (t !== s.at) {
    clearTimeout(s.timer);
    s.at = t;
    s.timer =
      t < 0
        ? undefined
        : at(() => {
            s.at = WAKE_NONE;
            s.timer = undefined;
            op(s, w.gate_status);
            pump(s);
          }, t);
  }
}

/**
 * A gate for `run(key, task)` and for the `gate` option of the fetch driver.
 * @param {import('../types/gate/index.js').GateOptions} [options]
 */
export function createGate(options) {
  return new Gate(options);
}

/** Frees the limiters not freed by hand once they are garbage. */
const limiters = new FinalizationRegistry((/** @type {number} */ h) => w.limiter_free(h));

/** Acquire times kept for record() at most (older ones go first). */
const PACED_MAX = 10_000;
/** An acquire time older than this is dropped unanswered at the next record() (ms). */
const PACED_MS = 60_000;

/** The adaptive limiter alone; see gate/index.d.ts. */
export class AdaptiveLimiter {
  #h;
  /** The calls let go and not yet answered (oldest first), when each took its token and when it was let go: record() pairs them in order. */
  #paced = /** @type {[number, number][]} */ ([]);

  constructor() {
    this.#h = check(w.limiter_new(Date.now()), ALL_MESSAGES);
    limiters.register(this, this.#h, this);
  }

  #live() {
    if (!this.#h) throw new TypeError('this AdaptiveLimiter was freed');
    return this.#h;
  }

  /** @param {{ signal?: AbortSignal, maxWaitMs?: number }} [options] */
  async acquire(options) {
    const o = own(options);
    const signal = signalOf(o);
    const max = number(o, 'maxWaitMs', Infinity, (v) => v >= 0, 'a number >= 0');
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
    const [paced, sent] = this.#paced.shift() ?? [Number.NaN, Number.NaN];
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
