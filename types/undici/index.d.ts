/**
 * The fetch driver's retry policy at undici's dispatcher: every request of a Node process retried (`retryGlobalFetch`).
 *
 * The dispatcher is the layer under Node's global `fetch` (and undici's
 * `request`, `stream`, and clients built on them): one setting makes every
 * request of a process retry. It imports nothing from undici: it wraps the
 * dispatcher it is given, Node's own or the `undici` package's.
 * @module wasm-backoff/undici
 */
import type { BackoffOptions, RetryOptions } from '../index.js';
export { BackoffOptions, Preset, Strategy, Jitter } from '../index.js';

/**
 * Options of {@link retryInterceptor}, {@link retryDispatcher} and
 * {@link retryGlobalFetch}: the schedule's ({@link BackoffOptions}) and the
 * fetch driver's retry policy, with its names, defaults and errors (see
 * `RetryOptions` of `wasm-backoff`), checked when the function is called: a
 * wrong type throws `TypeError`, a value out of range `RangeError`, the
 * message starting with the option's name. Each request runs the fetch
 * driver's retry loop, so its hooks (`shouldRetry`, `onRetry`, `onDone`,
 * `delay`), `timeoutMs` (until an answer's headers), `budget`,
 * `throttleBaseMs`, `retryOnTimeout`, `retryAfterOverMax` and
 * `attemptHeader` work as they do there; the hooks get no `response` (a
 * dispatcher has none: `status` tells). `beforeRetry`, `gate`, `hedge`,
 * `endpoints`, `telemetry` and `signal` have no meaning at a dispatcher
 * and throw a `TypeError` (use fetch's own `signal`).
 *
 * A retried answer (a status of `retryOn`, or 413, 429 or 503 with a
 * server-named wait, or a network failure before any answer) is drained and
 * never reaches the caller; the answer that is not retried (a success, a
 * final failure, the last try's) reaches it whole.
 */
export interface UndiciRetryOptions
  extends BackoffOptions,
    Pick<
      RetryOptions,
      | 'timeoutMs'
      | 'budget'
      | 'shouldRetry'
      | 'onRetry'
      | 'onDone'
      | 'delay'
      | 'throttleBaseMs'
      | 'retryOnTimeout'
      | 'retryAfterOverMax'
      | 'attemptHeader'
    > {
  /**
   * A success saying no request remains (`RateLimit-Remaining: 0`,
   * `X-RateLimit-Remaining: 0`, `RateLimit`'s `r=0`) with a reset holds
   * the next requests to that origin until the reset, as a `withBackoff`
   * client's do: each interceptor (each `retryDispatcher`,
   * `retryGlobalFetch`) keeps its own origins. A reset past
   * `maxRetryAfterMs` holds nothing (unless `retryAfterOverMax: 'clamp'`).
   * An abort while held rejects at once. `false`: never held.
   * @default true
   */
  pace?: boolean;
  /**
   * Statuses retried, each an integer in [100, 599]; a server's
   * `x-should-retry: true | false` overrules them, as for the fetch driver.
   * A 429, 503 or 529 waits on 10 × `baseMs` (the fetch driver's default
   * `throttleBaseMs`), other failures on `baseMs`.
   * @default [408, 429, 500, 502, 503, 504, 521, 522, 529]
   */
  retryOn?: number[];
  /** Methods retried (case-insensitive); others only with an `Idempotency-Key`, `idempotencyKey` or `retryNonIdempotent`. @default ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'QUERY'] */
  methods?: string[];
  /** Retry every method (POST, PATCH, …) too. @default false */
  retryNonIdempotent?: boolean;
  /**
   * Send an `Idempotency-Key` header (a `crypto.randomUUID()` per request,
   * the same on every attempt) on requests whose method is not in
   * `methods`, which makes them retryable. A key the request has is kept.
   * @default false
   */
  idempotencyKey?: boolean;
  /** A server-named wait longer than this (ms, >= 0) is not waited for: that answer is final. @default 60000 */
  maxRetryAfterMs?: number;
  /**
   * A request body that can be read only once (a stream, an async
   * iterable; Node's `fetch` hands every body to the dispatcher as one) is
   * read first, up to this many bytes, so that a retry can send it again;
   * a longer one is sent as it comes, once (not retried after its first
   * try). Its chunks are those undici sends: strings (as UTF-8) and
   * ArrayBuffer views (`Buffer`, `Uint8Array`, any typed array,
   * `DataView`). Any other chunk (an `ArrayBuffer`, a number, an object)
   * fails the request with a `TypeError` (code `ERR_INVALID_ARG_TYPE`, as
   * undici's) whose message starts with `body`, sent nothing when it comes
   * within this bound; a body whose source throws fails the request with
   * that error. Neither is retried. @default 1048576 (1 MiB)
   */
  maxBufferBytes?: number;
}

/** An undici dispatch function: `(options, handler) => boolean` (undici's handler interface of `Symbol.for('undici.globalDispatcher.1')`). */
export type Dispatch = (options: any, handler: any) => boolean;

/** The part of an undici `Dispatcher` that {@link retryDispatcher} wraps and offers. */
export interface DispatcherLike {
  dispatch: Dispatch;
  close(...args: any[]): any;
  destroy(...args: any[]): any;
}

/**
 * An undici interceptor with the retry policy: for `agent.compose(...)`
 * (undici >= 6.20) or `new Agent().compose(retryInterceptor({ baseMs: 200 }))`.
 */
export function retryInterceptor(options?: UndiciRetryOptions): (dispatch: Dispatch) => Dispatch;

/**
 * A dispatcher that sends every request through `dispatcher` with retries:
 * for undici's `setGlobalDispatcher(retryDispatcher(new Agent(), options))`
 * or one call's `fetch(url, { dispatcher })`. `close` and `destroy` are
 * `dispatcher`'s.
 */
export function retryDispatcher(dispatcher: DispatcherLike, options?: UndiciRetryOptions): DispatcherLike & { dispatcher: DispatcherLike };

/**
 * Makes every `fetch` of this Node process retry, without the `undici`
 * package: wraps Node's own global dispatcher (Node makes it at its first
 * `fetch`; this makes one with a `fetch('data:,')` if there is none yet) and
 * puts the result in its place (`Symbol.for('undici.globalDispatcher.1')`,
 * where undici's `setGlobalDispatcher` puts one). Resolves with a function
 * that puts the previous dispatcher back.
 */
export function retryGlobalFetch(options?: UndiciRetryOptions): Promise<() => void>;
