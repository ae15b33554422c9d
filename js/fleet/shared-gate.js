// @ts-check
// An isolate's side of a fleet's shared gate (js/fleet/protocol.js says the
// protocol): a local Gate that follows the GateObjects of its targets.
import { own, readAll, num, fn } from '../options.js';
import { Gate, GateTimeoutError } from '../gate/index.js';
import { Lease, LEASE_MS, STALE_MS } from './limiter.js';
import { TRIP, STALE, within, sharedPart } from './protocol.js';
import { SharedTicket } from './shared-ticket.js';
import { THROTTLE_STATUSES } from '../gen/policy.js';

/** sharedGate's own options over createGate's (SharedGateOptions). */
export const SHARED_GATE_OPTIONS = {
  name: fn(),
  pollMs: num('a number in [1, 60000]', (v) => v >= 1 && v <= 60_000, 10_000),
};

/** @typedef {import('./protocol.js').Answer} Answer */
/** @typedef {import('./protocol.js').Key} Key */
/** @typedef {import('./protocol.js').Limits} Limits */

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
    const { name, pollMs } = readAll(o, SHARED_GATE_OPTIONS);
    // Every option checked as createGate checks it; the threshold goes to the object.
    new Gate(o).free();
    const local = { ...o };
    for (const k of TRIP) delete local[k];
    // The adaptive limiter is the object's (the local gate limits nothing itself).
    delete local.limit;
    super({ ...local, consecutive: Infinity });
    if (o.limit === 'adaptive') this.#throttleOn = new Set(o.throttleOn ?? THROTTLE_STATUSES);
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
      if (this.state(key).state === 'closed') this.#report(key, k);
    }
  }

  /** A failure (or success) of a call sent while the local gate was healthy: counted, and failures reported. */
  note(/** @type {string} */ key, /** @type {boolean} */ hurt) {
    const k = this.k(key);
    if (!hurt) {
      k.ok++;
      return;
    }
    if (this.state(key).state !== 'closed') return; // (the object said open already: the failure joins that round)
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
            if (a.state !== 'closed' && this.state(key).state === 'closed') this.follow(key, a);
          },
          () => {}, // the object unreachable: the local gate goes on alone
        )
        .finally(() => {
          if (k.pending !== p) return; // (given up meanwhile)
          k.pending = undefined;
          if (this.state(key).state === 'closed') this.#report(key, k);
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

  /** @param {unknown} key @param {AbortSignal | undefined} signal @param {number} deadline @param {(hintMs?: number) => number} spend @param {boolean} [pace] */
  enter(key, signal, deadline, spend, pace) {
    if (typeof key !== 'string') throw new TypeError('a shared gate takes string keys only (key must return a string)');
    return /** @type {any} */ (new SharedTicket(this, key, signal, deadline, super.enter(key, signal, deadline, spend, pace)));
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
