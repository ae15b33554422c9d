// @ts-check
// The drivers: fetchWithBackoff / withBackoff, and retry(fn) for any async
// work. Each call runs the one loop (js/engine/loop.js) with its job (a
// fetch, js/fetch/request.js; a function, js/engine/task.js) and its lane
// (its own schedule, or a gate's ticket). Timers and fetch are the
// globals, never `window`, so this runs in pages, workers, Service Workers,
// workerd, Deno, Bun and Node.
//
// A call whose first attempt succeeds makes no wasm call at all: its
// schedule is made at its first retry.
import { own, signalOf } from '../options.js';
import { parseRetryAfter, serverWait } from '../retry-after.js';
import { Call, drive } from '../engine/loop.js';
import { scheduled } from '../engine/schedule.js';
import { task } from '../engine/task.js';
import { config, merge, snapshot } from './options.js';
import { FetchJob } from './request.js';

export { parseRetryAfter, serverWait };

/** The validated defaults, made at the first call that uses them (not at import: no wasm work before it is needed). */
let defaults;

/**
 * The origin of a request: what a withBackoff client paces by (a relative
 * URL against the page's; '' when there is none).
 * @param {any} input
 */
function originOf(input) {
  try {
    return new URL(input instanceof Request ? input.url : String(input), globalThis.location?.href).origin;
  } catch {
    return '';
  }
}

/**
 * One fetch call through `send`. `paced` (a withBackoff client's): until
 * when each origin said no request remains (epoch ms).
 * @param {import('./options.js').Config} c
 * @param {any} input
 * @param {RequestInit | undefined} init
 * @param {typeof fetch} send
 * @param {Map<string, number>} [paced]
 */
function run(c, input, init, send, paced) {
  const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
  if (signal?.aborted) return Promise.reject(signal.reason);
  let job, call, lane;
  try {
    job = new FetchJob(c, send, input, init);
    call = new Call(c, signal);
    // With a gate the waits are the target's: the call is held until the
    // gate lets it go, and its own schedule only counts its attempts.
    const cl = call;
    const gate = c.gate;
    const key = gate ? gate.keyOf(input, init) : paced && c.pace && originOf(input);
    // A success saying no request remains paces the target's next calls until the reset: through the gate, else per origin.
    if (gate) c.pace && gate.pace && (job.pace = (ms) => gate.pace(key, ms));
    else if (key !== undefined && key !== false) {
      const at = /** @type {Map<string, number>} */ (paced);
      job.pace = (ms) => at.set(key, Date.now() + ms);
      cl.hold = () => (at.get(key) ?? 0) - Date.now();
    }
    lane = gate ? gate.enter(key, signal, cl.end, (/** @type {number=} */ hint) => cl.next(hint)) : scheduled;
  } catch (e) {
    call?.close();
    return Promise.reject(e);
  }
  return drive(call, job, lane);
}

/**
 * `fetch` with retries: resolves with a Response whatever its status (after
 * the last try, the last response); rejects only where fetch would.
 * @param {RequestInfo | URL} input
 * @param {RequestInit} [init]
 * @param {import('../../types/index.js').RetryOptions} [options]
 * @returns {Promise<Response>}
 */
export function fetchWithBackoff(input, init, options) {
  let c;
  try {
    c = options === undefined ? (defaults ??= config(own())) : config(snapshot(options));
  } catch (e) {
    return Promise.reject(e);
  }
  return /** @type {Promise<Response>} */ (run(c, input, init, globalThis.fetch));
}

/**
 * Wraps a fetch function (validating `options` now, on a copy); the result
 * has fetch's signature plus per-call options, and `extend(options)`.
 * @param {typeof fetch} fetchFn
 * @param {import('../../types/index.js').RetryOptions} [options]
 * @returns {import('../../types/index.js').FetchWithBackoff}
 */
export function withBackoff(fetchFn, options) {
  if (typeof fetchFn !== 'function') throw new TypeError('fetchFn must be a function');
  const base = snapshot(options);
  const c = config(base);
  /** @type {Map<string, number>} until when each origin said no request remains */
  const paced = new Map();
  const f = (/** @type {RequestInfo | URL} */ input, /** @type {RequestInit | undefined} */ init, /** @type {unknown} */ more) => {
    let cc = c;
    try {
      if (more !== undefined) cc = config(merge(base, more));
    } catch (e) {
      return Promise.reject(e);
    }
    return /** @type {Promise<Response>} */ (run(cc, input, init, fetchFn, paced));
  };
  f.extend = (/** @type {unknown} */ more) => withBackoff(fetchFn, merge(base, more));
  return f;
}

/**
 * Runs `fn({ attempt, signal })` until it resolves, with the same
 * schedules, deadline, hooks and budget as the fetch driver: every
 * rejection is retried unless `shouldRetry` returns false.
 * @template T
 * @param {(ctx: { attempt: number, signal?: AbortSignal }) => T | PromiseLike<T>} fn
 * @param {import('../../types/index.js').RetryFnOptions} [options]
 * @returns {Promise<T>}
 */
export function retry(fn, options) {
  let c, signal;
  try {
    if (typeof fn !== 'function') throw new TypeError('fn must be a function');
    if (options === undefined) c = defaults ??= config(own());
    else {
      const o = snapshot(options);
      signal = signalOf(o);
      c = config(o);
    }
  } catch (e) {
    return Promise.reject(e);
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  return /** @type {Promise<T>} */ (drive(new Call(c, signal), task(fn), scheduled));
}
