// @ts-check
// `quota()` (`wasm-backoff/quota`, the `limit` option of the fetch driver):
// requests- and tokens-per-minute budgets per key (the model, say), kept in
// step with the rate-limit headers of the answers (js/quota/headers.js), so
// that a call waits for its budget instead of meeting a 429.
//
// A lane around the call's lane (js/quota/lane.js): before every attempt,
// after the inner lane lets it go (its backoff, a gate's hold), the attempt
// reserves one request and `cost(request)` tokens of its key's budgets
// (js/quota/bucket.js) and waits until they are there. A wait that would
// end past the call's deadline is not started: the call is refused at once
// (QuotaError, reason 'deadline'), nothing sent, nothing reserved. After
// each answer the key's budgets follow its headers, and a 429 that names a
// wait (Retry-After, retry-after-ms) holds every call of its key until
// then. The decision to retry is the inner lane's.
import { own, readAll, ms, fn } from '../options.js';
import { Bucket } from './bucket.js';
import { QuotaLane } from './lane.js';

export { QuotaError } from './errors.js';

/** The most keys a quota keeps: past it, the oldest is forgotten (a key is a model: there are few). */
const MAX_KEYS = 1000;

/**
 * The request as `key` and `cost` see it: its URL, method, headers and the
 * body as given to fetch (`init.body`: a string for the SDKs' JSON), and
 * that body parsed as JSON (`json`, undefined when it is not).
 * @typedef {object} QuotaRequest
 * @property {string} url
 * @property {string} method
 * @property {Headers} headers
 * @property {unknown} body
 * @property {any} json
 */

/**
 * A key's budgets and its hold.
 * @typedef {object} Budgets
 * @property {Bucket} requests
 * @property {Bucket} tokens
 * @property {number} until no call of the key goes before this (epoch ms: a 429's wait)
 */

/** quota()'s options (QuotaOptions), in the order they are checked (each message begins `quota: `). */
export const QUOTA_OPTIONS = {
  rpm: ms(undefined, false, true),
  tpm: ms(undefined, false, true),
  key: fn(() => '', 'a function (request) => string'),
  cost: fn(() => 0, 'a function (request) => number of tokens'),
};

/**
 * The request `input`, `init` as `key` and `cost` see it.
 * @param {any} input
 * @param {RequestInit | undefined} init
 * @returns {QuotaRequest}
 */
export function quotaRequest(input, init) {
  const isReq = input instanceof Request;
  let url = isReq ? input.url : String(input);
  try {
    url = new URL(url, globalThis.location?.href).href;
  } catch {}
  const body = init?.body;
  /** @type {any} */
  let json;
  const r = {
    url,
    method: String(init?.method ?? (isReq ? input.method : 'GET')).toUpperCase(),
    headers: new Headers(init?.headers ?? (isReq ? input.headers : undefined)),
    body,
    /** The body parsed as JSON (once), or undefined. */
    get json() {
      if (json === undefined && typeof body === 'string') {
        try {
          json = JSON.parse(body);
        } catch {
          json = null;
        }
      }
      return json ?? undefined;
    },
  };
  return r;
}

/**
 * The key and cost of a call's request, checked: what the options' `key`
 * and `cost` return for it.
 * @param {QuotaRequest} r
 * @param {(r: QuotaRequest) => unknown} key
 * @param {(r: QuotaRequest) => unknown} cost
 * @returns {[string, number]}
 */
function ask(r, key, cost) {
  const k = key(r);
  if (typeof k !== 'string') throw new TypeError('quota: key(request) must return a string');
  const c = cost(r);
  if (typeof c !== 'number') throw new TypeError('quota: cost(request) must return a number of tokens');
  if (!(c >= 0 && c < Infinity)) throw new RangeError('quota: cost(request) must return a finite number >= 0');
  return [k, c];
}

/**
 * The `limit` option of the fetch driver: requests- and tokens-per-minute
 * budgets per key, checked now.
 * @param {{ rpm?: number, tpm?: number, key?: (request: QuotaRequest) => string, cost?: (request: QuotaRequest) => number }} [options]
 */
export function quota(options) {
  const { rpm, tpm, key, cost } = readAll(own(options, 'quota options'), QUOTA_OPTIONS, 'quota: ');
  /** @type {Map<string, Budgets>} */
  const keys = new Map();

  /** The budgets of key `k` (made at its first call). @param {string} k */
  const budgets = (k) => {
    let b = keys.get(k);
    if (!b) {
      const now = Date.now();
      b = { requests: new Bucket(rpm, now), tokens: new Bucket(tpm, now), until: 0 };
      keys.set(k, b);
      if (keys.size > MAX_KEYS) keys.delete(/** @type {string} */ (keys.keys().next().value));
    }
    return b;
  };

  const made = Object.freeze({
    feature: 'limit',
    rpm,
    tpm,
    /**
     * Key `k`'s budgets now, for a look (undefined: none known): what
     * remains of each, and until when a 429 holds the key.
     * @param {string} [k]
     */
    state(k = '') {
      const b = keys.get(k);
      if (!b) return undefined;
      const now = Date.now();
      return {
        requests: b.requests.levelAt(now),
        tokens: b.tokens.levelAt(now),
        rpm: b.requests.cap,
        tpm: b.tokens.cap,
        heldMs: Math.max(0, b.until - now),
      };
    },
    /**
     * The call's lane, around the one it has: every attempt waits for its budget.
     * @param {import('../fetch/options.js').Wiring} x
     */
    lane: (x) => {
      const [k, c] = ask(quotaRequest(x.input, x.init), key, cost);
      return new QuotaLane(x.lane, budgets(k), k, c);
    },
  });
  // (the .d.ts's Quota carries a type-only mark of what quota() made)
  return /** @type {typeof made & import('../../types/quota/index.js').Quota} */ (made);
}
