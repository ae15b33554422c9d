// @ts-check
// One gate for a fleet of isolates (Cloudflare Workers): the circuit of each
// target lives in one Durable Object (GateObject, js/gate-object.js, which
// runs a GateHub), and every isolate keeps a local Gate that follows it.
// Plain JavaScript over the gate (no `cloudflare:workers` here), so the
// benchmark runs the same code in virtual time with a modelled RPC.
//
// The protocol, per target key (the object named by the key):
// - While the local gate is healthy, a call goes straight out: no round trip.
// - A failure is reported (`report`, one round trip per isolate, batched over
//   the failures of one macrotask, with the successes counted since the last
//   report): the object's gate counts them against its threshold and answers
//   its state; open, the local gate takes it up (`restore`), so the isolate
//   holds its calls until the round the object named ends.
// - Then the local gate's probe asks the object (`admit`): the object's gate
//   holds that request like any held call; exactly one request fleet-wide is
//   released as the probe when the round ends, and the others wait (a long
//   poll, answered at the latest after `pollMs`) until the probe succeeds.
// - The probe's outcome is reported (`probed`): a success closes the shared
//   circuit and answers every waiting isolate at once; a failure starts the
//   next round, and the isolates keep waiting.
// The threshold (`consecutive`, `failureRatio`), the rounds' schedule, `mode`
// and `probeTimeoutMs` are the object's; the queue, concurrency and per-call
// limits stay per isolate. With `limit: 'adaptive'`, the adaptive limiter is
// the object's too, handed out as shares (js/fleet-limiter.js).
// Every wait on the object is bounded by the waiting call's deadline and
// signal, and a request unanswered after STALE_MS (an admit: pollMs more) is
// given up: in workerd, a round trip whose Worker request ended first is
// never settled for another request, and the isolate then goes on with its
// local gate (as when the object cannot be reached).
import { own, number, fn } from './wasm.js';
import { Gate, BrokenCircuitError, GateTimeoutError } from './gate.js';
import { FleetLimiter, Lease, LEASE_MS, STALE_MS } from './fleet-limiter.js';

/** The options that stay with each isolate's local gate (the rest go to the object's). */
const LOCAL = new Set([
  'maxQueued',
  'overflow',
  'concurrency',
  'key',
  'retryable',
  'maxAttempts',
  'maxElapsedMs',
  'limit',
  'throttleOn',
  'onStateChange',
  'name',
  'pollMs',
]);
/** The options of the threshold: the object's only (the local gate trips only when the object says so). */
const TRIP = ['consecutive', 'failureRatio', 'windowMs', 'minCalls'];
/** Most outcomes one report applies (a burst is counted up to this). */
const CAP = 1000;

const POLL = globalThis.navigator?.userAgent === 'Cloudflare-Workers';

/** What within() resolves with when its request went stale first. */
const STALE = Symbol('stale');

/**
 * The limits of a wait on the object: the waiting call's signal and
 * deadline (none for flush).
 * @typedef {{ key?: string, signal?: AbortSignal, deadline: number }} Limits
 */

/**
 * `p`, awaited within the limits of `t`: rejects with its signal's reason
 * when that aborts, with a GateTimeoutError at its deadline, and resolves
 * STALE once `until` has passed (a request that will not be answered). In
 * workerd the wait keeps a timer of its own (every 25 ms), so that the
 * request is not taken for hung while another request's round trip settles
 * `p`. Leaves no timer or listener behind.
 * @template T
 * @param {Promise<T>} p
 * @param {Limits} t
 * @param {number} until
 * @returns {Promise<T | typeof STALE>}
 */
function within(p, t, until) {
  const { signal, deadline } = t;
  const end = Math.min(deadline, until);
  return new Promise((resolve, reject) => {
    /** @type {any} */
    let timer;
    const done = (/** @type {(v: any) => void} */ f, /** @type {any} */ v) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      f(v);
    };
    const onAbort = () => done(reject, signal?.reason);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    const tick = () => {
      const left = end - Date.now();
      if (left > 0) timer = setTimeout(tick, POLL ? Math.min(left, 25) : left);
      else if (until <= deadline) done(resolve, STALE);
      else done(reject, new GateTimeoutError(t.key, 'deadline'));
    };
    tick();
    p.then(
      (v) => done(resolve, v),
      (e) => done(reject, e),
    );
  });
}

