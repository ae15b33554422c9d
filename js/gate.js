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
//
// Written for size (every fetchWithBackoff user downloads it): the op codes
// are literals with their names in comments (esbuild keeps named constants
// as variables), state lives in private fields where it can (esbuild
// shortens those; plain properties keep their names), and each thing is
// done in one place.
import { RawGate } from './wasm_backoff.js';
import { rawBackoff, choice, number, fn, MAX_TIMER } from './backoff.js';

const PHASES = ['healthy', 'backing-off', 'open', 'probing'];
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

const count = (o, key, dflt, min) =>
  number(o, key, dflt, (v) => v === Infinity || (Number.isInteger(v) && v >= min), `an integer >= ${min} or Infinity`);

/** An optional number option, > 0 (`min`) or >= 0 (shared with fetch.js). */
export const ms = (o, key, dflt, min) => number(o, key, dflt, (v) => v > 0 || (!min && v === 0), `a number ${min ? '> 0' : '>= 0'}`);

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
 * The core's answer (src/gate.rs): 0 admit, 1 failed, 2 succeeded,
 * 3 cancelled, 4 hold, 5 left, 6 take, 7 wake time (-1 none, -2 idle),
 * 8 can wait, 9 phase, 10 held, 11 in flight, 12 rounds. A dropped slot
 * answers -1 (nothing to send, nothing to wake) to late callers.
 */
const op = (s, code, a = 0, b = -1) => (s.dead ? -1 : s.raw.op(code, a, b, Date.now()));

/** A timer for the epoch time `at` (ms). */
const at = (f, t) => setTimeout(f, Math.min(Math.max(0, Math.ceil(t - Date.now())), MAX_TIMER));

/** Supervises targets by key; see index.d.ts for the options. */
export class Gate {
  #slots = new Map();
  #seq = 0;
  #n = { evictions: 0, rounds: 0, probes: 0, timeouts: 0 };
  #schedule;
  #limits;
  #retryable;
  #maxAttempts;
  #maxElapsedMs;

  constructor(options) {
    const o = options ?? {};
    if (typeof o !== 'object') throw new TypeError('gate options must be an object');
    // The rounds' schedule: the backoff options, without the per-call limits
    // (a target is never given up on; its callers are, by their own limits).
    this.#schedule = { ...o, maxAttempts: Infinity, maxElapsedMs: undefined };
    rawBackoff(this.#schedule, NaN, () => 0).free(); // validates now, no entropy at module scope
    this.#limits = [
      count(o, 'maxQueued', 1000, 0),
      choice(o.overflow === null ? {} : o, 'overflow', ['evict-oldest', 'reject-newest']) === 1,
      count(o, 'concurrency', Infinity, 1),
      ms(o, 'probeTimeoutMs', 30000, true),
    ];
    /** The key of a fetch call (read by fetch.js). */
    this.keyOf = fn(o, 'key') ?? origin;
    this.#retryable = fn(o, 'retryable');
    this.#maxAttempts = count(o, 'maxAttempts', 5, 1);
    this.#maxElapsedMs = ms(o, 'maxElapsedMs', Infinity);
  }

