// @ts-check
// The options of the fetch driver and retry(fn): copied when given (their
// arrays and jitter too: changing them later changes nothing), read from
// their own properties only (never Object.prototype), and checked at once,
// not at the first failure. Each error names its option.
import { own, fn, ms, list, flag, statuses, option } from '../options.js';
import { plan } from '../backoff.js';
import { METHODS, RETRY_ON } from '../policy.js';
import { MAX_RETRY_AFTER_MS, THROTTLE_BASE_FACTOR } from '../gen/policy.js';
import { chooser, throttleBase } from '../engine/waits.js';

const RETRY_SET = new Set(RETRY_ON);
const METHOD_SET = new Set(METHODS);

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
 * The attempt header option: a header name that no attempt may overwrite
 * with meaning (the key) and that fetch will send.
 * @param {unknown} header
 * @returns {string | undefined}
 */
function attemptHeader(header) {
  if (header !== undefined && !(typeof header === 'string' && TOKEN.test(header) && !NOT_ATTEMPT_HEADER.test(header))) {
    throw new (typeof header === 'string' ? RangeError : TypeError)(
      'attemptHeader must be a header name that fetch sends, not Idempotency-Key',
    );
  }
  return /** @type {string | undefined} */ (header);
}

/**
 * What to do with a server's wait over `maxRetryAfterMs`: give up (return
 * that answer at once) or wait `maxRetryAfterMs` (ky's and undici's rule).
 * @param {unknown} v
 */
function overMax(v) {
  if (v !== undefined && v !== 'give-up' && v !== 'clamp') {
    throw new (typeof v === 'string' ? RangeError : TypeError)("retryAfterOverMax must be 'give-up' or 'clamp'");
  }
  return v === 'clamp';
}

/**
 * A feature an option's value brings, made by its own subpath's factory
 * (its code is downloaded only by those who import it): `failover()`,
 * `quota()`, `auth()`, `hedge()`, `dedupe()`. The fetch driver asks
 * `endpoints` for the call's lane first (failover), then each of FEATURES
 * in order for a lane around the one it has and a job around the one it
 * has; `dedupe` runs the call (`share`: one call for many callers). Each
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

/** The options whose value is a feature, in the order they wrap a call, with the subpath (and factory) that makes each. */
const FEATURES = [
  ['limit', 'quota'],
  ['auth', 'auth'],
  ['hedge', 'hedge'],
];

/**
 * The value of `o[key]`, a feature made by `entry`'s factory, or undefined.
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {string} entry
 * @returns {Feature | undefined}
 */
function made(o, key, entry) {
  const v = o[key];
  if (v !== undefined && v?.feature !== key) throw new TypeError(`${key} must be made by ${entry}() from 'wasm-backoff/${entry}'`);
  return v;
}

/**
 * The options of a call, checked now.
 * @param {Record<string, any>} o from `snapshot`
 */
export function config(o) {
  // The schedule's options, as a record the first retry of every call
  // loads (with a fresh seed unless the options name one).
  const [rec, max] = plan(o);
  const budget = o.budget;
  if (budget !== undefined && !(typeof budget?.deposit === 'function' && typeof budget.withdraw === 'function')) {
    throw new TypeError('budget must be a RetryBudget');
  }
  const gate = o.gate;
  if (gate !== undefined && gate !== false && typeof gate?.enter !== 'function') {
    throw new TypeError("gate must be a Gate (createGate from 'wasm-backoff/gate')");
  }
  // (negative: that multiple of the schedule's own base, which a preset may set: the wasm knows it)
  const throttleBaseMs = option(o, 'throttleBaseMs', -THROTTLE_BASE_FACTOR);
  const delay = fn(o, 'delay');
  return {
    rec,
    max,
    seeded: o.seed !== undefined,
    retryOn: statuses(o, 'retryOn', RETRY_SET),
    methods: list(
      o,
      'methods',
      METHOD_SET,
      (m) => typeof m === 'string' && TOKEN.test(m),
      'method names',
      (m) => m.toUpperCase(),
    ),
    retryNonIdempotent: flag(o, 'retryNonIdempotent'),
    idempotencyKey: flag(o, 'idempotencyKey'),
    attemptHeader: attemptHeader(o.attemptHeader),
    timeoutMs: ms(o, 'timeoutMs', undefined, true),
    maxElapsedMs: ms(o, 'maxElapsedMs', Infinity, false),
    maxRetryAfterMs: ms(o, 'maxRetryAfterMs', MAX_RETRY_AFTER_MS, false),
    clamp: overMax(o.retryAfterOverMax),
    throttleBaseMs,
    base: throttleBase(throttleBaseMs),
    retryOnTimeout: flag(o, 'retryOnTimeout', true),
    pace: flag(o, 'pace', true),
    pick: delay && chooser(delay),
    onRetry: fn(o, 'onRetry'),
    onDone: fn(o, 'onDone'),
    shouldRetry: fn(o, 'shouldRetry'),
    beforeRetry: fn(o, 'beforeRetry'),
    telemetry: fn(o, 'telemetry'),
    budget,
    gate: gate || undefined,
    hedge: /** @type {(Feature & { maxHedges: number }) | undefined} */ (made(o, 'hedge', 'hedge')),
    endpoints: made(o, 'endpoints', 'failover'),
    // (a fallback made by a subpath, staleIfError(), also wraps the call's job: last, around all)
    features: /** @type {Feature[]} */ ([...FEATURES.map(([k, e]) => made(o, k, e)), o.fallback?.job && o.fallback].filter(Boolean)),
    fallback: fn(o, 'fallback'),
    dedupe: made(o, 'dedupe', 'dedupe'),
  };
}

/** @typedef {ReturnType<typeof config>} Config */
