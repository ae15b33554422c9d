// @ts-check
// A target's slot in a gate, and what moves its held calls: one operation
// on the core's state machine (`op`, whose status `st` reads), the held
// queue in arrival order (`enqueue`, `out`, `pump`), the rounds a held
// call waits through (`rounds`), and the one wake-up timer per target
// (`sync`). The core decides; these keep the promises and timers.
import { w, mem, OUT } from '../wasm.js';
import { observe } from '../hooks.js';
import { GateOverflowError, GateTimeoutError } from './errors.js';
import {
  CAUSES,
  CIRCUIT,
  EVICT_HEAD,
  HELD,
  WAKE_NONE,
  GATE_CAUSE,
  GATE_PHASE,
  GATE_ROUNDS,
  GATE_WAKE,
  MAX_TIMER,
} from '../gen/boundary.js';

/** @typedef {import('./ticket.js').Ticket} Ticket */

/**
 * Where a ticket stands (Ticket.state): not yet admitted, held in its
 * slot's queue, let go (may send with its tag), refused (rejected with
 * `error`), done (its outcome told).
 */
export const T_NEW = 0;
export const T_HELD = 1;
export const T_GO = 2;
export const T_OUT = 3;
export const T_DONE = 4;

// workerd cancels a request that waits with nothing pending in its own
// context (a promise another incoming request will resolve looks hung), and
// the timers of a finished request. There, a held call also polls from its
// own context (until the round's end while backing off, every 25 ms
// otherwise), which keeps it alive and drives the gate should the request
// that armed the gate's timer be gone; so a gate can be shared by incoming
// requests.
export const POLL = globalThis.navigator?.userAgent === 'Cloudflare-Workers';

/**
 * Operation `f` of the core on the gate of slot `s` (a dropped slot answers
 * -1 to late callers: nothing to send, nothing to wake). The status it
 * answers is then the slot's `st` (copied out of the result record); a change of the circuit's
 * state is reported to `onStateChange`.
 * @param {Slot} s
 * @param {(h: number, ...args: any[]) => any} f
 * @param {...any} args
 */
export function op(s, f, ...args) {
  if (s.dead) return -1;
  const r = f(s.h, ...args);
  // (copied into the slot at once: read later, the record may hold another slot's answer)
  const m = mem();
  for (let i = 0; i < s.st.length; i++) s.st[i] = m[OUT + i];
  const p = s.st[GATE_PHASE];
  if (p !== s.phase) {
    const [from, to] = [CIRCUIT[s.phase], CIRCUIT[p]];
    s.phase = p;
    if (from !== to && s.on) {
      const info = { key: s.key, from, to, reason: CAUSES[s.st[GATE_CAUSE]] };
      // (later, outside the gate's own bookkeeping: the hook may call the gate)
      queueMicrotask(() => observe(s.on, info));
    }
  }
  return r;
}

/** Whether held call `t` can still be served by waiting (its deadline is not before the round's end). */
export const canWait = (/** @type {Ticket} */ t) => t.s.dead || w.gate_can_wait(t.s.h, t.deadline);

/**
 * @typedef {{ key: unknown, h: number, st: Float64Array, queue: Ticket[], at: number, rounds: number, phase: number, on?: (info: any) => unknown, limited: boolean, failFast: boolean, throttleOn: Set<number>, dead?: boolean, timer?: any, until: number }} Slot
 */

/**
 * A timer for the epoch time `t` (ms).
 * @param {() => void} f
 * @param {number} t
 */
export const at = (f, t) => setTimeout(f, Math.min(Math.max(0, Math.ceil(t - Date.now())), MAX_TIMER));

/** Frees the slots of gates that were not freed by hand once they are garbage. */
export const registry = new FinalizationRegistry((/** @type {Map<unknown, Slot>} */ slots) => slots.forEach(drop));

/** Frees a slot's gate in the module; late callers get -1 from `op`. */
export function drop(/** @type {Slot} */ s) {
  if (!s.dead) {
    s.dead = true;
    clearTimeout(s.timer);
    w.gate_free(s.h);
  }
}

