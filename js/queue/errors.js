// How the queue tells failures apart and records them: PermanentError (no
// retries), the test for it, the network waits (no failure counted), the
// wording of `lastError`, and the messages of the failures the queue itself
// raises.

/**
 * Thrown (or rejected with) by a handler when the task can never succeed:
 * the task goes to `error` at once, without retries. Any error with
 * `permanent: true` counts too (e.g. one made in another realm).
 */
export class PermanentError extends Error {
  /**
   * @param {string} [message]
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = 'PermanentError';
    this.permanent = /** @type {const} */ (true);
  }
}

/** `error.permanent === true`, for any value a handler may reject with (a getter that throws: not permanent). */
export function isPermanent(/** @type {any} */ error) {
  try {
    return error?.permanent === true;
  } catch {
    return false;
  }
}

/**
 * `error.network === true`: the attempt met the network's failure, not the
 * task's (the outbox's replay that got no answer, or ran while the browser
 * was offline). Such a rejection spends no failure: the task waits for the
 * network (a bounded backoff, or `online` / Background Sync sooner). Any
 * value a handler may reject with (a getter that throws: not one).
 * @param {any} error
 */
export function isNetworkWait(error) {
  try {
    return error?.network === true;
  } catch {
    return false;
  }
}

/**
 * The network waits a record has had so far (`networkWaits`): a whole
 * number, 0 when it has none (or a store dropped the field).
 * @param {{ networkWaits?: unknown }} r
 */
export const networkWaitsOf = (r) => {
  const k = r.networkWaits;
  return typeof k === 'number' && Number.isSafeInteger(k) && k > 0 ? Math.min(k, 2 ** 30) : 0;
};

/**
 * The wait a failure names (`error.retryAfterMs`: a server's Retry-After,
 * as the fetch driver's errors and the outbox's carry it), in ms; 0 when
 * it names none (or reading it throws).
 * @param {any} error
 */
export function waitOf(error) {
  try {
    const ms = error?.retryAfterMs;
    return typeof ms === 'number' && ms > 0 && ms < Infinity ? ms : 0;
  } catch {
    return 0;
  }
}

/** A failure as `lastError` records it: its message, else the value as a string; never throws. */
export function describe(/** @type {any} */ error) {
  try {
    const m = error?.message;
    if (m !== undefined) return String(m);
  } catch {}
  try {
    return String(error);
  } catch {}
  try {
    return Object.prototype.toString.call(error); // a null-prototype object
  } catch {
    return `a thrown ${typeof error}`; // a Proxy whose every trap throws
  }
}

/** A TimeoutError the queue raises itself: `message` is one of those below. */
export const timeout = (/** @type {string} */ message) => new DOMException(message, 'TimeoutError');

export const LEASE_EXPIRED = 'the lease expired (completeBy passed) before the handler settled';
export const RETENTION = 'maxRetentionMs passed before the task could run';
export const COMPENSATE_LATE = 'onCompensate did not settle within leaseMs';
