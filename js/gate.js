// The per-target backoff gate: createGate, and the `gate` option of the fetch
// driver. Per-request backoff lets thirty calls in flight hammer a failing
// target thirty times a round; a gate backs off for the target as a whole,
// holds its callers and sends one probe per round.
//
// The decisions (phases, which request probes, when to release, who is
// evicted) are the Rust core's (`RawGate.op`, see src/gate.rs); this file
// holds what only JavaScript can: the promises of held callers in arrival
// order, their abort listeners and deadline timers, and one wake-up timer
// per target while anything is held.
import { RawGate } from './wasm_backoff.js';
import { rawBackoff } from './backoff.js';

const MAX_TIMER = 2147483647;
// RawGate.op codes (src/gate.rs).
const ADMIT = 0, FAILED = 1, SUCCEEDED = 2, CANCELLED = 3, HOLD = 4, LEFT = 5, TAKE = 6, WAKE = 7, CAN_WAIT = 8, PHASE = 9, HELD = 10, IN_FLIGHT = 11, ROUNDS = 12, IDLE = 15;
const PHASES = ['healthy', 'backing-off', 'open', 'probing'];
// workerd cancels a request that waits with nothing pending in its own
// context (a promise another incoming request will resolve looks hung), and
// the timers of a finished request. There, a held call also polls from its
// own context (until the round's end while backing off, every 25 ms
// otherwise), which keeps it alive and drives the gate should the request
// that armed the gate's timer be gone; so a gate can be shared by incoming
// requests.
const POLL = globalThis.navigator?.userAgent === 'Cloudflare-Workers';
const OVERFLOW = ['evict-oldest', 'reject-newest'];

const named = (key) => (typeof key === 'string' ? key : 'the target');

/** A held call dropped because the target's queue was full (`maxQueued`). */
export class GateOverflowError extends Error {
  constructor(key) {
    super(`the backoff gate's queue for ${named(key)} is full (maxQueued)`);
    this.name = 'GateOverflowError';
    this.key = key;
  }
}

/** A held call that ran out of attempts or time before the target recovered. */
export class GateTimeoutError extends Error {
  constructor(key, reason) {
    super(`gave up waiting for ${named(key)} to recover (${reason === 'deadline' ? 'maxElapsedMs' : 'maxAttempts'})`);
    this.name = 'GateTimeoutError';
    this.key = key;
    /** 'exhausted' (maxAttempts) or 'deadline' (maxElapsedMs). */
    this.reason = reason;
  }
}

function count(o, key, dflt, min) {
  const v = o[key];
  if (v === undefined) return dflt;
  const msg = `${key} must be an integer >= ${min} or Infinity`;
  if (typeof v !== 'number') throw new TypeError(msg);
  if (!(v === Infinity || (Number.isInteger(v) && v >= min))) throw new RangeError(msg);
  return v;
}

/** An optional function option (shared with fetch.js). */
export function fn(o, key) {
  const f = o[key];
  if (f !== undefined && typeof f !== 'function') throw new TypeError(`${key} must be a function`);
  return f;
}

/** An optional number option, > 0 (`min`) or >= 0 (shared with fetch.js). */
export function ms(o, key, dflt, min) {
  const v = o[key];
  if (v === undefined) return dflt;
  const msg = `${key} must be a number ${min ? '> 0' : '>= 0'}`;
  if (typeof v !== 'number') throw new TypeError(msg);
  if (!(v > 0 || (!min && v === 0))) throw new RangeError(msg);
  return v;
}
const elapsed = (o) => ms(o, 'maxElapsedMs', Infinity, false);

