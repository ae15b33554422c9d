// @ts-check
// The request as every HTTP driver sees it: one model for the fetch job
// (js/fetch/request.js) and the undici job (js/undici/job.js). Its method,
// its headers in their own form (fetch's Headers or HeadersInit; undici's
// record or flat array, js/undici/headers.js) behind get/has/set/delete, its
// body; the facts the core's one idempotency rule reads (js/policy.js
// `wantsKey`, `idempotent`); and the request stages both drivers run on it
// for each attempt: the attempt header, then the generated key.
import { replayable, wantsKey } from './policy.js';

/** The idempotency key's header. */
const KEY = 'idempotency-key';

/**
 * A request: its method (upper-case; GET when absent), its headers, its
 * body. Immutable: `set` and `delete` make another. This class holds its
 * headers in fetch's form (a Headers, or anything `new Headers()` takes);
 * undici's job extends it for undici's (js/undici/headers.js: `get` and
 * `with` over a record or a flat array).
 */
export class RequestModel {
  /**
   * @param {unknown} method
   * @param {any} headers
   * @param {unknown} [body]
   */
  constructor(method, headers, body) {
    this.method = String(method ?? 'GET').toUpperCase();
    this.headers = headers;
    this.body = body;
  }

  /**
   * The value of header `name` (in any case), or null.
   * @param {string} name
   * @returns {string | null}
   */
  get(name) {
    const h = this.headers;
    // (none: no Headers to make)
    return h === undefined ? null : new Headers(h).get(name);
  }

  /** @param {string} name */
  has(name) {
    return this.get(name) !== null;
  }

  /**
   * The request with header `name` set to `value` (any of its own of that
   * name replaced; undefined: deleted).
   * @param {string} name
   * @param {string} [value]
   * @returns {RequestModel}
   */
  set(name, value) {
    const h = new Headers(this.headers);
    value === undefined ? h.delete(name) : h.set(name, value);
    return new /** @type {typeof RequestModel} */ (this.constructor)(this.method, h, this.body);
  }

  /** @param {string} name */
  delete(name) {
    return this.set(name);
  }

  /** Whether its body can be sent again (absent, a string, bytes, a Blob, a form: not a stream). */
  replayable() {
    return replayable(this.body);
  }

  /**
   * The facts the policy's idempotency rule reads (the core's
   * `policy::Request`), `key` the one generated for it (`keyFor`).
   * @param {{ methods: Set<string>, retryNonIdempotent: boolean }} c
   * @param {string} [key]
   * @param {boolean} [option] idempotencyKey, while the key is still to be generated
   * @returns {import('./policy.js').RequestFacts}
   */
  facts(c, key, option = false) {
    return { listed: c.methods.has(this.method), keyed: !!key || this.has(KEY), option, any: c.retryNonIdempotent };
  }
}

/**
 * The idempotency key a call generates for request `m`, the same on every
 * attempt (the policy's `wantsKey`: with `idempotencyKey`, for a method not
 * retried by itself and no key of its own), or undefined.
 * @param {{ methods: Set<string>, retryNonIdempotent: boolean, idempotencyKey: boolean }} c
 * @param {RequestModel} m
 */
export const keyFor = (c, m) => (wantsKey(m.facts(c, undefined, c.idempotencyKey)) ? crypto.randomUUID() : undefined);

/**
 * The attempt header's value for attempt `k`, as AWS's `amz-sdk-request`
 * (`attempt=2; max=5`). With `hedge`, each racer is numbered, so `max` is
 * the most requests the call may send: `maxAttempts` rounds of one request
 * and up to `maxHedges` more.
 * @param {{ max: number, hedge?: { maxHedges: number } }} c
 * @param {number} k
 */
export const attemptValue = (c, k) => {
  const m = c.max * (1 + (c.hedge?.maxHedges ?? 0));
  return `attempt=${k}${m < Infinity ? `; max=${m}` : ''}`;
};

/**
 * Request `m` as attempt `n` sends it: the request stages both drivers run,
 * in order: the attempt header (`attemptHeader`), then the generated key,
 * each over any of the request's own of that name.
 * @param {{ attemptHeader?: string, max: number, hedge?: { maxHedges: number } }} c
 * @param {string | undefined} key
 * @param {RequestModel} m
 * @param {number} n
 */
export function attemptOf(c, key, m, n) {
  const name = c.attemptHeader;
  if (name) m = m.set(name, attemptValue(c, n));
  return key ? m.set(KEY, key) : m;
}

/**
 * The origin of a request's URL (a Request, a URL or a string; relative to
 * the page's), or undefined when it has none: what a client paces by, and
 * a gate's default key.
 * @param {unknown} input
 */
export function originOf(input) {
  try {
    return new URL(input instanceof Request ? input.url : String(input), globalThis.location?.href).origin;
  } catch {
    return undefined;
  }
}
