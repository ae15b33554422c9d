// @ts-check
// A target's slot in a gate: its state machine in the core, one operation
// at a time (`op`: the status it answers is the slot's `st`), its held
// calls (a HeldQueue), and the one wake-up timer per target while the core
// wants one. The core decides; the slot keeps the timer and tells
// onStateChange when the circuit changes.
import { w, mem, OUT } from '../wasm.js';
import { observe } from '../hooks.js';
import { HeldQueue } from './held.js';
import { at } from './answers.js';
import {
  CAUSES,
  CIRCUIT,
  PHASES,
  WAKE_IDLE,
  WAKE_NONE,
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
} from '../gen/boundary.js';

/**
 * What a gate's slots share: its onStateChange, whether its targets are
 * limited (`limit: 'adaptive'`), the statuses that say "throttled".
 * @typedef {{ on?: (info: any) => unknown, limited: boolean, throttleOn: Set<number> }} Shared
 */

/** One target of a gate. */
export class Slot {
  /** The status the core answered to the last operation (GATE_PHASE … GATE_UNTIL). */
  st = new Float64Array(GATE_UNTIL + 1);
  /** The circuit's state last told (onStateChange). */
  #circuit = 'closed';
  /** The rounds the held calls have paid for. */
  #rounds = 0;
  /** The epoch time the wake-up timer is armed for (WAKE_NONE: none). */
  #at = WAKE_NONE;
  /** @type {any} */
  #timer;
  /** Until when its calls wait before their first attempt (Gate.pace), epoch ms. */
  until = 0;
  /** Freed in the module: every operation answers NaN. */
  dead = false;

  /**
   * @param {unknown} key
   * @param {number} h its gate's handle in the module
   * @param {Shared} shared
   */
  constructor(key, h, shared) {
    this.key = key;
    this.h = h;
    this.shared = shared;
    this.queue = new HeldQueue(this);
  }

  /**
   * Operation `f` of the core on this target's gate (NaN once dropped:
   * nothing to send, nothing to wake). Its status is then `st` (copied at
   * once: read later, the record may hold another slot's answer); a change
   * of the circuit's state is told to onStateChange.
   * @param {(h: number, ...args: any[]) => any} f
   * @param {...any} args
   */
  op(f, ...args) {
    if (this.dead) return NaN;
    const r = f(this.h, ...args);
    const m = mem();
    for (let i = 0; i < this.st.length; i++) this.st[i] = m[OUT + i];
    const to = CIRCUIT[this.st[GATE_PHASE]];
    const from = this.#circuit;
    if (to !== from) {
      this.#circuit = to;
      const on = this.shared.on;
      const info = { key: this.key, from, to, reason: CAUSES[this.st[GATE_CAUSE]] };
      // (later, outside the gate's own bookkeeping: the hook may call the gate)
      if (on) queueMicrotask(() => observe(on, info));
    }
    return r;
  }

  /** Where the target stands as its last operation answered (gate.state()). */
  view() {
    const st = this.st;
    return {
      state: /** @type {import('../../types/gate/index.js').CircuitState} */ (this.#circuit),
      probing: PHASES[st[GATE_PHASE]] === 'probing',
      held: st[GATE_HELD],
      inFlight: st[GATE_IN_FLIGHT],
    };
  }

  /**
   * How long until the next probe may go, in whole ms (the error of a call
   * refused while the circuit is open): rounded up, so that a call made
   * that long after is not refused again; Infinity while isolated.
   */
  retryAfterMs() {
    const st = this.st;
    return PHASES[st[GATE_PHASE]] === 'isolated' ? Infinity : Math.ceil(Math.max(0, st[GATE_UNTIL] - Date.now()));
  }

  /** Whether the core has nothing to remember of this target now (its slot may go). */
  idle() {
    this.op(w.gate_status);
    return this.st[GATE_WAKE] === WAKE_IDLE;
  }

  /**
   * Adds this target's counters, as its last operation answered them, to `n` (gate.stats()).
   * @param {{ evictions: number, rounds: number, probes: number, timeouts: number }} n
   */
  count(n) {
    const st = this.st;
    n.evictions += st[GATE_EVICTIONS];
    n.rounds += st[GATE_ROUNDS];
    n.probes += st[GATE_PROBES];
    n.timeouts += st[GATE_TIMEOUTS];
  }

  /** When a round began since the last look (a failure, or a probe that timed out), the held calls pay for it. */
  round() {
    const r = this.st[GATE_ROUNDS];
    if (this.dead || r === this.#rounds) return;
    this.#rounds = r;
    this.queue.round();
  }

  /** Sends whatever the core releases (the probe, or the held calls in order), then syncs the timer. */
  pump() {
    if (this.dead) return;
    for (let tag; this.queue.size > 0 && (tag = this.op(w.gate_take, Date.now())) >= 0; ) this.queue.release(tag);
    this.round();
    this.sync();
  }

  /** One timer per target, armed exactly while the core wants a wake-up (the status of the last operation says when). */
  sync() {
    if (this.dead) return;
    const t = Math.max(this.st[GATE_WAKE], WAKE_NONE);
    if (t === this.#at) return;
    clearTimeout(this.#timer);
    this.#at = t;
    this.#timer =
      t === WAKE_NONE
        ? undefined
        : at(() => {
            this.#at = WAKE_NONE;
            this.#timer = undefined;
            this.op(w.gate_status);
            this.pump();
          }, t);
  }

  /** Frees this target's gate in the module; late callers get NaN from `op`. */
  drop() {
    if (this.dead) return;
    this.dead = true;
    clearTimeout(this.#timer);
    w.gate_free(this.h);
  }
}
