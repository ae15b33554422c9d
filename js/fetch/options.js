// @ts-check
// The options of the fetch driver and retry(fn): copied when given (their
// arrays and jitter too: changing them later changes nothing), read from
// their own properties only (never Object.prototype), and checked at once,
// not at the first failure. Each error names its option.
import { own, readAll, spec, fn, ms, list, flag, oneOf, statuses, made, abortSignal } from '../options.js';
import { plan } from '../backoff.js';
import { METHODS, RETRY_ON } from '../policy.js';
import { MAX_RETRY_AFTER_MS, THROTTLE_BASE_FACTOR } from '../gen/policy.js';
import { chooser, throttleBase } from '../engine/waits.js';

/** An HTTP token (RFC 9110 §5.6.2): a method or a header name. */
const TOKEN = /^[!#$%&'*+.^_`|~\w-]+$/;
/**
 * Header names an attempt header may not take: the idempotency key (one key
 * on every attempt), and those fetch refuses to send or drops (undici's
 * refusals; the Fetch standard's forbidden request headers that matter).
 */
const NOT_ATTEMPT_HEADER =
  /^(?:idempotency-key|connection|content-length|expect|host|keep-alive|te|trailer|transfer-encoding|upgrade|proxy-.*|sec-.*)$/i;

/**
 * The key under which the stream entry (js/entries/stream.js) hands the
 * drivers its extension, in the options they copy: its job and its
 * options' reader (js/fetch/index.js `Ext`).
 */
export const EXT = Symbol('stream');

/**
 * A deep enough copy of the options, taken when they are given.
 * @param {unknown} options
 */
export function snapshot(options) {
  const o = own(options);
  for (const k in o) {
    const v = o[k];
    if (Array.isArray(v)) o[k] = [...v];
    else if (k === 'jitter' && typeof v === 'object' && v) o[k] = own(v);
  }
  return o;
}

/**
 * Options `more` over `base` (both from `snapshot`), in a null-prototype
 * record: a property on Object.prototype is never read as an option.
 * @param {Record<string, any>} base
 * @param {unknown} more
 */
export const merge = (base, more) => Object.assign(Object.create(null), base, snapshot(more));

/**
 * A feature an option's value brings, made by its own subpath's factory
 * (its code is downloaded only by those who import it): `failover()`,
 * `quota()`, `auth()`, `hedge()`, `dedupe()`. The fetch driver asks
 * `endpoints` for the call's lane first (failover), then each of `limit`,
 * `auth`, `hedge` (and a `fallback` that has a job) in that order
 * (`features`) for a lane around the one it has and a job around the one
 * it has; `dedupe` runs the call (`share`: one call for many callers). Each
 * carries its option's name (`feature`), so a plain object is refused.
 * @typedef {object} Feature
 * @property {string} feature the option it is made for
 * @property {(x: Wiring) => import('../engine/loop.js').Lane | undefined} [lane]
 * @property {(x: Wiring) => import('../engine/loop.js').Job} [job]
 * @property {(x: { c: Config, input: any, init: RequestInit | undefined }, go: (signal: AbortSignal | undefined) => Promise<Response>) => Promise<Response>} [share] runs the call by `go` (under a signal of its own), for one caller or many
 */

/**
 * What a feature is given to wire a call: its options, the call, its
 * request, its job and lane so far, and the plain lane (own: a client's
 * paced one).
 * @typedef {object} Wiring
 * @property {Config} c
 * @property {import('../engine/call.js').Call} call
 * @property {any} input
 * @property {RequestInit | undefined} init
 * @property {any} job the fetch job (js/fetch/request.js), or one around it
 * @property {import('../engine/loop.js').Lane} lane
 * @property {import('../engine/loop.js').Lane} own
 */

/**
 * The options of every call of the engine's drivers (retry(fn) and the
 * fetch driver; RetryFnOptions in types/index.d.ts, the schedule's aside),
 * in the order they are checked.
 */
export const CALL_OPTIONS = {
  budget: spec((v) => typeof v?.deposit === 'function' && typeof v.withdraw === 'function', 'a RetryBudget'),
  // (negative: that multiple of the schedule's own base, which a preset may set: the wasm knows it)
  throttleBaseMs: ms(-THROTTLE_BASE_FACTOR, false, true),
  delay: fn(),
  timeoutMs: ms(undefined, true),
  maxElapsedMs: ms(Infinity),
  maxRetryAfterMs: ms(MAX_RETRY_AFTER_MS),
  retryAfterOverMax: oneOf(['give-up', 'clamp']),
  retryOnTimeout: flag(true),
  onRetry: fn(),
  onDone: fn(),
  shouldRetry: fn(),
  telemetry: fn(),
};

/** retry(fn)'s own option over those (RetryFnOptions' `signal`). */
export const RETRY_FN_OPTIONS = { signal: abortSignal() };

/**
 * The options of the fetch driver over those (RetryOptions), in the order
 * they are checked. Those whose value is a feature (`made` by its subpath's
 * factory) come last: `limit`, `auth`, `hedge` wrap a call in that order.
 */
export const FETCH_OPTIONS = {
  gate: spec(
    (v) => v === false || typeof v?.enter === 'function',
    "a Gate (createGate from 'wasm-backoff/gate')",
    undefined,
    undefined,
    (v) => v || undefined,
  ),
  retryOn: statuses(new Set(RETRY_ON)),
  methods: list(
    'method names',
    (m) => typeof m === 'string' && TOKEN.test(m),
    new Set(METHODS),
    (m) => m.toUpperCase(),
  ),
  retryNonIdempotent: flag(),
  idempotencyKey: flag(),
  attemptHeader: spec(
    (v) => typeof v === 'string',
    'a header name that fetch sends, not Idempotency-Key',
    (v) => TOKEN.test(v) && !NOT_ATTEMPT_HEADER.test(v),
  ),
  pace: flag(true),
  beforeRetry: fn(),
  fallback: fn(),
  endpoints: made('endpoints', 'failover'),
  dedupe: made('dedupe'),
  limit: made('limit', 'quota'),
  auth: made('auth'),
  hedge: made('hedge'),
};

/**
 * The options of a call, checked now.
 * @param {Record<string, any>} o from `snapshot`
 */
export function config(o) {
  // The schedule's options, as a record the first retry of every call
  // loads (with a fresh seed unless the options name one).
  const [rec, max] = plan(o);
  const c = readAll(o, FETCH_OPTIONS, '', readAll(o, CALL_OPTIONS));
  const { delay, fallback } = c;
  return Object.assign(c, {
    rec,
    max,
    seeded: o.seed !== undefined,
    clamp: c.retryAfterOverMax === 'clamp',
    base: throttleBase(c.throttleBaseMs),
    pick: delay && chooser(delay),
    // (a fallback made by a subpath, staleIfError(), also wraps the call's job: last, around all)
    features: /** @type {Feature[]} */ ([c.limit, c.auth, c.hedge, fallback?.job && fallback].filter(Boolean)),
  });
}

/** @typedef {ReturnType<typeof config>} Config */
