// How the queue tells failures apart and records them: PermanentError (no
// retries), the test for it, the wording of `lastError`, and the messages of
// the failures the queue itself raises.

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
