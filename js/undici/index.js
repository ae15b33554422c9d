// @ts-check
// `wasm-backoff/undici`: the fetch driver's retry policy for every request
// of a Node process, at undici's dispatcher (the layer under Node's global
// `fetch`, undici's `request`, and any client built on them). A dispatcher
// sees a request as its options and a handler of callbacks (undici's
// "legacy" handler interface, the one `Symbol.for('undici.globalDispatcher.1')`
// promises and Node 20's fetch calls): a failed answer is drained and
// hidden from the handler, and the request dispatched again after the
// schedule's delay; the first answer that is not retried is handed over
// whole. Nothing here imports undici: it wraps whatever dispatcher it is
// given (undici's Agent, or Node's own global one). One request is
// js/undici/request.js, its job job.js, an attempt's answer answer.js, its
// headers (the drivers' request model over undici's forms) headers.js, a
// body read once body.js.
import { snapshot, config } from '../fetch/options.js';
import { readAll, num } from '../options.js';
import { request } from './request.js';

/** The fetch driver's options that have no meaning at a dispatcher (refused rather than ignored). */
export const NOT_HERE = ['gate', 'beforeRetry', 'signal', 'hedge', 'endpoints', 'telemetry', 'fallback', 'auth', 'dedupe', 'limit'];

/** The undici entry's own option over the fetch driver's (UndiciRetryOptions). */
export const UNDICI_OPTIONS = {
  // (undefined: 1 MiB; anything but a number, null too, a TypeError)
  maxBufferBytes: num('an integer >= 0', (v) => Number.isSafeInteger(v) && v >= 0, 1_048_576),
};

/** The global dispatcher's key, shared by Node's fetch and every copy of undici (its `setGlobalDispatcher`). */
const GLOBAL = Symbol.for('undici.globalDispatcher.1');

/**
 * The options, checked now: the fetch driver's reader (the same names,
 * defaults and errors), less those a dispatcher cannot honour.
 * @param {unknown} options
 */
function read(options) {
  const o = snapshot(options);
  for (const k of NOT_HERE) if (o[k] !== undefined) throw new TypeError(`${k} is not an option of wasm-backoff/undici`);
  const own = readAll(o, UNDICI_OPTIONS);
  delete o.maxBufferBytes;
  return { ...config(o), ...own };
}

/** @typedef {ReturnType<typeof read>} Options */
/** @typedef {(opts: any, handler: any) => boolean} Dispatch */

/**
 * An undici interceptor (`agent.compose(retryInterceptor(options))`, or
 * `interceptors: { Agent: [...] }`): `dispatch => dispatch'`.
 * @param {import('../../types/undici/index.js').UndiciRetryOptions} [options]
 * @returns {(dispatch: Dispatch) => Dispatch}
 */
export function retryInterceptor(options) {
  const c = read(options);
  // (per interceptor, as per withBackoff client: until when each origin said no request remains)
  const paced = new Map();
  return (dispatch) => (opts, handler) => {
    request(c, dispatch, opts, handler, paced);
    return true;
  };
}

/**
 * A dispatcher that sends every request through `dispatcher` with retries
 * (for `setGlobalDispatcher`, or fetch's `dispatcher` option).
 * @param {any} dispatcher an undici Dispatcher (Agent, Pool, Client, or Node's global one)
 * @param {import('../../types/undici/index.js').UndiciRetryOptions} [options]
 */
export function retryDispatcher(dispatcher, options) {
  if (typeof dispatcher?.dispatch !== 'function') throw new TypeError('dispatcher must be an undici Dispatcher');
  const send = retryInterceptor(options)(dispatcher.dispatch.bind(dispatcher));
  return {
    dispatch: send,
    /** @param {...any} args */
    close: (...args) => dispatcher.close(...args),
    /** @param {...any} args */
    destroy: (...args) => dispatcher.destroy(...args),
    /** The dispatcher it sends through. */
    dispatcher,
  };
}

/**
 * Makes every `fetch` of this process retry: wraps Node's global
 * dispatcher (made first, by a `fetch` of a `data:` URL, where Node has not
 * made it yet) and installs the result in its place. Resolves with a
 * function that puts the previous dispatcher back.
 * @param {import('../../types/undici/index.js').UndiciRetryOptions} [options]
 * @returns {Promise<() => void>}
 */
export async function retryGlobalFetch(options) {
  read(options); // (its errors before any await)
  const g = /** @type {any} */ (globalThis);
  if (!g[GLOBAL]) await fetch('data:,');
  const previous = g[GLOBAL];
  if (!previous) throw new TypeError("this runtime's fetch has no undici global dispatcher");
  const mine = retryDispatcher(previous, options);
  g[GLOBAL] = mine;
  return () => {
    if (g[GLOBAL] === mine) g[GLOBAL] = previous;
  };
}
