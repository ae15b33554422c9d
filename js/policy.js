// @ts-check
// The retry policy of the fetch driver and of retry(fn), apart from any
// I/O: whether a finished attempt is tried again (`verdict`), and whether
// the wait it would need is allowed (`timing`). The policy is the core's
// (core/src/policy.rs): its lists, defaults and reasons are rendered into
// js/gen/policy.js, and both sides answer the same vectors,
// core/tests/policy_vectors.json (tests/fetch/policy.test.mjs here). The
// engine asks them (js/engine/judge.js, js/engine/schedule.js); with a
// gate, the gate's own rounds replace `timing` (Ticket.after in gate.js).
import {
  NETWORK_ERROR,
  REFUSED_REQUEST,
  METHODS,
  RETRY_ON,
  SERVER_WAIT_STATUSES,
  THROTTLE_STATUSES,
  SHOULD_RETRY_HEADER,
} from './gen/policy.js';

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
 * The server's advice by `x-should-retry` (the core's SHOULD_RETRY_HEADER
 * and `advice`): true, false, or undefined for anything but those words
 * (trimmed: fetch's Headers hold no other whitespace at the ends).
 * @param {{ get(name: string): string | null | undefined }} headers
 */
export function advice(headers) {
  const v = headers.get(SHOULD_RETRY_HEADER)?.trim();
  return v === 'true' || (v === 'false' ? false : undefined);
}

/**
 * What makes a request retryable (the core's `policy::Request`): its
 * method is in `methods` (`listed`), it carries an `Idempotency-Key` of its
 * own (`keyed`), `idempotencyKey: true` (`option`), `retryNonIdempotent`
 * (`any`).
 * @typedef {{ listed: boolean, keyed: boolean, option: boolean, any: boolean }} RequestFacts
 */

/**
 * Whether the driver generates an `Idempotency-Key` (the core's
 * `wants_key`): with `idempotencyKey`, for a request whose method is not
 * retried by itself and that has no key of its own. Every driver asks it
 * (the fetch driver, undici's dispatcher, the outbox).
 * @param {RequestFacts} r
 */
export const wantsKey = (r) => r.option && !r.listed && !r.keyed;

/**
 * Whether a request may be sent again (the core's `idempotent`): a listed
 * method, a key (its own or one `wantsKey` generates), or `retryNonIdempotent`.
 * @param {RequestFacts} r
 */
export const idempotent = (r) => r.listed || r.keyed || r.any || wantsKey(r);

/** Whether an attempt was throttled (429, 503: the core's THROTTLE_STATUSES): its retry waits on `throttleBaseMs`. */
export const throttled = (/** @type {number | undefined} */ status) => THROTTLE_STATUSES.includes(/** @type {number} */ (status));

/**
 * Whether an attempt is tried again: '' when it is, else why the call ends
 * ('success', 'not-retryable', 'not-idempotent', 'vetoed', 'not-replayable').
 * In this order: what failed (a network failure or own timeout, a status
 * of `retryOn`, or 413/429/503 with a server-named wait), the server's
 * advice on a failure (`x-should-retry`: true makes it retryable, false
 * not), the method, the caller's `shouldRetry` answer (`wants`: true forces
 * a retry, even of a POST; false vetoes one), and last the body.
 * @param {{ failed: boolean, network: boolean, status?: number, hintMs?: number, retryOn: Set<number>, idempotent: boolean, replayable: boolean, wants?: boolean, advice?: boolean }} f
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
  if (f.advice !== undefined && why !== 'success') why = f.advice ? '' : 'not-retryable';
  if (!why && !f.idempotent) why = 'not-idempotent';
  if (f.wants !== undefined) why = f.wants ? '' : why === 'success' ? why : 'vetoed';
  return why || (f.replayable ? '' : 'not-replayable');
}

/** The wait `choose` answers when the `delay` hook gave up. */
export const GAVE_UP = -2;

/**
 * The server's wait as a retry honours it (the core's `honoured`): `hintMs`,
 * or `maxMs` when it is over that and `clamp` (retryAfterOverMax 'clamp').
 * @param {number | undefined} hintMs
 * @param {number} maxMs
 * @param {boolean} clamp
 */
export const honoured = (hintMs, maxMs, clamp) => (clamp && /** @type {number} */ (hintMs) > maxMs ? maxMs : hintMs);

/**
 * The wait of a wanted retry after the `delay` hook's `answer` (the core's
 * `choose`): `delayMs` (the schedule's proposal, < 0 when it is exhausted:
 * kept) when the answer is undefined, the answer when it is a number >= 0,
 * GAVE_UP for false; anything else throws, naming the hook.
 * @param {number} delayMs
 * @param {unknown} answer
 */
export function choose(delayMs, answer) {
  if (answer === undefined || delayMs < 0) return delayMs;
  if (answer === false) return GAVE_UP;
  const msg = 'delay must return a number >= 0, false or undefined';
  if (typeof answer !== 'number') throw new TypeError(msg);
  if (!(answer >= 0)) throw new RangeError(msg);
  return answer;
}

/**
 * Whether a wanted retry may wait `delayMs` (the one chosen: -1 when the
 * schedule is exhausted, GAVE_UP when the `delay` hook gave up): '' when it
 * may, else why not ('exhausted', 'retry-after' when the server's wait is
 * over `maxRetryAfterMs`, 'vetoed' when the hook gave up, 'deadline' when
 * the wait would end at or past `maxElapsedMs`).
 * @param {{ delayMs: number, hintMs?: number, maxRetryAfterMs: number, elapsedMs: number, maxElapsedMs: number }} f
 */
export const timing = (f) =>
  f.delayMs === -1
    ? 'exhausted'
    : /** @type {number} */ (f.hintMs) > f.maxRetryAfterMs
      ? 'retry-after'
      : f.delayMs === GAVE_UP
        ? 'vetoed'
        : f.elapsedMs + f.delayMs >= f.maxElapsedMs
          ? 'deadline'
          : '';