/** The data options sent to the object (no functions; none of the per-isolate ones). */
function sharedPart(/** @type {Record<string, any>} */ o) {
  /** @type {Record<string, any>} */
  const out = {};
  for (const k of Object.keys(o)) if (!LOCAL.has(k) && typeof o[k] !== 'function' && o[k] !== undefined) out[k] = o[k];
  return out;
}

/**
 * An isolate's bookkeeping of a key: the successes and failures counted
 * since its last report, and the report on its way (sent at `at`).
 * @typedef {{ ok: number, failed: number, pending?: Promise<void>, at: number }} Key
 */

/**
 * What the object answers: its gate's phase for the key and the target's
 * saved state (null when closed and clean), and what the request gets.
 * @typedef {import('../types/gate/index.js').GateAnswer} Answer
 */

/**
 * The object's side, runtime-free: one real Gate (the Rust core's state
 * machine) for the keys of one object, made at the first request from the
 * options it carries (the first wins), and the probes out by id.
 */
export class GateHub {
  /** @type {Gate | undefined} */
  gate;
  /** The options the gate was made with. */
  options;
  /** Requests answered, by method (for tests and the benchmark). */
  rpcs = { report: 0, admit: 0, probed: 0, lease: 0 };
  /** The shared limiters, by key. @type {Map<string, FleetLimiter>} */
  limiters = new Map();
  /** The probes out, by id. @type {Map<number, { t: any, key: string, at: number }>} */
  #probes = new Map();
  #seq = 0;
  #on;

  /** @param {{ onStateChange?: (change: any) => void }} [hooks] */
  constructor(hooks) {
    this.#on = hooks?.onStateChange;
  }

  /**
   * The gate, made from `options` (the shared part of an isolate's) on first use.
   * @param {Record<string, any>} options
   */
  of(options) {
    if (!this.gate) {
      this.options = sharedPart(own(options));
      this.gate = new Gate({ ...this.options, maxQueued: Infinity, concurrency: Infinity, onStateChange: this.#on });
    }
    return this.gate;
  }

  /**
   * The answer of kind `kind` about `key`.
   * @param {string} key
   * @param {Answer['kind']} kind
   * @returns {Answer}
   */
  answer(key, kind, extra = {}) {
    const g = /** @type {Gate} */ (this.gate);
    this.#letGo();
    const { savedAt, targets } = g.toJSON();
    return { kind, phase: g.state(key).phase, savedAt, target: targets[key] ?? null, ...extra };
  }

  /**
   * RPC: `ok` successes and then `failed` failures seen by one isolate since
   * its last report. Applied while the target is closed (the failures of
   * calls sent before a round join it, as in one gate). Answers the state.
   * @param {string} key
   * @param {number} ok
   * @param {number} failed
   * @param {Record<string, any>} options
   */
  async report(key, ok, failed, options) {
    this.rpcs.report++;
    const g = this.of(options);
    for (const [n, hurt] of /** @type {[number, boolean][]} */ ([
      [ok, false],
      [failed, true],
    ])) {
      for (let i = 0; i < Math.min(n, CAP) && g.state(key).phase === 'healthy'; i++) {
        const t = g.enter(key, undefined, Infinity, () => 0);
        await t.pass();
        t.settle(hurt, false);
      }
    }
    return this.answer(key, 'state');
  }

  /**
   * RPC: one isolate's probe asks to go. Held like any call in the object's
   * gate: answered `probe` (this one is the fleet's probe: send it and
   * report with `probed(id)`), `go` (the circuit is closed), `refused`
   * (fail-fast mode, with `retryAfterMs`) or, after `pollMs`, `wait` (ask again).
   * @param {string} key
   * @param {number} pollMs
   * @param {Record<string, any>} options
   * @returns {Promise<Answer>}
   */
  async admit(key, pollMs, options) {
    this.rpcs.admit++;
    const g = this.of(options);
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new Error('poll')), pollMs);
    const t = g.enter(key, ac.signal, Infinity, () => 0);
    try {
      await t.pass();
    } catch (e) {
      if (e instanceof BrokenCircuitError) return this.answer(key, 'refused', { retryAfterMs: e.retryAfterMs });
      return this.answer(key, 'wait');
    } finally {
      clearTimeout(timer);
    }
    // Released while probing: this request is the probe (the others are released only once healthy).
    if (g.state(key).phase === 'probing') {
      const id = ++this.#seq;
      this.#probes.set(id, { t, key, at: Date.now() });
      return this.answer(key, 'probe', { id });
    }
    t.cancel();
    return this.answer(key, 'go');
  }

