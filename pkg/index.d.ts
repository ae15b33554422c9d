/**
 * wasm-backoff: retry and backoff schedules computed in WebAssembly.
 *
 * All durations are milliseconds as JS numbers. "Retry n" is the wait before
 * the n-th retry (n = 1 is the wait after the first failure). Every delay is
 * clamped to 2^31 − 1 ms, the longest a JavaScript timer accepts.
 *
 * @example
 * ```ts
 * import { Backoff } from 'wasm-backoff';
 * const b = new Backoff({ preset: 'aws' });
 * let delay;
 * while ((delay = b.next()) !== undefined) {
 *   await new Promise((r) => setTimeout(r, delay));
 * }
 * ```
 * @packageDocumentation
 */

/**
 * A named policy reproducing a well-known system's timing exactly (n = retry number, U = uniform draw):
 * - `'gcs'` Google Cloud Storage: min(2^(n−1) s + U[0, 1000) ms, 32 s); no limit of its own.
 * - `'aws'` AWS SDKs / Brooker's full jitter: U[0, min(20 s, 100 ms · 2^n)); 3 attempts.
 * - `'decorrelated'` Brooker's decorrelated jitter: min(20 s, U[100 ms, 3 · previous)).
 * - `'equal'` Brooker's equal jitter: v/2 + U[0, v/2), v = min(20 s, 100 ms · 2^n).
 * - `'grpc'` gRPC connection backoff: min(1 s · 1.6^(n−1), 120 s) · U[0.8, 1.2); no limit.
 * - `'ethernet'` CSMA/CD: k · 51.2 µs, k uniform in [0, 2^min(n,10) − 1]; gives up after 16 collisions.
 * - `'akka'` Akka's ExponentialBackOff: slot time 10 ms · (2^k − 1), k uniform in [0, slot], ceiling 10, reset past it.
 * - `'flume'` Flume: 250 ms doubled per failure up to 4000 ms, no jitter, never gives up.
 * - `'hadoop'` Hadoop exponentialBackoffRetry(10, 100 ms): 100 ms · 2^n · U[0.5, 1.5); maxAttempts must be in [1, 63].
 */
export type Preset = 'gcs' | 'aws' | 'decorrelated' | 'equal' | 'grpc' | 'ethernet' | 'akka' | 'flume' | 'hadoop';

/**
 * How the unjittered wait grows with the retry number n:
 * - `'exponential'` baseMs · factor^(n−1)
 * - `'constant'` baseMs
 * - `'linear'` baseMs · n
 * - `'fibonacci'` baseMs · F(n), F(1) = F(2) = 1
 * - `'decorrelated'` U[baseMs, factor · previous wait) (Brooker), random by itself
 * - `'slotted'` a random number of slot times of baseMs (CSMA/CD, Akka); see `slotMode`
 */
export type Strategy = 'exponential' | 'constant' | 'linear' | 'fibonacci' | 'decorrelated' | 'slotted';

/**
 * Randomisation of the capped wait v:
 * - `'none'` v
 * - `'full'` U[0, v)
 * - `'equal'` v/2 + U[0, v/2)
 * - `{ ratio: r }` v · U[1 − r, 1 + r), r in [0, 1] (gRPC 0.2, Hadoop 0.5); `maxDelayMs` caps v, so the wait can reach maxDelayMs · (1 + r)
 * - `{ addMaxMs: a }` min(maxDelayMs, v + U[0, a)) (GCS adds up to 1000 ms)
 */
export type Jitter = 'none' | 'full' | 'equal' | { ratio: number; addMaxMs?: undefined } | { addMaxMs: number; ratio?: undefined };

/**
 * Options of {@link Backoff}. Every option is optional; an explicit option
 * overrides the preset's value. A wrong type throws `TypeError`, a value out
 * of range `RangeError`; the message starts with the option's name.
 */