/**
 * `t`'s next own delay (ms), or < 0 when it may not spend one more
 * attempt. `spend()` is the caller's (the
 * fetch driver makes its schedule there, at the first failure) and runs
 * inside the gate's operations, even from its timer: should it throw (out
 * of memory), the call is out of attempts, and the gate carries on.
 * @param {Ticket} t
 * @param {number} [hintMs] a server-named wait
 */
export function spent(t, hintMs) {
  try {
    return t.spend(hintMs);
  } catch {
    return -1;
  }
}

/**
 * @param {Ticket} t
 * @param {number} tag
 */
export function go(t, tag) {
  t.tag = tag;
  t.state = T_GO;
}

/**
 * Holds `t` in arrival order, then evicts as the core said (`code`: HELD, EVICT_HEAD, EVICT_TAIL).
 * @param {Ticket} t
 * @param {number} code
 */
export function enqueue(t, code) {
  const q = t.s.queue;
  let i = q.length;
  while (i > 0 && q[i - 1].seq > t.seq) i--;
  q.splice(i, 0, t);
  t.state = T_HELD;
  if (code !== HELD) {
    const victim = code === EVICT_HEAD ? q[0] : q[q.length - 1];
    out(victim, 'evicted', false, new GateOverflowError(t.key));
    if (victim === t) return;
  }
  if (t.signal?.aborted) return out(t, 'aborted');
  if (!canWait(t)) return out(t, 'deadline');
  if (t.signal) t.signal.addEventListener('abort', /** @type {() => void} */ ((t.onAbort = () => out(t, 'aborted', true))), { once: true });
  // (re-armed when the timer was clamped to MAX_TIMER, or fired early)
  const arm = () => (t.timer = at(() => (Date.now() < t.deadline ? arm() : out(t, 'deadline', true)), t.deadline));
  if (t.deadline !== Infinity) arm();
}

/** Lets go of held `t`'s deadline timer and abort listener. */
export function unhook(/** @type {Ticket} */ t) {
  clearTimeout(t.timer);
  t.signal?.removeEventListener('abort', /** @type {() => void} */ (t.onAbort));
  t.timer = t.onAbort = undefined;
}

/**
 * Takes held `t` out of the queue and rejects it, `why` being 'evicted'
 * (the core has not counted it as held), 'aborted', 'deadline', 'freed' or
 * 'exhausted'; `own` = called from t's own context (its abort or deadline).
 * @param {Ticket} t
 * @param {'evicted' | 'aborted' | 'deadline' | 'exhausted' | 'freed'} why
 * @param {boolean} [own]
 * @param {unknown} [error]
 */
export function out(
  t,
  why,
  own,
  error = why === 'aborted'
    ? /** @type {AbortSignal} */ (t.signal).reason
    : new GateTimeoutError(t.key, /** @type {'deadline' | 'exhausted'} */ (why)),
) {
  const s = t.s;
  const i = s.queue.indexOf(t);
  if (i < 0) return;
  s.queue.splice(i, 1);
  unhook(t);
  if (why !== 'evicted') op(s, w.gate_left, why === 'deadline' || why === 'exhausted');
  Object.assign(t, { state: T_OUT, error, why });
  if (own) clearTimeout(t.poll);
  wake(t);
  sync(s);
}

/** Settles held-then-released (or rejected) `t`'s promise. */
export function wake(/** @type {Ticket} */ t) {
  t.wake?.();
  t.wake = undefined;
}

/**
 * When a round started (a failure, or a probe that timed out), each held call
 * was tried by proxy and spends an attempt.
 */
export function rounds(/** @type {Slot} */ s) {
  if (s.dead) return;
  const r = s.st[GATE_ROUNDS];
  if (r === s.rounds) return;
  s.rounds = r;
  for (const t of [...s.queue]) {
    if (spent(t) < 0) out(t, 'exhausted');
    else if (!canWait(t)) out(t, 'deadline');
  }
}

/** Sends whatever the core releases (the probe, or the held calls in order), then syncs the timer. */
export function pump(/** @type {Slot} */ s) {
  if (s.dead) return;
  for (let tag; s.queue.length > 0 && (tag = op(s, w.gate_take, Date.now())) >= 0; ) {
    const t = /** @type {Ticket} */ (s.queue.shift());
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
export function sync(s) {
  if (s.dead) return;
  const t = Math.max(s.st[GATE_WAKE], WAKE_NONE);
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
