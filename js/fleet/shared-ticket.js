// @ts-check
// One call's passage through a fleet's shared gate (js/fleet/protocol.js):
// the local gate's ticket, and the object consulted when the local gate probes.
import { BrokenCircuitError, GateTimeoutError } from '../gate/index.js';
import { STALE, within } from './protocol.js';
import { T_NEW } from '../gate/ticket.js';
import { STALE_MS } from './limiter.js';

/** @typedef {import('./protocol.js').Answer} Answer */
/** @typedef {import('./shared-gate.js').SharedGate} SharedGate */

/** One call's passage through a shared gate: the local ticket, and the object consulted when the local gate probes. */
export class SharedTicket {
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

  /** @param {import('../engine/call.js').Call} call @param {number} delayMs */
  async pass(call, delayMs) {
    const { g, key, inner } = this;
    if (g.k(key).pending) await this.#timed(g.reported(key, this));
    // A new attempt (not one held by the gate, as in the local gate) waits for its token first.
    if (inner.state === T_NEW) await this.#timed(g.limited(key, this));
    await inner.pass(call, delayMs);
    // Healthy: straight out. Probing: this call is the local gate's probe; the object decides.
    if (g.state(key).probing) await this.#admit();
  }

  /**
   * `p`, with a GateTimeoutError it rejects with named this call's reason ('deadline').
   * @param {Promise<unknown>} p
   */
  async #timed(p) {
    try {
      await p;
    } catch (e) {
      if (e instanceof GateTimeoutError) this.#why = 'deadline';
      throw e;
    }
  }

  /**
   * The local gate's probe asks the object (a long poll, again and again
   * within this call's limits): resolves when this call may go — as the
   * fleet's probe, because the circuit closed, or because the object
   * cannot be reached (this isolate then probes on its own) — and rejects
   * when it must not (fail-fast refusal, the call's deadline or abort).
   */
  async #admit() {
    const { g, key, inner, signal } = this;
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
      this.#polled();
    }
  }

  /** 'wait': the poll ran out; another may be asked only within this call's limits. */
  #polled() {
    const { key, inner, signal } = this;
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

  cancel() {
    // (a cancelled probe says nothing about the target: the object's next request probes)
    if (this.probe) this.#note(null);
    this.inner.cancel();
  }

  /**
   * The lane's step after an attempt (Ticket.after in gate.js), with the outcome noted for the object first.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Verdict} v
   * @param {import('../engine/loop.js').Outcome} o
   */
  after(call, v, o) {
    // (an attempt sent before the last round — or before the object's round this isolate followed —
    // is no news of the target: its outcome is reported to no one, as the local core ignores it)
    if (this.probe || this.inner.news()) this.#note(v.hurt);
    if (!o.failed) this.g.answered(this.key, o.status, o.hintMs);
    return this.inner.after(call, v, o);
  }

  /** Whether the call waits in the local gate's held queue now. */
  held() {
    return this.inner.held();
  }

  /** Whether the target looks healthy now (the fleet's view). */
  healthy() {
    return this.inner.healthy();
  }

  /** Nothing more for onDone. */
  about() {
    return undefined;
  }
}
