// @ts-check
// `staleIfError()` (`wasm-backoff/cache`), a value for the fetch driver's
// `fallback` option: it keeps the last good answer of each GET (a 200,
// js/cache/stale.js) and, when a later call for it fails for good (the
// fallback's rule, js/engine/loop.js: a rejection, but the caller's abort
// and an error that is no network failure; or a final answer of
// `retryOn`), serves that copy if it is at most `maxStaleMs` old,
// marked with an `Age` header (RFC 9111 §5.1: its age in seconds, the
// answer's own Age included). With none, or one too old, the call ends as it
// would have: its last answer, or its error.
//
// It is the fallback function itself, with the protocol's `job` (an option
// value that wraps the call's job, js/fetch/options.js): its job stores the
// good answers and tells the fallback, through onDone's info (a symbol key:
// no one else sees it), which copy belongs to the call.
import { own, readAll, num, fn, oneOf, text } from '../options.js';
import { memoryStore, cacheStore, bodyOf } from './stores.js';
import { Stale, STALE } from './stale.js';

/**
 * The default key: a GET's URL, unless the caller's request carries
 * credentials (`Authorization`, `Cookie`): their answers are one user's.
 * @param {Request} r
 */
const byUrl = (r) => (r.headers.has('authorization') || r.headers.has('cookie') ? undefined : r.url);

/** staleIfError()'s options (StaleIfErrorOptions), in the order they are checked (each message begins `staleIfError: `). */
export const STALE_OPTIONS = {
  maxStaleMs: num('a number of ms >= 0', (v) => v >= 0 && v <= 2 ** 53, 86_400_000),
  max: num('an integer in [1, 100000]', (v) => Number.isInteger(v) && v >= 1 && v <= 100_000, 100),
  maxBodyBytes: num('an integer >= 0', (v) => Number.isSafeInteger(v) && v >= 0, 1_048_576),
  store: oneOf(['auto', 'cache', 'memory'], 'auto'),
  cacheName: text('wasm-backoff-stale'),
  key: fn(byUrl, 'a function (request) => string | undefined'),
};

/**
 * The `fallback` option's value that serves stale copies.
 * @param {{ maxStaleMs?: number, max?: number, maxBodyBytes?: number, store?: 'auto' | 'cache' | 'memory', cacheName?: string, key?: (request: Request) => string | undefined }} [options]
 */
export function staleIfError(options) {
  const o = own(options, 'staleIfError options');
  const { maxStaleMs, max, maxBodyBytes, store, cacheName, key } = readAll(o, STALE_OPTIONS, 'staleIfError: ');
  const api = typeof globalThis.caches?.open === 'function';
  if (store === 'cache' && !api) throw new RangeError("staleIfError: store 'cache' needs the Cache API, which this runtime lacks");
  const where = store === 'memory' || !api ? 'memory' : 'cache';
  const s = where === 'memory' ? memoryStore(max) : cacheStore(cacheName, max, maxStaleMs);

  /**
   * The fallback: the call's copy, if young enough, else the call's own end.
   * @param {any} info onDone's, with `response`
   */
  const fallback = async (info) => {
    const k = info[STALE];
    const copy = k === undefined ? undefined : await s.get(k).catch(() => undefined);
    const now = Date.now();
    if (copy && now - copy.at <= maxStaleMs) {
      const h = new Headers(copy.headers);
      const age = Math.floor((now - copy.at) / 1000) + (Number(h.get('age')) || 0);
      h.set('age', String(age));
      return new Response(bodyOf(copy.body), { status: copy.status, statusText: copy.statusText, headers: h });
    }
    if (copy) s.delete(k).catch(() => {});
    if (info.response) return info.response;
    throw info.error;
  };
  const made = Object.assign(fallback, {
    feature: 'fallback',
    maxStaleMs,
    max,
    maxBodyBytes,
    /** Where the copies are kept: 'cache' (the Cache API) or 'memory'. */
    store: where,
    /** Forgets every copy (a user who signs out). */
    clear: () => s.clear(),
    /**
     * The call's job: around the one it has, storing its good answer, for a GET that has a key.
     * @param {import('../fetch/options.js').Wiring} x
     */
    job: (x) => {
      const method = String(x.init?.method ?? (x.input instanceof Request ? x.input.method : 'GET')).toUpperCase();
      if (method !== 'GET') return undefined;
      let r;
      try {
        r = new Request(x.input, { ...x.init, signal: null });
      } catch {
        return undefined;
      }
      const k = key(r);
      if (k !== undefined && typeof k !== 'string') throw new TypeError('staleIfError: key(request) must return a string or undefined');
      return k === undefined ? undefined : new Stale(x.job, s, k, maxBodyBytes);
    },
  });
  return /** @type {Readonly<typeof made> & import('../../types/cache/index.js').StaleIfError} */ (Object.freeze(made));
}
