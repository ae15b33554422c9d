// @ts-check
// The retry policy of `wasm-backoff/query`'s adapters: their options, read
// once, and the answer for each failure (the delay before the next try, or
// why not). Both libraries give the number of failures so far, so each
// answer is computed afresh for that retry, as the fetch driver computes a
// call's: a schedule made from the options' record (a fresh seed unless the
// options name one), stepped to that retry, the last step drawn on
// `throttleBaseMs` after a throttled answer (429, 503, 529) and lifted to
// the server's wait when the error carries one (the core's rule: at least
// that, with jitter above), then freed. Nothing is kept between calls: a
// handful of wasm calls per retry (microseconds, against a wait of
// milliseconds).
import { own, readAll, fn, ms, statuses } from '../options.js';
import { w, load, check } from '../wasm.js';
import { plan } from '../backoff.js';
import { verdict, timing, advice, throttled, RETRY_ON } from '../policy.js';
import { headersOf, serverWait } from '../retry-after.js';
import { MAX_RETRY_AFTER_MS, THROTTLE_BASE_FACTOR } from '../gen/policy.js';
import { unawaited } from '../hooks.js';

/**
 * The delay before retry `failures` of a schedule made from `rec` (a
 * `plan`), stepped there afresh, the last step drawn on `base` (NaN: the
 * schedule's own; < 0: that multiple of it) and lifted to the server's wait
 * `hintMs` by the core's rule; -1 when the schedule is exhausted. Stateless
 * (the schedule is freed before it returns): the adapters are told the
 * failure count and keep no handle between retries.
 * @param {number[]} rec
 * @param {boolean} seeded
 * @param {number} failures
 * @param {number} [hintMs]
 * @param {number} [base]
 */
export function delayAt(rec, seeded, failures, hintMs, base = NaN) {
  load(rec, seeded);
  const h = check(w.backoff_new());
  try {
    for (let i = 1; i < failures; i++) w.backoff_next(h, NaN, NaN);
    return w.backoff_next(h, hintMs ?? NaN, base);
  } finally {
    w.backoff_free(h);
  }
}

/**
 * The HTTP status, server-named wait and `x-should-retry` advice an error
 * carries: the error is a `Response`, or has `response: { status, headers }`
 * (ky, axios, ofetch), or `status` and `headers` of its own (the OpenAI and
 * Anthropic SDKs, a thrown Response). None for anything else (a network
 * failure).
 * @param {any} error
 * @returns {{ status?: number, hintMs?: number, advice?: boolean }}
 */
export function failure(error) {
  const r = error?.response != null && typeof error.response === 'object' ? error.response : error;
  const status = typeof r?.status === 'number' ? r.status : undefined;
  const headers = status !== undefined && status >= 400 ? headersOf(r.headers) : undefined;
  return { status, hintMs: headers && serverWait(headers), advice: headers && advice(headers) };
}

/**
 * The adapters' options over the schedule's (QueryRetryOptions; not
 * maxElapsedMs: a TypeError), in the order they are checked.
 */
export const QUERY_OPTIONS = {
  retryOn: statuses(new Set(RETRY_ON)),
  maxRetryAfterMs: ms(MAX_RETRY_AFTER_MS),
  // (negative: that multiple of the schedule's own base, as the fetch driver's)
  throttleBaseMs: ms(-THROTTLE_BASE_FACTOR, false, true),
  shouldRetry: fn(),
};

/**
 * The adapters' options, checked now (a TypeError or RangeError naming the
 * option); the function returned answers, for `failures` failures the last
 * with `error`, the delay before the next try or a reason not to retry. It
 * never throws (`guarded`).
 * @param {unknown} options
 * @returns {(failures: number, error: unknown) => number | string}
 */
export function waits(options) {
  const o = own(options);
  if (o.maxElapsedMs !== undefined) throw new TypeError('maxElapsedMs is not an option of wasm-backoff/query');
  if (typeof o.jitter === 'object' && o.jitter) o.jitter = own(o.jitter);
  const [rec, max] = plan(o);
  const seeded = o.seed !== undefined;
  const { retryOn, maxRetryAfterMs, throttleBaseMs, shouldRetry } = readAll(o, QUERY_OPTIONS);
  return guarded((failures, error) => {
    if (!(failures >= 1 && failures < max)) return 'exhausted';
    const { status, hintMs, advice } = failure(error);
    const wants = shouldRetry?.({ attempt: failures, error, status, retryAfterMs: hintMs });
    unawaited(wants); // a promise is refused below, its rejection handled all the same
    if (wants !== undefined && typeof wants !== 'boolean') throw new TypeError('shouldRetry must return a boolean or undefined');
    const failed = status === undefined;
    const why = verdict({ failed, network: failed, status, hintMs, advice, retryOn, idempotent: true, replayable: true, wants });
    if (why) return why;
    const delayMs = delayAt(rec, seeded, failures, hintMs, throttled(status) ? throttleBaseMs : NaN);
    return timing({ delayMs, hintMs, maxRetryAfterMs, elapsedMs: 0, maxElapsedMs: Infinity }) || delayMs;
  });
}

/**
 * `wait`, never thrown into the host library (TanStack's retryer would
 * leave the query pending and the rejection unhandled; SWR's revalidation
 * too): a broken shouldRetry, or an error whose getters throw, ends the
 * retries and goes to the console; the query settles with its own error.
 * @param {(failures: number, error: unknown) => number | string} wait
 * @returns {(failures: number, error: unknown) => number | string}
 */
function guarded(wait) {
  return (failures, error) => {
    try {
      return wait(failures, error);
    } catch (e) {
      console.error('wasm-backoff/query: no retry:', e);
      return 'hook-error';
    }
  };
}
