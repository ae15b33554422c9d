// @ts-check
// The Durable Object of a fleet's shared gate (workerd build only: the other
// builds of `wasm-backoff/gate` export a stub that throws, from
// js/fleet-elsewhere.js; scripts/bundle.mjs). Each
// object keeps the circuits of the keys named after it (one per key with
// sharedGate's default `name`) in a GateHub (js/fleet/hub.js): a real gate, the
// Rust core's state machine, driven by the isolates' RPCs. Its circuit
// states are written to the object's storage on every change and taken up
// when the object starts again, so an eviction does not close an open circuit.
import { DurableObject } from 'cloudflare:workers';
import { GateHub } from './hub.js';
import { BudgetHub } from './shared-budget.js';

const SAVED = 'gate';

/**
 * Bind it as is (`export { GateObject } from 'wasm-backoff/gate'`); the
 * options come with the isolates' requests (the first request's make the
 * object's gate). RPC methods: `report`, `admit`, `probed`, `lease` (sharedGate's),
 * `budget` (sharedBudget's), and `stats` (what it has answered, its gate's
 * counters, its limiters' and its budgets').
 */
export class GateObject extends DurableObject {
  #hub;
  /** sharedBudget's retry budgets (soft state: not saved; a restarted object starts a fresh window). */
  #budgets = new BudgetHub();
  #saving = Promise.resolve();

  /**
   * @param {any} ctx
   * @param {any} env
   */
  constructor(ctx, env) {
    super(ctx, env);
    this.#hub = new GateHub({ onStateChange: () => this.#save() });
    ctx.blockConcurrencyWhile(async () => {
      const saved = await ctx.storage.get(SAVED);
      if (!saved) return;
      try {
        this.#hub.of(saved.options).restore(saved.state);
      } catch {
        // (a state from the future, or malformed: those targets start closed)
      }
    });
  }

  /** Writes the circuits (after the change is done: the hook runs in a microtask). */
  #save() {
    const hub = this.#hub;
    this.#saving = this.#saving
      .then(() => this.ctx.storage.put(SAVED, { options: hub.options, state: hub.gate?.toJSON() }))
      .catch(() => {});
  }

  /** @param {string} key @param {number} ok @param {number} failed @param {Record<string, any>} options */
  report(key, ok, failed, options) {
    return this.#hub.report(key, ok, failed, options);
  }

  /** @param {string} key @param {number} pollMs @param {Record<string, any>} options */
  admit(key, pollMs, options) {
    return this.#hub.admit(key, pollMs, options);
  }

  /** @param {string} key @param {number} id @param {boolean | null} ok @param {Record<string, any>} options */
  probed(key, id, ok, options) {
    return this.#hub.probed(key, id, ok, options);
  }

  /** @param {string} key @param {import('./limiter.js').Report} report */
  lease(key, report) {
    return this.#hub.lease(key, report);
  }

  /** @param {string} key @param {number} deposits @param {number} ask @param {Record<string, any>} options */
  budget(key, deposits, ask, options) {
    return this.#budgets.budget(key, deposits, ask, options);
  }

  /** The requests answered, by method, the object's gate's counters, its limiters' states and its budgets' counts. */
  stats() {
    const hub = this.#hub;
    return {
      rpcs: { ...hub.rpcs },
      gate: hub.gate?.stats() ?? null,
      limiters: Object.fromEntries([...hub.limiters].map(([k, l]) => [k, l.toJSON()])),
      budget: { ...this.#budgets.counts },
    };
  }
}