export interface BackoffOptions {
  /** Start from a named policy. @default undefined (the defaults below) */
  preset?: Preset;
  /** @default 'exponential' */
  strategy?: Strategy;
  /** First wait, or the slot time for `'slotted'`, in ms; finite, >= 0. @default 100 */
  baseMs?: number;
  /** Growth factor of `'exponential'`; multiplier of the previous wait for `'decorrelated'`; >= 1. @default 2 (3 for 'decorrelated') */
  factor?: number;
  /** Cap of the unjittered wait in ms, >= 0; `Infinity` = only the timer limit (2^31 − 1). @default 20000 */
  maxDelayMs?: number;
  /** @default 'full' ('none' for the 'decorrelated' and 'slotted' strategies, which are random by themselves) */
  jitter?: Jitter;
  /** Total tries including the first (so `maxAttempts − 1` delays); integer >= 1; `Infinity` = no limit. @default undefined (no limit) */
  maxAttempts?: number;
  /** The sum of the delays handed out may not exceed this (ms, >= 0): `next()` returns `undefined` instead. @default undefined (no limit) */
  maxElapsedMs?: number;
  /** Same seed ⇒ same sequence, in every runtime (a safe integer). Without one, 53 bits from `crypto.getRandomValues`. @default undefined (random) */
  seed?: number;
  /** `'slotted'` only: exponent ceiling, integer in [1, 1023]. @default 10 */
  ceiling?: number;
  /** `'slotted'` only: past the ceiling, keep drawing there or start over from slot 1. @default 'stay' */
  atCeiling?: 'stay' | 'reset';
  /**
   * `'slotted'` only: `'binary'` = k uniform in [0, 2^min(n, ceiling) − 1] slots (CSMA/CD);
   * `'exponent'` = 2^k − 1 slots with k uniform in [0, slot] (Akka's state machine, quirks included).
   * @default 'binary'
   */
  slotMode?: 'binary' | 'exponent';
}

/** A retry schedule: an iterator of delays. */
export class Backoff {
  /** @throws {TypeError | RangeError} naming the offending option. */
  constructor(options?: BackoffOptions);
  /** The delay in ms before the next retry, or `undefined` to give up (sticky until `reset()`). */
  next(): number | undefined;
  /** Back to the first retry, as after a success. */
  reset(): void;
  /** Retries handed out since the last reset. */
  readonly attempt: number;
  /** Retries handed out since construction. */
  readonly totalRetries: number;
  /** Calls of `reset()` after a retry, plus `'slotted'` wraps past the ceiling with `atCeiling: 'reset'`. */
  readonly resets: number;
  /** Sum of the delays handed out since the last reset, in ms. */
  readonly elapsedMs: number;
  /**
   * Releases the schedule's slot in the wasm module now (O(1); the slot is
   * reused by the next `new Backoff()`). Optional: a schedule that is garbage
   * collected is freed too, later. Using the object afterwards throws
   * `TypeError`; calling `free()` again does nothing. At run time the class
   * also has `[Symbol.dispose]` (the same function), so `using b = new
   * Backoff()` frees at the end of the block; it is not declared here, so
   * that these types compile without the `esnext.disposable` lib.
   */
  free(): void;
  /**
   * `count` independent draws of the delay before retry `attempt` (1 = the first retry),
   * ignoring `maxAttempts` and `maxElapsedMs`. Seeded options give the same array every time.
   * @param attempt integer in [1, 2^32 − 1]
   * @param count integer in [0, 2^24]
   */
  static sample(options: BackoffOptions | undefined, attempt: number, count: number): Float64Array;
}

/** What `onRetry` is told before each wait. */
export interface RetryInfo {
  /** The attempt that just failed (1 = the first try). */
  attempt: number;
  /** The wait about to start, in ms (at least `retryAfterMs` when the server sent one). */
  delayMs: number;
  /** The failed attempt's HTTP status, when it got a response. */
  status?: number;
  /** The failed attempt's error (a network failure, or a `TimeoutError` from `timeoutMs`). */
  error?: unknown;
  /** The server's `Retry-After`, in ms, when valid. */
  retryAfterMs?: number;
}

/** Why a call stopped, as told to `onDone`. */
export type DoneReason =
  | 'success' // a response that is not an error (status < 400)
  | 'not-retryable' // a status outside `retryOn`
  | 'not-idempotent' // a retryable failure of a non-idempotent request (POST, PATCH) without Idempotency-Key or retryNonIdempotent
  | 'not-replayable' // the body was a ReadableStream: sent once
  | 'vetoed' // shouldRetry returned false
  | 'exhausted' // maxAttempts reached
  | 'retry-after' // the server's Retry-After exceeded maxRetryAfterMs: its response is returned at once
  | 'deadline' // the next wait would end past maxElapsedMs
  | 'budget' // the RetryBudget had no retry left
  | 'aborted' // the signal aborted
  | 'evicted' // with a gate: dropped from the target's full queue (the call rejects with GateOverflowError)
  | 'freed'; // with a gate: gate.free() ended it (held: rejects with TypeError; in flight: its own outcome, not retried)

