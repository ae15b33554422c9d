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
import { own, readAll } from '../options.js';
import { parseRetryAfter, serverWait } from '../retry-after.js';
import { Call, drive } from '../engine/loop.js';
import { scheduled, paced } from '../engine/schedule.js';
import { task } from '../engine/task.js';
import { EXT, RETRY_FN_OPTIONS, config, merge, snapshot } from './options.js';
import { FetchJob } from './request.js';
import { originOf } from '../request-model.js';

export { parseRetryAfter, serverWait };

/** The validated defaults, made at the first call that uses them (not at import: no wasm work before it is needed). */
let defaults;

/**
 * What the stream entry adds to the drivers: its job (a FetchJob that
 * wraps bodies) and the reader of its options.
 * @typedef {object} Ext
 * @property {typeof FetchJob} Job
 * @property {(o: Record<string, any>, c: import('./options.js').Config) => import('./options.js').Config} read
 */

/**
 * One fetch call through `send` (by the stream entry's job when its
 * options carry one). `at` (a withBackoff client's): until when each
 * origin said no request remains (epoch ms).
 *
 * The call's lane: failover's, for a request to one of its endpoints; a
 * gate's ticket; else the plain schedule (a client's paced by origin).
 * Each feature is wired in by the value its option holds, made by its own
 * subpath (`hedge()`, `failover()`, a Gate): its code is paid for by its
 * importers only.
 * @param {import('./options.js').Config & { ext?: Ext }} c
 * @param {any} input
 * @param {RequestInit | undefined} init
 * @param {typeof fetch} send
 * @param {Map<string, number>} [at]
 * @param {boolean} [shared] run by a `dedupe` for its callers
 * @returns {Promise<any>} (not an async function: one promise less per call; it
 * throws where its callers, async functions, reject)
 */
function run(c, input, init, send, at, shared = false) {
  const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
  if (signal?.aborted) throw signal.reason;
  // (dedupe: one call, under its own signal, for every caller of the same request)
  const d = c.dedupe;
  if (d && !shared)
    return /** @type {Function} */ (d.share)({ c, input, init }, async (/** @type {AbortSignal=} */ s) =>
      run(c, input, { ...init, signal: s }, send, at, true),
    );
  let job, call, lane;
  try {
    // (fetch would send a function as its source text)
    if (!c.ext && typeof init?.body === 'function') throw new TypeError(`a body function ${STREAM}`);
    const { gate, pace } = c;
    const origin = !gate && at && pace && originOf(input);
    job = new (c.ext?.Job ?? FetchJob)(c, send, input, init, pace && (!!gate || !!origin));
    call = new Call(c, signal);
    const own = origin ? paced(/** @type {Map<string, number>} */ (at), origin) : scheduled;
    /** @type {import('./options.js').Wiring} */
    const x = { c, call, input, init, job, lane: own, own };
    // Failover's lane (a request to a listed origin) holds its endpoints'
    // tickets itself; else the gate's ticket; then the features around
    // them, in order (a quota's wait; auth's refresh, hedging's race).
    x.lane = c.endpoints?.lane?.(x) ?? gate?.lane(call, input, init) ?? own;
    for (const f of c.features) {
      x.lane = f.lane?.(x) ?? x.lane;
      x.job = f.job?.(x) ?? x.job;
    }
    job = x.job;
    lane = x.lane;
  } catch (e) {
    call?.close();
    throw e;
  }
  return drive(call, job, lane);
}

/** Where the stream options live (named in the main entry's TypeError). */
const STREAM = "is provided by 'wasm-backoff/stream'";
/** The options only the stream entry reads. */
const STREAM_OPTIONS = ['idleTimeoutMs', 'firstChunkTimeoutMs', 'resume', 'replayBufferBytes'];

/**
 * The options of a call: with the stream entry's extension (`o[EXT]`, set
 * by js/entries/stream.js), its options too; without it, a stream option
 * is refused, naming the entry that provides it.
 * @param {Record<string | symbol, any>} o
 * @returns {import('./options.js').Config & { ext?: Ext }}
 */
function configure(o) {
  const ext = o[EXT];
  if (ext) return Object.assign(ext.read(o, config(o)), { ext });
  for (const k of STREAM_OPTIONS) if (o[k] !== undefined) throw new TypeError(`${k} ${STREAM}`);
  return config(o);
}

/**
 * `fetch` with retries: resolves with a Response whatever its status (after
 * the last try, the last response); rejects only where fetch would.
 * @param {RequestInfo | URL} input
 * @param {RequestInit} [init]
 * @param {import('../../types/index.js').RetryOptions} [options]
 * @returns {Promise<Response>}
 */
export async function fetchWithBackoff(input, init, options) {
  return run(options === undefined ? (defaults ??= configure(own())) : configure(snapshot(options)), input, init, globalThis.fetch);
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
  const c = configure(base);
  /** @type {Map<string, number>} until when each origin said no request remains */
  const at = new Map();
  const f = async (/** @type {RequestInfo | URL} */ input, /** @type {RequestInit | undefined} */ init, /** @type {unknown} */ more) =>
    run(more === undefined ? c : configure(merge(base, more)), input, init, fetchFn, at);
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
export async function retry(fn, options) {
  if (typeof fn !== 'function') throw new TypeError('fn must be a function');
  let c, signal;
  if (options === undefined) c = defaults ??= configure(own());
  else {
    const o = snapshot(options);
    signal = readAll(o, RETRY_FN_OPTIONS).signal;
    c = configure(o);
  }
  if (signal?.aborted) throw signal.reason;
  return /** @type {Promise<T>} */ (drive(new Call(c, signal), task(fn), scheduled));
}