  /**
   * Lets go of the probes whose isolates will not report them (their
   * request ended first, say): those out for probeTimeoutMs (the gate has
   * counted them failed and gone on) and, once their target is healthy
   * again, all of its own. Their late reports change nothing.
   */
  #letGo() {
    const g = /** @type {Gate} */ (this.gate);
    const timeout = this.options?.probeTimeoutMs ?? 30_000;
    const now = Date.now();
    for (const [id, p] of this.#probes) {
      // (state() brings the gate up to now first: a probe out for probeTimeoutMs is no longer the current one)
      if (g.state(p.key).phase === 'healthy' || now - p.at >= timeout) {
        this.#probes.delete(id);
        p.t.cancel();
      }
    }
  }

  /**
   * RPC: the outcome of probe `id`: closes the circuit (the waiting isolates
   * are answered `go`) or starts the next round; `null`: the probe was
   * cancelled (the next request probes). Answers the state.
   * @param {string} key
   * @param {number} id
   * @param {boolean | null} ok
   * @param {Record<string, any>} options
   */
  probed(key, id, ok, options) {
    this.rpcs.probed++;
    this.of(options);
    const p = this.#probes.get(id);
    if (p) {
      this.#probes.delete(id);
      if (ok === null) p.t.cancel();
      else p.t.settle(!ok, false);
    }
    return this.answer(key, 'state');
  }

  /**
   * RPC: an isolate's report to the shared limiter of `key` (what it sent,
   * wanted and was throttled since its last); answers its share
   * (js/fleet-limiter.js).
   * @param {string} key
   * @param {import('./fleet-limiter.js').Report} report
   */
  lease(key, report) {
    this.rpcs.lease++;
    let l = this.limiters.get(key);
    if (!l) this.limiters.set(key, (l = new FleetLimiter()));
    return l.lease(report, Date.now());
  }
}

/**
 * An isolate's gate whose circuits are kept in GateObjects (one per key).
 * The local gate (this) holds the calls, keeps their limits and sends them;
 * the object decides when a target trips, when its round ends and which
 * isolate probes. See sharedGate.
 */
export class SharedGate extends Gate {
  #ns;
  #name;
  #shared;
  #pollMs;
  /** @type {Map<string, Key>} */
  #keys = new Map();
  /** The round trips on their way (flush() waits for them), and when each goes stale. @type {Map<Promise<unknown>, number>} */
  #out = new Map();
  /** The isolate's default per-call deadline (ms from the call). */
  #maxElapsedMs;
  /** Round trips to the objects, by method. */
  rpcs = { report: 0, admit: 0, probed: 0, lease: 0 };
  /** This isolate, to the objects' limiters. */
  #id = Math.random().toString(36).slice(2) + Date.now().toString(36);
  /** The statuses that say "throttled" (`throttleOn`); undefined: no shared limiter. @type {Set<number> | undefined} */
  #throttleOn;
  /** @type {Map<string, Lease>} */
  #leases = new Map();
  /** No threshold (`consecutive: Infinity`, no `failureRatio`): failures are not reported. */
  #never = false;

