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

/** The methods whose calls are shared. */
const SHARED = new Set(['GET', 'HEAD']);

/**
 * A shared call: its signal's controller, the callers waiting on it.
 * @typedef {object} Shared
 * @property {AbortController} ac
 * @property {Set<Waiter>} waiting
 * @property {boolean} done
 */

/**
 * @typedef {object} Waiter
 * @property {(r: Response) => void} resolve
 * @property {(e: unknown) => void} reject
 * @property {AbortSignal | undefined} signal
 * @property {() => void} off takes its abort listener away
 */

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

/**
 * `res` for a caller whose signal is `signal`: a body that errors with the
 * signal's reason when it aborts (as fetch's does), cancelling only this
 * caller's copy.
 * @param {Response} res
 * @param {AbortSignal | undefined} signal
 */
function following(res, signal) {
  if (!signal || !res.body) return res;
  const ts = new TransformStream();
  res.body.pipeTo(ts.writable, { signal }).catch(() => {});
  const r = new Response(ts.readable, { status: res.status, statusText: res.statusText, headers: res.headers });
  // (a Response made here has no URL of its own: the answer's, as fetch gives it)
  Object.defineProperties(r, { url: { value: res.url }, redirected: { value: res.redirected } });
  return r;
}

/** dedupe()'s options (DedupeOptions; each message begins `dedupe: `). */
export const DEDUPE_OPTIONS = { key: fn(undefined, 'a function (request) => string | undefined') };

/**
 * The `dedupe` option of the fetch driver.
 * @param {{ key?: (request: Request) => string | undefined }} [options]
 */
export function dedupe(options) {
  const { key } = readAll(own(options, 'dedupe options'), DEDUPE_OPTIONS, 'dedupe: ');
  /** The shared calls in flight, by key. @type {Map<string, Shared>} */
  const calls = new Map();

  /**
   * Ends shared call `s` of key `k` with `res` or error `e`: every caller
   * still waiting gets its own copy, or the error.
   * @param {string} k
   * @param {Shared} s
   * @param {Response | undefined} res
   * @param {unknown} [e]
   */
  const settle = (k, s, res, e) => {
    s.done = true;
    if (calls.get(k) === s) calls.delete(k);
    const ws = [...s.waiting];
    for (const w of ws) w.off();
    if (!res) {
      for (const w of ws) w.reject(e);
      return;
    }
    // (every copy taken before any is handed out: none has been read yet)
    const copies = ws.map((_, i) => (i < ws.length - 1 ? res.clone() : res));
    if (!ws.length) res.body?.cancel().catch(() => {});
    for (const [i, w] of ws.entries()) w.resolve(following(copies[i], w.signal));
  };

  /**
   * Waits on shared call `s` of key `k` under `signal`.
   * @param {string} k
   * @param {Shared} s
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<Response>}
   */
  const join = (k, s, signal) =>
    new Promise((resolve, reject) => {
      const onAbort = () => {
        s.waiting.delete(w);
        w.off();
        reject(signal?.reason);
        // (the last caller gone: the shared call is aborted, and its key freed)
        if (!s.waiting.size && !s.done) {
          if (calls.get(k) === s) calls.delete(k);
          s.ac.abort(signal?.reason);
        }
      };
      /** @type {Waiter} */
      const w = { resolve, reject, signal, off: () => signal?.removeEventListener('abort', onAbort) };
      s.waiting.add(w);
      signal?.addEventListener('abort', onAbort);
    });

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
        const t = /** @type {Shared} */ ({ ac: new AbortController(), waiting: new Set(), done: false });
        calls.set(k, t);
        const key = k;
        go(t.ac.signal).then(
          (res) => settle(key, t, res),
          (e) => settle(key, t, undefined, e),
        );
        s = t;
      }
      return join(k, s, signal ?? undefined);
    },
  });
  // (the .d.ts's Dedupe carries a type-only mark of what dedupe() made)
  return /** @type {typeof made & import('../../types/dedupe/index.js').Dedupe} */ (made);
}