  /** The slot of `key`, made on first use and dropped again (by `sync`) once idle. */
  #slot(key) {
    let s = this.#slots.get(key);
    if (!s) {
      const b = rawBackoff(this.#schedule);
      s = { key, raw: new RawGate(b, ...this.#limits), queue: [], at: -1, rounds: 0, slots: this.#slots, n: this.#n };
      b.free();
      this.#slots.set(key, s);
    }
    return s;
  }

  /**
   * A ticket for one call to `key` (the fetch driver's and `run`'s handle):
   * `pass()` resolves when it may be sent, `settle(...)` reports the
   * outcome, `cancel()` an abort. `spend()` says whether the call may use
   * one more attempt (each failed round it waits through costs one).
   */
  enter(key, signal, deadline, spend) {
    // The slot is looked up at the first pass(), not now: an idle one may be gone by then.
    return new Ticket(() => this.#slot(key), key, signal, deadline, spend, this.#seq++);
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
    const signal = o.signal ?? undefined;
    if (signal !== undefined && !(typeof AbortSignal !== 'undefined' && signal instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
    const max = count(o, 'maxAttempts', this.#maxAttempts, 1);
    const limit = ms(o, 'maxElapsedMs', this.#maxElapsedMs);
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
          if (this.#retryable) hurt = this.#retryable(e) !== false;
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
      inFlight += op(s, 11 /* in flight */);
    }
    return { ...this.#n, held, inFlight, targets: this.#slots.size };
  }

  /** Where the target `key` stands: phase, held and in-flight calls. */
  state(key) {
    const s = this.#slots.get(key);
    if (!s) return { phase: 'healthy', held: 0, inFlight: 0 };
    return { phase: PHASES[op(s, 9 /* phase */)], held: op(s, 10 /* held */), inFlight: op(s, 11 /* in flight */) };
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
 * 'deadline', 'aborted') once rejected, and while held `wake` (settles its
 * promise), `timer` (its deadline), `onAbort` and `poll`.
 */
class Ticket {
  // 0 new, 1 held, 2 go (may send with `tag`), 3 out (rejected with
  // `error`), 4 done; literals, as esbuild would keep named constants.
  state = 0 /* new */;

  constructor(slot, key, signal, deadline, spend, seq) {
    Object.assign(this, { slot, key, signal, deadline, spend, seq });
  }

  /** Resolves when the call may be sent; rejects when it must not be (see `why`). */
  pass() {
    if (this.state === 0 /* new */) {
      const s = (this.s = this.slot());
      const r = op(s, 0 /* admit */);
      rounds(s); // (a hung probe may have timed out: a round this call did not wait through)
      if (r >= 0) go(this, r);
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
        if (this.state === 1 /* held */) pump(this.s);
        if (this.state !== 1 /* held */) return done();
        const ms = op(this.s, 7 /* wake */) - Date.now();
        this.poll = setTimeout(poll, ms > 0 ? Math.min(ms, 250) : 25);
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
    let why = 'done';
    this.state = 4 /* done */;
    if (hurt) {
      op(s, 1 /* failed */, this.tag, hintMs ?? -1);
      rounds(s);
      if (retry) why = !this.spend() ? 'exhausted' : !op(s, 8 /* can wait */, this.deadline) ? 'deadline' : '';
      if (!why) enqueue(this, op(s, 4 /* hold */));
    } else op(s, 2 /* succeeded */, this.tag);
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
    op(this.s, 3 /* cancelled */, this.tag);
    pump(this.s);
  }

  /** How long the target's current round still waits, in ms (0 when not waiting). */
  waitMs() {
    return Math.max(0, op(this.s, 7 /* wake */) - Date.now());
  }
}

function go(t, tag) {
  t.tag = tag;
  t.state = 2 /* go */;
  if (tag & 1) t.s.n.probes++;
}

/** Holds `t` in arrival order, then evicts as the core said (`code`: -1, -2 head, -3 tail). */
function enqueue(t, code) {
  const q = t.s.queue;
  let i = q.length;
  while (i > 0 && q[i - 1].seq > t.seq) i--;
  q.splice(i, 0, t);
  t.state = 1 /* held */;
  if (code < -1) {
    t.s.n.evictions++;
    const victim = code === -2 ? q[0] : q[q.length - 1];
    out(victim, 'evicted', false, new GateOverflowError(t.key));
    if (victim === t) return;
  }
  if (t.signal?.aborted) return out(t, 'aborted');
  if (!op(t.s, 8 /* can wait */, t.deadline)) return out(t, 'deadline');
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
  if (why !== 'evicted') op(s, 5 /* left */);
  s.n.timeouts += why === 'deadline' || why === 'exhausted';
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
function rounds(s) {
  const r = op(s, 12 /* rounds */);
  if (r === s.rounds || s.dead) return;
  s.n.rounds += r - s.rounds;
  s.rounds = r;
  for (const t of [...s.queue]) {
    if (!t.spend()) out(t, 'exhausted');
    else if (!op(s, 8 /* can wait */, t.deadline)) out(t, 'deadline');
  }
}

/** Sends whatever the core releases (the probe, or the held calls in order), then syncs the timer. */
function pump(s) {
  for (let tag; s.queue.length > 0 && (tag = op(s, 6 /* take */)) >= 0; ) {
    const t = s.queue.shift();
    unhook(t);
    go(t, tag);
    wake(t);
  }
  rounds(s);
  sync(s);
}

/** One timer per target, armed exactly while the core wants a wake-up; an idle slot is dropped. */
function sync(s) {
  const t = op(s, 7 /* wake */);
  if (t !== s.at) {
    clearTimeout(s.timer);
    s.at = t;
    s.timer = t < 0 ? undefined : at(() => {
      s.at = -1;
      s.timer = undefined;
      pump(s);
    }, t);
  }
  if (t === -2 && s.slots.get(s.key) === s) {
    s.dead = true;
    s.raw.free();
    s.slots.delete(s.key);
  }
}

/** A gate for `run(key, task)` and for the `gate` option of the fetch driver. */
export function createGate(options) {
  return new Gate(options);
}

const cached = new WeakMap();
const DEFAULTS = {}; // the key of the gate shared by `true`

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
  if (own) return new Gate({ ...schedule, ...g }); // (`...true` adds nothing)
  if (g === true) g = DEFAULTS;
  let x = cached.get(g);
  if (!x) cached.set(g, (x = new Gate(g)));
  return x;
}