/** What `onDone` is told once per call, however it ends. */
export interface DoneInfo {
  /** Attempts made (1 = no retry). */
  attempts: number;
  /** Wall-clock time of the whole call, in ms. */
  elapsedMs: number;
  reason: DoneReason;
  /** Status of the final response, if any. */
  status?: number;
  /** The final error, if the call rejects. */
  error?: unknown;
}

/**
 * Options of {@link fetchWithBackoff} and {@link withBackoff}: those of
 * {@link BackoffOptions} (the schedule), plus what to retry and how long.
 */
export interface RetryOptions extends BackoffOptions {
  /** Total tries including the first (unless the preset sets its own). @default 5 */
  maxAttempts?: number;
  /** A wall-clock deadline from the start of the call, in ms: no wait starts that would end past it. @default undefined (none) */
  maxElapsedMs?: number;
  /** Statuses to retry; network errors are always retried. @default [408, 429, 500, 502, 503, 504] */
  retryOn?: number[];
  /** Retry POST/PATCH/… too (they are retried anyway when the request has an `Idempotency-Key` header). @default false */
  retryNonIdempotent?: boolean;
  /** Per-attempt timeout in ms until the response headers arrive; a timed-out attempt counts as a network failure. @default undefined (none) */
  timeoutMs?: number;
  /** A larger `Retry-After` is not waited for: that response is returned at once. @default 60000 */
  maxRetryAfterMs?: number;
  /** Called before each wait. */
  onRetry?: (info: RetryInfo) => void;
  /** Called once when the call settles, with the attempts used and why it stopped. */
  onDone?: (info: DoneInfo) => void;
  /** Decide yourself: `true` forces a retry, `false` vetoes one, `undefined` keeps the default decision. */
  shouldRetry?: (info: { attempt: number; status?: number; error?: unknown; response?: Response }) => boolean | undefined;
  /**
   * A budget shared by many calls (a `RetryBudget` from `'wasm-backoff/budget'`,
   * or any object with these two methods): when it is empty, failures are
   * returned at once. @default undefined (none)
   */
  budget?: { deposit(nowMs?: number): void; withdraw(nowMs?: number): boolean };
  /**
   * Back off per target instead of per call: a {@link Gate} from `createGate`
   * of `'wasm-backoff/gate'` (the full module, so the gate costs nothing to
   * those who do not use it), shared by every call given it. While the
   * target is down, calls are held and one probe per round is sent.
   * Per-call limits still apply: `maxAttempts` counts the call's own
   * attempts plus each failed round it waited through; `maxElapsedMs` bounds
   * its wait. A held call that runs out rejects with `GateTimeoutError`; its
   * own last response is returned only when it runs out right after its own
   * attempt. `true` or gate options throw `TypeError` (make the gate with
   * `createGate(options)`).
   * @default undefined (no gate: every call backs off on its own)
   */
  gate?: Gate | false;
}

/**
 * `fetch` with retries. Resolves with a `Response` whatever its status (after the
 * last attempt, the last response); rejects only where `fetch` would: the last
 * network error, or the signal's `reason` on abort (at once, in an attempt or a wait).
 * Bad options reject with `TypeError`/`RangeError` before any request is sent.
 */
export function fetchWithBackoff(input: Request | string | URL, init?: RequestInit, options?: RetryOptions): Promise<Response>;

/** Wraps a fetch function (e.g. the global `fetch` in an edge worker); `options` are validated now. */
export function withBackoff(fetchFn: typeof fetch, options?: RetryOptions): (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/**
 * The wait a `Retry-After` value asks for, in ms (delta-seconds or any RFC 9110
 * HTTP-date); `undefined` if absent, invalid (any non-ASCII character
 * included) or a date not after `nowMs`. Parsed in JavaScript (it is a string);
 * the Rust core's parser is tested against the same vectors.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs?: number): number | undefined;

import type { Gate } from './gate/index.js';
