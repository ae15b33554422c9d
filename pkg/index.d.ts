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
  | 'evicted'; // with a gate: dropped from the target's full queue (the call rejects with GateOverflowError)

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
  /** A budget shared by many calls: when it is empty, failures are returned at once. @default undefined (none) */
  budget?: RetryBudget;
  /**
   * Back off per target instead of per call (see {@link createGate}): while the
   * target is down, calls are held and one probe per round is sent. `true` or
   * {@link GateOptions}: with `withBackoff`, a gate of the wrapper's own, timed by
   * these options' schedule unless the object sets its own; with
   * `fetchWithBackoff`, one gate shared by every call given `true` (default
   * options), or by every call given the same options object (identity, not
   * contents: an inline `gate: { … }` literal makes a new gate per call, which
   * supervises nothing; keep the object in a constant). A {@link Gate}
   * from `createGate` is shared by everyone given it. Per-call limits still
   * apply: `maxAttempts` counts the call's own attempts plus each failed round
   * it waited through; `maxElapsedMs` bounds its wait. A held call that runs
   * out rejects with {@link GateTimeoutError}; its own last response is
   * returned only when it runs out right after its own attempt.
   * @default undefined (no gate: every call backs off on its own)
   */
  gate?: boolean | GateOptions | Gate;
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

/** Options of {@link RetryBudget} (defaults of tower's `TpsBudget`). */
export interface RetryBudgetOptions {
  /** The sliding window, in ms. @default 10000 */
  ttlMs?: number;
  /** Retries always allowed per second of window, whatever the traffic. @default 10 */
  minPerSec?: number;
  /** Extra retries allowed per request seen in the window. @default 0.2 */
  retryRatio?: number;
}

/**
 * Retries limited to a fraction of recent traffic plus a small floor, so a
 * failing service sees at most about (1 + retryRatio) times its normal load.
 * Share one instance between calls (and `withBackoff` wrappers) to one service.
 */
export class RetryBudget {
  constructor(options?: RetryBudgetOptions);
  /** Records one request (fetchWithBackoff does this once per call). */
  deposit(nowMs?: number): void;
  /** Takes one retry if available (fetchWithBackoff does this before each retry). */
  withdraw(nowMs?: number): boolean;
  /** Retries available now. */
  available(nowMs?: number): number;
}

/** The wait a `Retry-After` value asks for, in ms (delta-seconds or any RFC 9110 HTTP-date); `undefined` if invalid or past. */
export function parseRetryAfter(value: string | null | undefined, nowMs?: number): number | undefined;

/**
 * Options of {@link createGate}: the schedule of the backoff rounds (any
 * {@link BackoffOptions}; a gate never gives a target up, so the schedule's own
 * `maxAttempts` and `maxElapsedMs` are not used for it), the queue, and the
 * per-call defaults of {@link Gate.run}.
 */
export interface GateOptions extends BackoffOptions {
  /** Most calls held per target (integer >= 0, or `Infinity`); beyond it, `overflow` decides. @default 1000 */
  maxQueued?: number;
  /** When the queue is full: drop the oldest held call, or refuse the newest; either rejects with {@link GateOverflowError} and counts in `stats().evictions`. @default 'evict-oldest' */
  overflow?: 'evict-oldest' | 'reject-newest';
  /**
   * Most calls in flight per target (integer >= 1, or `Infinity`); more wait in the queue, in order.
   * The probe is always sent. So that hung calls cannot hold the queue forever, once nothing has been
   * sent for `probeTimeoutMs` while calls wait, the calls in flight (all that old) stop counting
   * against the limit (they still count in `inFlight`; their late failures start no round).
   * @default Infinity
   */
  concurrency?: number;
  /** A probe still unsettled after this many ms counts as failed: the next round starts and another held call probes (the hung one is left to its own timeout). Also ends the slots of hung calls (see `concurrency`). `Infinity` = wait for them. @default 30000 */
  probeTimeoutMs?: number;
  /** The target of a fetch call. @default the request URL's origin */
  key?: (input: Request | string | URL, init?: RequestInit) => unknown;
  /** {@link Gate.run}: whether a rejection means the target is failing (held and retried) or not (returned at once, the target stays healthy). @default every rejection is a failure */
  retryable?: (error: unknown) => boolean;
  /** {@link Gate.run}: default per-call limit of attempts, counting each failed round a held call waited through (integer >= 1, or `Infinity`). @default 5 */
  maxAttempts?: number;
  /** {@link Gate.run}: default per-call deadline in ms from the call: no wait for a round that ends past it. @default undefined (none) */
  maxElapsedMs?: number;
}

/** Where a target stands: `'healthy'` (calls pass), `'backing-off'` (all held until the round ends), `'open'` (the next call probes), `'probing'` (one probe out, the rest held). */
export type GatePhase = 'healthy' | 'backing-off' | 'open' | 'probing';

/**
 * A per-target backoff gate (the actor-supervisor pattern): while a target is
 * healthy, calls pass straight through. The first failure of a call sent while
 * it was healthy starts a backoff round (the other calls failing with it join
 * that round instead of starting their own); the call and every new call for
 * the target are held. When the round ends, one held call (the oldest) is sent
 * as the probe; its success resets the schedule and releases the held calls in
 * arrival order (up to `concurrency` at a time); its failure starts the next,
 * longer round. Timers exist only while calls are held.
 */
export class Gate {
  /** @throws {TypeError | RangeError} naming the offending option. */
  constructor(options?: GateOptions);
  /**
   * Runs `task` through the gate of `key` (any value; compared with `Map` semantics),
   * retrying it (held) while it rejects, within its limits. Resolves with its value;
   * rejects with its last error, {@link GateOverflowError}, {@link GateTimeoutError},
   * or the signal's reason at once on abort.
   */
  run<T>(key: unknown, task: (ctx: { signal?: AbortSignal }) => Promise<T> | T, options?: { signal?: AbortSignal; maxAttempts?: number; maxElapsedMs?: number }): Promise<T>;
  /**
   * Counters since creation — `evictions` (calls dropped by `maxQueued`), `rounds` (backoff
   * rounds started), `probes` (probes sent), `timeouts` (held calls that gave up with
   * {@link GateTimeoutError}) — and now, over all targets: calls `held`, calls `inFlight`,
   * and `targets` that are not idle.
   */
  stats(): { evictions: number; rounds: number; probes: number; timeouts: number; held: number; inFlight: number; targets: number };
  /** Where the target `key` stands now. */
  state(key: unknown): { phase: GatePhase; held: number; inFlight: number };
}

/** A gate for {@link Gate.run} and for the `gate` option of {@link fetchWithBackoff} / {@link withBackoff}. */
export function createGate(options?: GateOptions): Gate;

/** A held call dropped because its target's queue was full (`maxQueued`); `name` is `'GateOverflowError'`. */
export class GateOverflowError extends Error {
  readonly name: 'GateOverflowError';
  /** The target's key. */
  readonly key: unknown;
}

/** A held call that ran out of attempts or time before its target recovered; `name` is `'GateTimeoutError'`. */
export class GateTimeoutError extends Error {
  readonly name: 'GateTimeoutError';
  readonly key: unknown;
  /** `'exhausted'` (maxAttempts) or `'deadline'` (maxElapsedMs). */
  readonly reason: 'exhausted' | 'deadline';
}