  /**
   * @param {any} namespace
   * @param {Record<string, any>} [options]
   */
  constructor(namespace, options) {
    if (typeof namespace?.idFromName !== 'function' || typeof namespace.get !== 'function') {
      throw new TypeError('namespace must be a Durable Object namespace binding (env.<BINDING>) of a GateObject');
    }
    const o = own(options, 'gate options');
    const name = fn(o, 'name');
    const pollMs = number(o, 'pollMs', 10_000, (v) => v >= 1 && v <= 60_000, 'a number in [1, 60000]');
    // Every option checked as createGate checks it; the threshold goes to the object.
    new Gate(o).free();
    const local = { ...o };
    for (const k of TRIP) delete local[k];
    // The adaptive limiter is the object's (the local gate limits nothing itself).
    delete local.limit;
    super({ ...local, consecutive: Infinity });
    if (o.limit === 'adaptive') this.#throttleOn = new Set(o.throttleOn ?? [429]);
    this.#ns = namespace;
    this.#name = name ?? ((/** @type {string} */ k) => k);
    this.#shared = sharedPart(o);
    this.#never = o.consecutive === Infinity && o.failureRatio === undefined;
    this.#pollMs = pollMs;
    this.#maxElapsedMs = o.maxElapsedMs ?? Infinity;
  }

