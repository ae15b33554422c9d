// @ts-check
// The retry policy of the fetch driver and of retry(fn), apart from any
// I/O: whether a finished attempt is tried again (`verdict`), and whether
// the wait it would need is allowed (`timing`). The policy is the core's
// (core/src/policy.rs): its lists, defaults and reasons are rendered into
// js/gen/policy.js, and both sides answer the same vectors,
// core/tests/policy_vectors.json (tests/fetch/policy.test.mjs here). The
// engine asks them (js/engine/judge.js, js/engine/schedule.js); with a
// gate, the gate's own rounds replace `timing` (Ticket.after in gate.js).
import { NETWORK_ERROR, REFUSED_REQUEST, METHODS, RETRY_ON, SERVER_WAIT_STATUSES } from './gen/policy.js';

export { METHODS, RETRY_ON };

/**
 * Whether `e` is a network failure of fetch (rather than a request fetch
 * refused to build or to send, or a bug): an Error (a TypeError; workerd's
 * is a plain Error) whose message begins as one of the runtimes words it,
 * unless its cause says fetch refused the request (undici's codes). The
 * wordings and codes are the Rust core's (NETWORK_ERROR_PREFIXES,
 * REFUSED_REQUEST_CODES), which the web crate reads too.
 */
export const isNetworkError = (/** @type {any} */ e) =>
  e instanceof Error && NETWORK_ERROR.test(e.message) && !REFUSED_REQUEST.test(/** @type {any} */ (e).cause?.code);

/**
 * Whether a request body can be sent again: absent, a string or bytes,
 * Blob, FormData, URLSearchParams. Streams and async iterables are read once.
 * @param {unknown} body
 */
export const replayable = (body) =>
  body == null ||
  typeof body === 'string' ||
  body instanceof ArrayBuffer ||
  ArrayBuffer.isView(body) ||
  body instanceof Blob ||
  body instanceof URLSearchParams ||
  (typeof FormData !== 'undefined' && body instanceof FormData);

/**
 * Whether an attempt is tried again: '' when it is, else why the call ends
 * ('success', 'not-retryable', 'not-idempotent', 'vetoed', 'not-replayable').
 * In this order: what failed (a network failure or own timeout, a status
 * of `retryOn`, or 413/429/503 with a server-named wait), the method, the
 * caller's `shouldRetry` answer (`wants`: true forces a retry, even of a
 * POST; false vetoes one), and last the body.
 * @param {{ failed: boolean, network: boolean, status?: number, hintMs?: number, retryOn: Set<number>, idempotent: boolean, replayable: boolean, wants?: boolean }} f
 */
export function verdict(f) {
  const s = /** @type {number} */ (f.status);
  let why = f.failed
    ? f.network
      ? ''
      : 'not-retryable'
    : f.retryOn.has(s) || (f.hintMs !== undefined && SERVER_WAIT_STATUSES.includes(s))
      ? ''
      : s >= 400
        ? 'not-retryable'
        : 'success';
  if (!why && !f.idempotent) why = 'not-idempotent';
  if (f.wants !== undefined) why = f.wants ? '' : why === 'success' ? why : 'vetoed';
  return why || (f.replayable ? '' : 'not-replayable');
}

/**
 * Whether a wanted retry may wait `delayMs` (the schedule's, -1 when it is
 * exhausted): '' when it may, else why not ('exhausted', 'retry-after' when
 * the server's wait is over `maxRetryAfterMs`, 'deadline' when the wait
 * would end past `maxElapsedMs`).
 * @param {{ delayMs: number, hintMs?: number, maxRetryAfterMs: number, elapsedMs: number, maxElapsedMs: number }} f
 */
export const timing = (f) =>
  f.delayMs < 0
    ? 'exhausted'
    : /** @type {number} */ (f.hintMs) > f.maxRetryAfterMs
      ? 'retry-after'
      : f.elapsedMs + f.delayMs > f.maxElapsedMs
        ? 'deadline'
        : '';
