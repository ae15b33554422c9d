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
   * `count` independent draws of the delay before retry `attempt` (1 = the first retry),
   * ignoring `maxAttempts` and `maxElapsedMs`. Seeded options give the same array every time.
   * @param attempt integer in [1, 2^32 − 1]
   * @param count integer in [0, 2^24]
   */
  static sample(options: BackoffOptions | undefined, attempt: number, count: number): Float64Array;
}