function signalOf(o) {
  const s = o.signal;
  if (s != null && !(typeof AbortSignal !== 'undefined' && s instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  return s ?? undefined;
}

/** The default key of a fetch call: its origin. */
function origin(input) {
  const url = typeof Request !== 'undefined' && input instanceof Request ? input.url : String(input);
  try {
    return new URL(url, globalThis.location?.href).origin;
  } catch {
    return url;
  }
}

// A dropped slot answers -1 (nothing to send, nothing to wake) to late callers.
const op = (s, code, a = 0, b = -1) => (s.dead ? -1 : s.raw.op(code, a, b, Date.now()));

/** Supervises targets by key; see index.d.ts for the options. */
export class Gate {
  #slots = new Map();
  #seq = 0;
  #n = { evictions: 0, rounds: 0, probes: 0, timeouts: 0 };

  constructor(options) {
    if (options == null) options = {};
    else if (typeof options !== 'object') throw new TypeError('gate options must be an object');
    const o = options;
    // The rounds' schedule: the backoff options, without the per-call limits
    // (a target is never given up on; its callers are, by their own limits).
    this.schedule = { ...o, maxAttempts: Infinity, maxElapsedMs: undefined };
    rawBackoff(this.schedule, NaN, () => 0).free(); // validates now, no entropy at module scope
    this.maxQueued = count(o, 'maxQueued', 1000, 0);
    const ov = o.overflow ?? OVERFLOW[0];
    if (!OVERFLOW.includes(ov)) throw new (typeof ov === 'string' ? RangeError : TypeError)("overflow must be one of 'evict-oldest', 'reject-newest'");
    this.rejectNewest = ov === OVERFLOW[1];
    this.concurrency = count(o, 'concurrency', Infinity, 1);
    this.probeTimeoutMs = ms(o, 'probeTimeoutMs', 30000, true);
    this.keyOf = fn(o, 'key') ?? origin;
    this.retryable = fn(o, 'retryable');
    this.maxAttempts = count(o, 'maxAttempts', 5, 1);
    this.maxElapsedMs = elapsed(o);
  }

  /** The slot of `key`, made on first use and dropped again once idle. */
  slot(key) {
    let s = this.#slots.get(key);
    if (!s) {
      const raw = new RawGate(rawBackoff(this.schedule), this.maxQueued, this.rejectNewest, this.concurrency, this.probeTimeoutMs);
      s = { key, raw, queue: [], timer: undefined, at: -1, rounds: 0, gate: this, n: this.#n };
      this.#slots.set(key, s);
    }
    return s;
  }

  drop(s) {
    if (this.#slots.get(s.key) !== s) return;
    s.dead = true;
    s.raw.free();
    this.#slots.delete(s.key);
  }

  /**
   * A ticket for one call to `key` (the fetch driver's and `run`'s handle):
   * `pass()` resolves when it may be sent, `settle(...)` reports the
   * outcome, `cancel()` an abort. `spend()` says whether the call may use
   * one more attempt (each failed round it waits through costs one).
   */
  enter(key, signal, deadline, spend) {
    return new Ticket(this, key, signal, deadline, spend, this.#seq++);
  }

  /**
   * Runs `task({signal})` through the gate of `key`: straight away while the
   * target is healthy; held while it backs off; retried (held again) when it
   * rejects, until `maxAttempts` or `maxElapsedMs`.
   */
  async run(key, task, options) {
    if (typeof task !== 'function') throw new TypeError('task must be a function');
    const o = options ?? {};
    if (typeof o !== 'object') throw new TypeError('options must be an object');
    const signal = signalOf(o);
    const max = count(o, 'maxAttempts', this.maxAttempts, 1);
    const limit = o.maxElapsedMs === undefined ? this.maxElapsedMs : elapsed(o);
    if (signal?.aborted) throw signal.reason;
    let used = 0;
    const t = this.enter(key, signal, Date.now() + limit, () => ++used < max);
    for (;;) {
      await t.pass();
      let value;
      try {
        value = await abortable(task({ signal }), signal);
      } catch (e) {
        if (signal?.aborted) {
          t.cancel();
          throw signal.reason;
        }
        let hurt = true;
        try {
          if (this.retryable) hurt = this.retryable(e) !== false;
        } catch (thrown) {
          t.settle(true, false); // the ticket is settled whatever `retryable` does
          throw thrown;
        }
        if (t.settle(hurt, hurt)) throw e;
        continue;
      }
      t.settle(false);
      return value;
    }
  }

  /** Counters since creation, and what is held or in flight now. */
  stats() {
    let held = 0, inFlight = 0;
    for (const s of this.#slots.values()) {
      held += s.queue.length;
      inFlight += op(s, IN_FLIGHT);
    }
    return { ...this.#n, held, inFlight, targets: this.#slots.size };
  }

  /** Where the target `key` stands: phase, held and in-flight calls. */
  state(key) {
    const s = this.#slots.get(key);
    if (!s) return { phase: 'healthy', held: 0, inFlight: 0 };
    return { phase: PHASES[op(s, PHASE)], held: op(s, HELD), inFlight: op(s, IN_FLIGHT) };
  }
}

/** `p`, or the signal's reason the moment it aborts (no listener left behind). */
function abortable(p, signal) {
  if (!signal) return p;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(p).then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * One call's passage through the gate. Also set later: `s` (its slot), `tag`
 * (the core's, while sent), `error` and `why` ('evicted', 'exhausted',
 * 'deadline', 'aborted') once rejected, and while held `waiter` (its
 * promise's callbacks), `timer` (its deadline), `onAbort` and `poll`.
 */
class Ticket {
  state = 'new'; // new | held | go (may send with `tag`) | out (rejected with `error`) | done

  constructor(gate, key, signal, deadline, spend, seq) {
    Object.assign(this, { gate, key, signal, deadline, spend, seq });
  }

  /** Resolves when the call may be sent; rejects when it must not be (see `why`). */
  pass() {
    if (this.state === 'new') {
      // The slot is looked up now, not at enter(): an idle one may be gone.
      const s = (this.s = this.gate.slot(this.key));
      const r = op(s, ADMIT);
      rounds(s); // (a hung probe may have timed out: a round this call did not wait through)
      if (r >= 0) go(this, r);
      else {
        enqueue(this, r);
        pump(s);
      }
    }
    if (this.state === 'go') return Promise.resolve();
    if (this.state === 'out') return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.waiter = [resolve, reject];
      if (!POLL) return;
      const poll = () => {
        if (this.state === 'held') pump(this.s);
        if (this.state === 'go') return resolve();
        if (this.state === 'out') return reject(this.error);
        const at = op(this.s, WAKE) - Date.now();
        this.poll = setTimeout(poll, at > 0 ? Math.min(at, 250) : 25);
      };
      poll();
    });
  }

  /**
   * The sent call's outcome: `hurt` = the target failed; `retry` = the call
   * wants another attempt (then it is held), `hintMs` a Retry-After. Returns
   * '' when the call is held (await `pass()` again), else why it is over:
   * 'done' (not retried), 'exhausted' or 'deadline' (its own limits).
   */
  settle(hurt, retry, hintMs) {
    const s = this.s;
    this.state = 'done';
    if (!hurt) {
      op(s, SUCCEEDED, this.tag);
      pump(s);
      return 'done';
    }
    op(s, FAILED, this.tag, hintMs ?? -1);
    rounds(s);
    const why = !retry ? 'done' : !this.spend() ? 'exhausted' : !op(s, CAN_WAIT, this.deadline) ? 'deadline' : '';
    if (!why) enqueue(this, op(s, HOLD));
    pump(s);
    return why;
  }

  /** The sent call was aborted: it says nothing about the target. */
  cancel() {
    this.state = 'done';
    op(this.s, CANCELLED, this.tag);
    pump(this.s);
  }

  /** How long the target's current round still waits, in ms (0 when not waiting). */
  waitMs() {
    return Math.max(0, op(this.s, WAKE) - Date.now());
  }
}

function go(t, tag) {
  t.tag = tag;
  t.state = 'go';
  if (tag & 1) t.s.n.probes++;
}

/** Holds `t` in arrival order, then evicts as the core said (`code`: -1, -2 head, -3 tail). */
function enqueue(t, code) {
  const q = t.s.queue;
  let i = q.length;
  while (i > 0 && q[i - 1].seq > t.seq) i--;
  q.splice(i, 0, t);
  t.state = 'held';
  if (code < -1) {
    t.s.n.evictions++;
    const victim = code === -2 ? q[0] : q[q.length - 1];
    out(victim, new GateOverflowError(t.key), 'evicted', false);
    if (victim === t) return;
  }
  if (t.signal?.aborted) return out(t, t.signal.reason, 'aborted', true);
  if (!op(t.s, CAN_WAIT, t.deadline)) return out(t, new GateTimeoutError(t.key, 'deadline'), 'deadline', true);
  if (t.signal) {
    t.onAbort = () => out(t, t.signal.reason, 'aborted', true, true);
    t.signal.addEventListener('abort', t.onAbort, { once: true });
  }
  if (t.deadline !== Infinity) {
    const ms = Math.min(Math.max(0, Math.ceil(t.deadline - Date.now())), MAX_TIMER);
    t.timer = setTimeout(() => out(t, new GateTimeoutError(t.key, 'deadline'), 'deadline', true, true), ms);
  }
}

function unhook(t) {
  clearTimeout(t.timer);
  t.timer = undefined;
  if (t.onAbort) t.signal.removeEventListener('abort', t.onAbort);
  t.onAbort = undefined;
}

/**
 * Takes held `t` out of the queue and rejects it; `left` = the core counts
 * it as held; `own` = called from t's own context (its abort or deadline).
 */
function out(t, error, why, left, own) {
  const s = t.s;
  const i = s.queue.indexOf(t);
  if (i < 0) return;
  s.queue.splice(i, 1);
  unhook(t);
  if (left) op(s, LEFT);
  if (why === 'deadline' || why === 'exhausted') s.n.timeouts++;
  Object.assign(t, { state: 'out', error, why });
  if (own) clearTimeout(t.poll);
  t.waiter?.[1](error);
  t.waiter = undefined;
  sync(s);
}

/**
 * When a round started (a failure, or a probe that timed out), each held call
 * was tried by proxy and spends an attempt.
 */
function rounds(s) {
  const r = op(s, ROUNDS);
  if (r === s.rounds) return;
  s.n.rounds += (r - s.rounds + 2 ** 31) % 2 ** 31;
  s.rounds = r;
  for (const t of [...s.queue]) {
    if (!t.spend()) out(t, new GateTimeoutError(t.key, 'exhausted'), 'exhausted', true);
    else if (!op(s, CAN_WAIT, t.deadline)) out(t, new GateTimeoutError(t.key, 'deadline'), 'deadline', true);
  }
}

/** Sends whatever the core releases (the probe, or the held calls in order), then syncs the timer. */
function pump(s) {
  for (let tag; s.queue.length > 0 && (tag = op(s, TAKE)) >= 0; ) {
    const t = s.queue.shift();
    unhook(t);
    go(t, tag);
    t.waiter?.[0]();
    t.waiter = undefined;
  }
  rounds(s);
  sync(s);
}

/** One timer per target, armed exactly while the core wants a wake-up; an idle slot is dropped. */
function sync(s) {
  const at = op(s, WAKE);
  if (at !== s.at) {
    clearTimeout(s.timer);
    s.at = at;
    s.timer = at < 0 ? undefined : setTimeout(() => {
      s.at = -1;
      s.timer = undefined;
      pump(s);
    }, Math.min(Math.max(0, Math.ceil(at - Date.now())), MAX_TIMER));
  }
  if (op(s, IDLE) === 1) s.gate.drop(s);
}

/** A gate for `run(key, task)` and for the `gate` option of the fetch driver. */
export function createGate(options) {
  return new Gate(options);
}

let shared;
const cached = new WeakMap();

/**
 * The `gate` option of the fetch driver: `own` (withBackoff) makes the
 * wrapper's own gate, timed by its schedule unless the object says
 * otherwise; fetchWithBackoff shares one gate per options object (one for
 * `true`), since a gate made per call would supervise nothing.
 */
export function gateOption(g, schedule, own) {
  if (g === undefined || g === false) return undefined;
  if (g instanceof Gate) return g;
  if (g !== true && (g === null || typeof g !== 'object')) throw new TypeError('gate must be a boolean, a Gate from createGate or gate options');
  if (own) return new Gate(g === true ? schedule : { ...schedule, ...g });
  if (g === true) return (shared ??= new Gate());
  let x = cached.get(g);
  if (!x) cached.set(g, (x = new Gate(g)));
  return x;
}
