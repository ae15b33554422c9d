// @ts-check
// One gate for a fleet of isolates (Cloudflare Workers): the circuit of each
// target lives in one Durable Object (GateObject, js/fleet/gate-object.js, which
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
// the object's too, handed out as shares (js/fleet/limiter.js).
// Every wait on the object is bounded by the waiting call's deadline and
// signal, and a request unanswered after STALE_MS (an admit: pollMs more) is
// given up: in workerd, a round trip whose Worker request ended first is
// never settled for another request, and the isolate then goes on with its
// local gate (as when the object cannot be reached).
import { GateTimeoutError } from '../gate/index.js';
import { workerd } from '../hooks.js';

/** The options that stay with each isolate's local gate (the rest go to the object's). */
export const LOCAL = new Set([
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
export const TRIP = ['consecutive', 'failureRatio', 'windowMs', 'minCalls'];

export const POLL = workerd();

/** What within() resolves with when its request went stale first. */
export const STALE = Symbol('stale');

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
export function within(p, t, until) {
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
export function sharedPart(/** @type {Record<string, any>} */ o) {
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
 * What the object answers: its gate's state for the key (and whether it is
 * probing) and the target's
 * saved state (null when closed and clean), and what the request gets.
 * @typedef {import('../../types/gate/index.js').GateAnswer} Answer
 */
