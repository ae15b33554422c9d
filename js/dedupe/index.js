// @ts-check
// `dedupe()` (`wasm-backoff/dedupe`, the `dedupe` option of the fetch
// driver): concurrent GET and HEAD calls for the same request share one
// call (the protocol's `share`, js/fetch/options.js), its retries included.
//
// - The key: the method, the URL, the request's headers and the fetch
//   options that change its answer (credentials, cache, redirect, mode), or
//   what `key(request)` returns (undefined: not shared). Other methods are
//   never shared (their key is not asked).
// - The shared call runs once, under a signal of its own, with the options
//   of the call that started it; each caller waits on it under its own
//   signal: a caller's abort rejects that caller at once and takes it off
//   the call; the shared call is aborted only when every caller has gone.
// - When it answers, each caller still there gets its own Response (a
//   clone, taken before any is handed out: a body read, or cancelled, by
//   one is never another's), whose body follows that caller's signal, as
//   with fetch. When it rejects, each rejects with its error.
// - Once it has settled, the key is free: a call made after it sends again.
import { own, readAll, fn } from '../options.js';
import { SharedCall } from './shared.js';

/** The methods whose calls are shared. */
const SHARED = new Set(['GET', 'HEAD']);

/**
 * The request `input`, `init` stand for, without a signal (undefined when
 * fetch could not build it: it is then sent on its own, and fails there).
 * @param {any} input
 * @param {RequestInit | undefined} init
 */
function requestOf(input, init) {
  try {
    return new Request(input, { ...init, signal: null });
  } catch {
    return undefined;
  }
}

/**
 * The default key: what makes two GETs the same request.
 * @param {Request} r
 */
const keyOf = (r) => {
  /** @type {string[]} */
  const h = [];
  r.headers.forEach((v, k) => {
    h.push(k, v);
  });
  return JSON.stringify([r.method, r.url, h, r.credentials, r.cache, r.redirect, r.mode]);
};

/** dedupe()'s options (DedupeOptions; each message begins `dedupe: `). */
export const DEDUPE_OPTIONS = { key: fn(undefined, 'a function (request) => string | undefined') };

/**
 * The `dedupe` option of the fetch driver.
 * @param {{ key?: (request: Request) => string | undefined }} [options]
 */
export function dedupe(options) {
  const { key } = readAll(own(options, 'dedupe options'), DEDUPE_OPTIONS, 'dedupe: ');
  /** The shared calls in flight, by key. @type {Map<string, SharedCall>} */
  const calls = new Map();

  const made = Object.freeze({
    feature: 'dedupe',
    /** Shared calls in flight now. */
    get size() {
      return calls.size;
    },
    /**
     * Runs the call by `go`: shared with the calls in flight for the same
     * request (GET and HEAD), else on its own, under the caller's signal.
     * @param {{ input: any, init: RequestInit | undefined }} x
     * @param {(signal: AbortSignal | undefined) => Promise<Response>} go
     * @returns {Promise<Response>}
     */
    share: ({ input, init }, go) => {
      const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
      const method = String(init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
      const req = SHARED.has(method) ? requestOf(input, init) : undefined;
      /** @type {unknown} */
      let k;
      try {
        k = req && (key ? key(req) : keyOf(req));
      } catch (e) {
        return Promise.reject(e);
      }
      if (k === undefined) return go(signal ?? undefined);
      if (typeof k !== 'string') return Promise.reject(new TypeError('dedupe: key(request) must return a string or undefined'));
      let s = calls.get(k);
      if (!s) {
        const t = new SharedCall(calls, k);
        go(t.ac.signal).then(
          (res) => t.settle(res),
          (e) => t.settle(undefined, e),
        );
        s = t;
      }
      return s.join(signal ?? undefined);
    },
  });
  // (the .d.ts's Dedupe carries a type-only mark of what dedupe() made)
  return /** @type {typeof made & import('../../types/dedupe/index.js').Dedupe} */ (made);
}