  /**
   * Method `m` of the object of `key` (a stub per call: workerd binds a stub
   * to the request that made it). Counted in `rpcs`.
   * @param {'report' | 'admit' | 'probed' | 'lease'} m
   * @param {string} key
   * @param {...unknown} args
   * @returns {Promise<Answer>}
   */
  rpc(m, key, ...args) {
    this.rpcs[m]++;
    const name = this.#name(key);
    if (typeof name !== 'string' || !name) throw new TypeError('name must return a non-empty string');
    // (a stub that cannot be had, or a method that throws, rejects like an RPC that failed:
    // the probe's report is made in its call's settle, which must not throw)
    try {
      const stub = this.#ns.get(this.#ns.idFromName(name));
      return Promise.resolve(stub[m](key, ...args, this.#shared));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** The per-key bookkeeping. */
  k(/** @type {string} */ key) {
    let k = this.#keys.get(key);
    if (!k) this.#keys.set(key, (k = { ok: 0, failed: 0, at: 0 }));
    return k;
  }

  /**
   * Takes up the object's state of `key` when it is open (the local gate
   * then holds its calls until the round the object named ends).
   * @param {string} key
   * @param {Answer} a
   */
  follow(key, a) {
    if (!a.target || a.target.state === 'closed') return;
    try {
      this.restore({ version: 1, savedAt: a.savedAt, targets: { [key]: a.target } });
    } catch {
      // (clock skew: the local gate goes on with its own round)
    }
  }

  /**
   * Waits, within the limits of call `t`, for the report of `key` on its
   * way (the object's state may hold the call); one unanswered for
   * STALE_MS is given up, and the failures counted since go in a new one.
   * @param {string} key
   * @param {Limits} t
   */
  async reported(key, t) {
    const k = this.k(key);
    const p = k.pending;
    if (p && (await within(p, t, k.at + STALE_MS)) === STALE && k.pending === p) {
      k.pending = undefined;
      if (this.state(key).phase === 'healthy') this.#report(key, k);
    }
  }

  /** A failure (or success) of a call sent while the local gate was healthy: counted, and failures reported. */
  note(/** @type {string} */ key, /** @type {boolean} */ hurt) {
    const k = this.k(key);
    if (!hurt) {
      k.ok++;
      return;
    }
    if (this.state(key).phase !== 'healthy') return; // (the object said open already: the failure joins that round)
    if (this.#never) return; // (no threshold: the object's circuit never opens, a report would change nothing)
    k.failed++;
    this.#report(key, k);
  }

  /**
   * Sends the failures counted for `key` in one report, after the macrotask
   * (the failures that come back together are one report), unless one is on
   * its way; those counted meanwhile go in the next, sent when it is
   * answered or given up (unanswered for STALE_MS).
   * @param {string} key
   * @param {Key} k
   */
  #report(key, k) {
    if (k.failed === 0 || (k.pending && Date.now() < k.at + STALE_MS)) return;
    k.at = Date.now();
    const p = this.track(
      new Promise((r) => setTimeout(r, 0))
        .then(() => {
          const [ok, failed] = [k.ok, k.failed];
          k.ok = k.failed = 0;
          return this.rpc('report', key, ok, failed);
        })
        .then(
          (a) => {
            if (a.phase !== 'healthy' && this.state(key).phase === 'healthy') this.follow(key, a);
          },
          () => {}, // the object unreachable: the local gate goes on alone
        )
        .finally(() => {
          if (k.pending !== p) return; // (given up meanwhile)
          k.pending = undefined;
          if (this.state(key).phase === 'healthy') this.#report(key, k);
          else k.failed = 0;
        }),
    );
    k.pending = p;
  }

  /** The shared limiter's state of `key` in this isolate (undefined without `limit: 'adaptive'`). */
  #lease(/** @type {string} */ key) {
    if (!this.#throttleOn) return undefined;
    let l = this.#leases.get(key);
    if (!l) this.#leases.set(key, (l = new Lease()));
    return l;
  }

  /**
   * This isolate's share of the fleet's rate for `key`: `rate` (req/s;
   * Infinity while the fleet has not been throttled), the fleet's `fleet`,
   * and `alone` (the object could not be reached: this isolate's own
   * limiter decides). Undefined without `limit: 'adaptive'`.
   * @param {string} key
   */
  share(key) {
    const l = this.#lease(key);
    return l && { rate: l.share, fleet: l.fleet, alone: l.alone };
  }

  /**
   * Waits for the token of one attempt at `key` (none while the fleet has
   * not been throttled), within `t`'s limits; asks for the next share when
   * this one is old.
   * @param {string} key
   * @param {{ signal?: AbortSignal, deadline: number }} t
   */
  async limited(key, t) {
    const l = this.#lease(key);
    if (!l) return;
    if (Date.now() >= l.renewAt) this.#renew(key, l);
    if (!(await l.wait(t.deadline, t.signal, () => this.#renew(key, l)))) throw new GateTimeoutError(key, 'deadline');
  }

  /**
   * An answer from `key` (not a network failure): fed to the isolate's own
   * limiter (its send rate, and its fallback), and the first throttling one
   * since the last report is reported at once.
   * @param {string} key
   * @param {number | undefined} status
   * @param {number | undefined} ra the wait the answer named (ms)
   */
  answered(key, status, ra) {
    const l = this.#lease(key);
    if (!l) return;
    const on = /** @type {Set<number>} */ (this.#throttleOn);
    const now = Date.now();
    // (a share is asked for again once it is LEASE_MS old, with the throttles counted meanwhile:
    // the fleet cuts at most once a lease period, so an earlier report would change nothing;
    // a throttle while a report is out checks that it has not gone stale)
    const throttled = on.has(/** @type {number} */ (status)) || (status === 503 && ra !== undefined);
    if ((l.answered(throttled, ra, now) || (throttled && l.pending)) && l.due(now)) this.#renew(key, l);
  }

  /**
   * Reports to the shared limiter of `key` (after the macrotask: the
   * answers that come back together are one report), unless a report is on
   * its way (one unanswered for STALE_MS is given up: this isolate's own
   * limiter decides until an answer comes); a throttle counted meanwhile
   * goes in the next, sent when it is answered.
   * @param {string} key
   * @param {Lease} l
   */
  #renew(key, l) {
    if (l.pending) {
      if (Date.now() < l.pendingAt + STALE_MS) return;
      // Unanswered for STALE_MS: given up (as if the object could not be reached, until this one is answered).
      l.alone = true;
    }
    l.pendingAt = Date.now();
    const p = this.track(
      new Promise((r) => setTimeout(r, 0))
        .then(() => this.rpc('lease', key, l.report(this.#id, Date.now())))
        .then((a) => l.follow(/** @type {any} */ (a), Date.now()))
        .then(
          () => {},
          () => {
            // The object unreachable: this isolate's own limiter, until a report gets through.
            l.alone = true;
            l.renewAt = Date.now() + LEASE_MS;
          },
        )
        .finally(() => {
          if (l.pending !== p) return; // (given up meanwhile)
          l.pending = undefined;
          if (l.throttled > 0 && l.due(Date.now())) this.#renew(key, l);
        }),
    );
    l.pending = p;
  }

  /** Frees the local gate and this isolate's limiters. */
  free() {
    for (const l of this.#leases.values()) l.free();
    this.#leases.clear();
    super.free();
  }

  /** Keeps `p` until it settles, or for STALE_MS (flush() waits for it). */
  track(/** @type {Promise<any>} */ p) {
    this.#out.set(p, Date.now() + STALE_MS);
    p.finally(() => this.#out.delete(p)).catch(() => {});
    return p;
  }

  /**
   * Resolves when every report of this isolate has reached its object, or
   * been given up (unanswered for STALE_MS, 1 s: in workerd, a report whose
   * request ended first is never answered). In Cloudflare Workers:
   * `ctx.waitUntil(gate.flush())` in a request whose call may have been a
   * probe (in a `finally`: also when the call throws), so its outcome is
   * not lost with the request.
   */
  flush() {
    return this.#flush({ deadline: Infinity });
  }

  /** flush(), within limits `t` (at its deadline or abort, it stops waiting: the reports go on). */
  async #flush(/** @type {Limits} */ t) {
    for (;;) {
      const now = Date.now();
      let until = Infinity;
      for (const [p, stale] of this.#out) {
        if (stale <= now) this.#out.delete(p);
        else until = Math.min(until, stale);
      }
      if (!this.#out.size) return;
      try {
        await within(Promise.allSettled(this.#out.keys()), t, until);
      } catch {
        return;
      }
    }
  }

  get pollMs() {
    return this.#pollMs;
  }

  /** @param {unknown} key @param {AbortSignal | undefined} signal @param {number} deadline @param {(hintMs?: number) => number} spend */
  enter(key, signal, deadline, spend) {
    if (typeof key !== 'string') throw new TypeError('a shared gate takes string keys only (key must return a string)');
    return /** @type {any} */ (new SharedTicket(this, key, signal, deadline, super.enter(key, signal, deadline, spend)));
  }

  /**
   * Gate.run, then waits for the call's reports to reach the object.
   * @template T
   * @param {unknown} key
   * @param {(ctx: { signal?: AbortSignal }) => T | Promise<T>} task
   * @param {{ signal?: AbortSignal, maxAttempts?: number, maxElapsedMs?: number }} [options]
   * @returns {Promise<T>}
   */
  async run(key, task, options) {
    const start = Date.now();
    try {
      return await super.run(key, task, options);
    } finally {
      // Within the call's limits (its options were checked by Gate.run, or their error is what it throws).
      if (this.#out.size) {
        const o = /** @type {any} */ (options);
        const signal = o?.signal instanceof AbortSignal ? o.signal : undefined;
        const ms = typeof o?.maxElapsedMs === 'number' ? o.maxElapsedMs : this.#maxElapsedMs;
        await this.#flush({ signal, deadline: start + ms });
      }
    }
  }
}

/** One call's passage through a shared gate: the local ticket, and the object consulted when the local gate probes. */
class SharedTicket {
  /** The object's probe id while this call is the fleet's probe. */
  probe = 0;
  /** @type {string | undefined} */
  #why;

  /**
   * @param {SharedGate} g
   * @param {string} key
   * @param {AbortSignal | undefined} signal
   * @param {number} deadline
   * @param {any} inner the local gate's ticket
   */
  constructor(g, key, signal, deadline, inner) {
    /** @type {SharedGate} */ this.g = g;
    /** @type {string} */ this.key = key;
    /** @type {AbortSignal | undefined} */ this.signal = signal;
    /** @type {number} */ this.deadline = deadline;
    /** @type {any} */ this.inner = inner;
  }

  get why() {
    return this.#why ?? this.inner.why;
  }

  async pass() {
    const { g, key, inner, signal } = this;
    if (g.k(key).pending) {
      try {
        await g.reported(key, this);
      } catch (e) {
        if (e instanceof GateTimeoutError) this.#why = 'deadline';
        throw e;
      }
    }
    // A new attempt (not one held by the gate, as in the local gate) waits for its token first.
    if (inner.state === 0) {
      try {
        await g.limited(key, this);
      } catch (e) {
        if (e instanceof GateTimeoutError) this.#why = 'deadline';
        throw e;
      }
    }
    await inner.pass();
    // Healthy: straight out. Probing: this call is the local gate's probe; the object decides.
    if (g.state(key).phase !== 'probing') return;
    for (;;) {
      const asked = g.rpc('admit', key, g.pollMs);
      /** @type {Answer | typeof STALE} */
      let a;
      try {
        a = await within(asked, this, Date.now() + g.pollMs + STALE_MS);
      } catch (e) {
        if (!(e instanceof GateTimeoutError || signal?.aborted)) return; // the object unreachable: this isolate probes on its own
        // The call's deadline or abort: a probe granted later is handed back.
        this.#abandon(asked);
        inner.cancel();
        if (e instanceof GateTimeoutError) this.#why = 'deadline';
        throw e;
      }
      if (a === STALE) {
        this.#abandon(asked);
        return; // unanswered: as if the object could not be reached
      }
      if (a.kind === 'probe') {
        this.probe = /** @type {number} */ (a.id);
        return;
      }
      if (a.kind === 'go') return;
      if (a.kind === 'refused') {
        inner.cancel();
        g.follow(key, a);
        this.#why = 'circuit-open';
        throw new BrokenCircuitError(key, /** @type {number} */ (a.retryAfterMs), false);
      }
      // 'wait': the poll ran out; ask again, within this call's limits.
      if (signal?.aborted) {
        inner.cancel();
        throw signal.reason;
      }
      if (Date.now() >= this.deadline) {
        inner.cancel();
        this.#why = 'deadline';
        throw new GateTimeoutError(key, 'deadline');
      }
    }
  }

  /** An admit no one waits for: if it makes this isolate the fleet's probe, the probe is reported cancelled. */
  #abandon(/** @type {Promise<Answer>} */ asked) {
    asked.then(
      (a) => {
        if (a?.kind !== 'probe') return;
        this.probe = /** @type {number} */ (a.id);
        this.#note(null);
      },
      () => {},
    );
  }

  /** Reports the outcome where the object needs it: the probe's always (null: cancelled), a failure while healthy. */
  #note(/** @type {boolean | null} */ hurt) {
    const { g, key } = this;
    if (this.probe) {
      const id = this.probe;
      this.probe = 0;
      g.track(
        g.rpc('probed', key, id, hurt === null ? null : !hurt).then(
          (a) => {
            // A failed probe: the local round follows the object's (which every isolate waits for).
            if (hurt) g.follow(key, a);
          },
          () => {},
        ),
      );
    } else if (hurt !== null) g.note(key, hurt);
  }

  /**
   * @param {boolean} hurt
   * @param {boolean} [retry]
   * @param {number} [hintMs]
   */
  settle(hurt, retry, hintMs) {
    this.#note(hurt);
    return this.inner.settle(hurt, retry, hintMs);
  }

  cancel() {
    // (a cancelled probe says nothing about the target: the object's next request probes)
    if (this.probe) this.#note(null);
    this.inner.cancel();
  }

  /**
   * The lane's step after an attempt (Ticket.after in gate.js), with the outcome noted for the object first.
   * @param {import('./engine/call.js').Call} call
   * @param {string} why
   * @param {import('./engine/loop.js').Outcome} o
   */
  after(call, why, o) {
    this.#note(!!o.hurt);
    if (!o.failed) this.g.answered(this.key, o.status, o.hintMs);
    return this.inner.after(call, why, o);
  }

  waitMs() {
    return this.inner.waitMs();
  }
}

/**
 * A gate for `gate.run(key, task)` and the `gate` option of the fetch
 * driver whose circuits are shared by every isolate through the GateObjects
 * of `namespace` (one object per key, named by `options.name(key)`, default
 * the key). Healthy calls cost no round trip. Make it once per isolate
 * (module scope, from the first request's `env`).
 * @param {any} namespace
 * @param {Record<string, any>} [options]
 */
export function sharedGate(namespace, options) {
  return new SharedGate(namespace, options);
}
