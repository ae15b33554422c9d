// @ts-check
// The object's side of a fleet's shared gate (js/fleet/protocol.js says the
// protocol): a GateHub runs in each GateObject (js/fleet/gate-object.js).
// Runtime-free, so the benchmark runs it in virtual time.
import { own } from '../options.js';
import { Gate, BrokenCircuitError } from '../gate/index.js';
import { FleetLimiter } from './limiter.js';
import { sharedPart } from './protocol.js';

/** @typedef {import('./protocol.js').Answer} Answer */

/**
 * The object's side, runtime-free: one real Gate (the Rust core's state
 * machine) for the keys of one object, made at the first request from the
 * options it carries (the first wins), and the probes out by id.
 */
export class GateHub {
  /** @type {Gate | undefined} */
  gate;
  /** @type {Record<string, any> | undefined} The options the gate was made with. */
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
    const { state, probing } = g.state(key);
    return { kind, state, probing, savedAt, target: targets[key] ?? null, ...extra };
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
    this.of(options).record(key, ok, failed);
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
    if (g.state(key).probing) {
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
      if (g.state(p.key).state === 'closed' || now - p.at >= timeout) {
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
   * (js/fleet/limiter.js).
   * @param {string} key
   * @param {import('./limiter.js').Report} report
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
