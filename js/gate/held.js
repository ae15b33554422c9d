// @ts-check
// The calls a target holds, in arrival order (a slot's HeldQueue, js/gate/slot.js):
// their promises wait in their tickets; this keeps the order, the abort
// listener and deadline timer of each, and takes them out as the core
// says (evicted, out of attempts or time, released in order).
import { w } from '../wasm.js';
import { GateOverflowError, GateTimeoutError } from './errors.js';
import { ended, at } from './answers.js';
import { EVICT_HEAD, HELD } from '../gen/boundary.js';

/** @typedef {import('./ticket.js').Ticket} Ticket */
/** @typedef {import('./slot.js').Slot} Slot */
/** @typedef {'evicted' | 'aborted' | 'deadline' | 'exhausted' | 'freed'} Out */

/** The calls a target holds, oldest first. */
export class HeldQueue {
  /** @type {Ticket[]} */
  #q = [];
  /** The slot whose calls these are. */
  #s;

  /** @param {Slot} s */
  constructor(s) {
    this.#s = s;
  }

  /** Calls held now. */
  get size() {
    return this.#q.length;
  }

  /**
   * Holds `t` in arrival order, then evicts as the core said (`code`:
   * HELD, EVICT_HEAD, EVICT_TAIL); a call aborted already, or whose
   * deadline comes before the gate wakes, is let go at once.
   * @param {Ticket} t
   * @param {number} code
   */
  hold(t, code) {
    const q = this.#q;
    let i = q.length;
    while (i > 0 && q[i - 1].seq > t.seq) i--;
    q.splice(i, 0, t);
    t.hold();
    if (code !== HELD) {
      const victim = code === EVICT_HEAD ? q[0] : q[q.length - 1];
      this.out(victim, 'evicted', false, new GateOverflowError(t.key));
      if (victim === t) return;
    }
    if (t.signal?.aborted) return this.out(t, 'aborted');
    const why = this.#keep(t, NaN);
    if (why) return this.out(t, /** @type {Out} */ (why));
    if (t.signal)
      t.signal.addEventListener('abort', /** @type {() => void} */ ((t.onAbort = () => this.out(t, 'aborted', true))), { once: true });
    // (re-armed when the timer was clamped to MAX_TIMER, or fired early)
    const arm = () => (t.timer = at(() => (Date.now() < t.deadline ? arm() : this.out(t, 'deadline', true)), t.deadline));
    if (t.deadline !== Infinity) arm();
  }

  /**
   * Why held `t` leaves now ('exhausted', 'deadline'), or '' when it stays:
   * the core's answer (Gate::keep) for its own next delay `own` (NaN: none spent).
   * @param {Ticket} t
   * @param {number} own
   */
  #keep(t, own) {
    return this.#s.dead ? '' : ended(w.gate_keep(this.#s.h, own, t.deadline));
  }

  /**
   * Takes held `t` out and rejects it, `why` being 'evicted' (the core has
   * not counted it as held), 'aborted', 'deadline', 'exhausted' or
   * 'freed'; `own` = called from t's own context (its abort or deadline).
   * @param {Ticket} t
   * @param {Out} why
   * @param {boolean} [own]
   * @param {unknown} [error]
   */
  out(
    t,
    why,
    own,
    error = why === 'aborted'
      ? /** @type {AbortSignal} */ (t.signal).reason
      : new GateTimeoutError(t.key, /** @type {'deadline' | 'exhausted'} */ (why)),
  ) {
    const i = this.#q.indexOf(t);
    if (i < 0) return;
    this.#q.splice(i, 1);
    unhook(t);
    if (why !== 'evicted') this.#s.op(w.gate_left, why === 'deadline' || why === 'exhausted');
    if (own) clearTimeout(t.poll);
    t.refuse(why, error);
    this.#s.sync();
  }

  /**
   * Lets the oldest held call go, with the tag the core gave it.
   * @param {number} tag
   */
  release(tag) {
    const t = /** @type {Ticket} */ (this.#q.shift());
    unhook(t);
    t.go(tag);
  }

  /**
   * A round began (a failure, or a probe that timed out): each held call
   * was tried by proxy and spends an attempt; the core says which stay.
   */
  round() {
    for (const t of [...this.#q]) {
      const why = this.#keep(t, t.spent());
      if (why) this.out(t, /** @type {Out} */ (why));
    }
  }

  /** Rejects every held call with a TypeError: the gate was freed. */
  free() {
    for (const t of [...this.#q]) this.out(t, 'freed', false, new TypeError('this Gate was freed'));
  }
}

/** Lets go of held `t`'s deadline timer and abort listener. */
function unhook(/** @type {Ticket} */ t) {
  clearTimeout(t.timer);
  t.signal?.removeEventListener('abort', /** @type {() => void} */ (t.onAbort));
  t.timer = t.onAbort = undefined;
}
