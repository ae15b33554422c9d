/**
 * `fetchWithBackoff` and `withBackoff` for bodies that stream: idle and first-chunk timeouts, resumed downloads, uploads sent again.
 *
 * The small module, as `wasm-backoff`: an idle timeout and a first-chunk
 * timeout on the answer's body, resuming a download that broke, and
 * request bodies sent again from a bounded buffer or made afresh per
 * attempt. Every option of `wasm-backoff`'s drivers applies too; the
 * options here are refused by `wasm-backoff` with a `TypeError` naming
 * this entry.
 * @module wasm-backoff/stream
 */
import type { RetryOptions as BaseOptions } from '../index.js';
export { Backoff, BackoffOptions, Preset, Strategy, Jitter, DoneInfo, RetryInfo, BeforeRetryInfo } from '../index.js';

/**
 * The options of the stream entry's drivers: those of `wasm-backoff` and
 * the stream options below. Checked at the call: a wrong type throws
 * `TypeError`, a value out of range `RangeError`, the message starting
 * with the option's name.
 */
export interface RetryOptions extends BaseOptions {
  /**
   * The most ms the returned body may go without a chunk while it is being
   * read (reset by every chunk; a consumer that stops reading stops the
   * clock): then the body errors with a `TimeoutError` DOMException (or,
   * with `resume`, the rest is asked for). Covers the first chunk too
   * unless `firstChunkTimeoutMs` is set. No timer outlives the body.
   * With `hedge`, it applies to the answer that won.
   * @default undefined (none)
   */
  idleTimeoutMs?: number;
  /**
   * Holds each answer that would be returned until its body's first chunk
   * (counted from its headers): a body silent for longer is a failed
   * attempt, retried as a timeout (`timeoutMs`'s rules). The returned
   * `Response` replays that chunk, then streams the rest; its status,
   * headers, `url` and `redirected` are the answer's. Not with `hedge`
   * (a `TypeError`: the chunk read ahead is the call's, not each racer's).
   * @default undefined (the call resolves at the headers)
   */
  firstChunkTimeoutMs?: number;
  /**
   * Resume a download whose body breaks (a network failure, or an
   * `idleTimeoutMs` stall): a GET answered `200` with a strong validator
   * (an `ETag` not marked `W/`; without an ETag, a `Last-Modified` at
   * least one second before the answer's `Date`, RFC 9110 §8.8.2.2) and no
   * `Content-Encoding` is asked again with `Range: bytes=N-` and
   * `If-Range`; only a `206` whose `Content-Range` starts at N, ends at
   * the body's length and carries the same validator is spliced into the
   * same stream. Each resume is an attempt of the call: the schedule goes
   * on, `onRetry` is told its wait, and `maxAttempts`, `maxElapsedMs`
   * (from the call's start), the budget and the gate apply. Any other end
   * (another status, even after its retries; another range or validator;
   * the attempts or the deadline spent) errors the body with a
   * `ResumeError`: bytes of two versions, or an error page, are never
   * spliced. Cancelling the body ends a resume in flight. Not with
   * `hedge` (a `TypeError`).
   * @default false
   */
  resume?: boolean;
  /**
   * The bytes of a streamed request body kept to send it again (a
   * `ReadableStream` body, or a `Request`'s body): before a retry the
   * source is read to its end; a body of more than this ends the call
   * (reason `'not-replayable'`), so a retry sends the caller's bytes or
   * nothing. A chunk that is not a `Uint8Array`, or an error of the
   * source, rejects the call at once with that error (never retried). A
   * `Request`'s body that fits is sent as bytes on every attempt.
   * Memory: at most this plus one chunk per call.
   * @default 65536 (the Fetch standard's allowance for a redirect)
   */
  replayBufferBytes?: number;
}

/**
 * A request body made afresh for each attempt (`init.body` as a
 * function): what it throws rejects the call, and nothing more is sent.
 */
export type BodyFactory = () => BodyInit | null | undefined;

/** `RequestInit` whose `body` may be a {@link BodyFactory}. */
export interface StreamInit extends Omit<RequestInit, 'body'> {
  body?: BodyInit | null | BodyFactory;
}

/**
 * `fetch` with retries and streaming bodies: as `wasm-backoff`'s, with the
 * stream options.
 */
export function fetchWithBackoff(input: Request | string | URL, init?: StreamInit, options?: RetryOptions): Promise<Response>;

/** A fetch function with retries and streaming bodies (see {@link withBackoff}). */
export interface FetchWithBackoff {
  (input: Request | string | URL, init?: StreamInit, options?: RetryOptions): Promise<Response>;
  /** A new function with these options over the current ones. */
  extend(options: RetryOptions): FetchWithBackoff;
}

/** Wraps a fetch function with retries and streaming bodies. */
export function withBackoff(fetchFn: typeof fetch, options?: RetryOptions): FetchWithBackoff;
