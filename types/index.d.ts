/**
 * Retry and backoff for `fetch` and any async work: the calculator (`Backoff`) and the fetch driver (`fetchWithBackoff`, `withBackoff`, `retry`).
 *
 * The schedules are computed in WebAssembly.
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
 * @module wasm-backoff
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

/** A retry schedule: an iterator of delays (`for (const delay of backoff)` too). */
export class Backoff implements Iterable<number> {
  /** @throws {TypeError | RangeError} naming the offending option. */
  constructor(options?: BackoffOptions);
  /** The delay in ms before the next retry, or `undefined` to give up (sticky until `reset()`). */
  next(): number | undefined;
  /** Back to the first retry, as after a success. */
  reset(): void;
  /** The delays `next()` hands out, until it gives up (`[...new Backoff({ maxAttempts: 4 })]` has three). */
  [Symbol.iterator](): Iterator<number>;
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
  /** The wait about to start, in ms (at least `retryAfterMs` when the server named one). */
  delayMs: number;
  /** The failed attempt's HTTP status, when it got a response. */
  status?: number;
  /** The failed attempt's error (a network failure, or a `TimeoutError` from `timeoutMs`). */
  error?: unknown;
  /** The wait the server named, in ms (see {@link serverWait}: `Retry-After`, then the rate-limit headers), as honoured (`maxRetryAfterMs` with `retryAfterOverMax: 'clamp'`); for `retry`, the one the error carried. */
  retryAfterMs?: number;
  /** The failed attempt's response, for its headers (a request id); its body is released right after `onRetry`. */
  response?: Response;
}

/** What the `delay` hook is told: an attempt that will be retried, and the wait the schedule proposes. */
export interface DelayInfo {
  /** The attempt that failed (1 = the first try). */
  attempt: number;
  /** Its HTTP status (for `retry`, the error's `status` when it has one). */
  status?: number;
  /** Its error, when it got no response. */
  error?: unknown;
  /** Its response (read a `clone()`: the body is released when the retry goes). */
  response?: Response;
  /** The wait the server named (or the error carried), in ms, as honoured. */
  retryAfterMs?: number;
  /** The schedule's proposal, in ms: its next delay (on `throttleBaseMs` for a 429, 503 or 529), lifted to `retryAfterMs` with its jitter. */
  delayMs: number;
}

/** Headers `beforeRetry` may return (what `new Headers()` takes). */
export type RetryHeaders = Headers | Record<string, string> | [string, string][];

/** What `beforeRetry` is told, after the wait, before the retry is sent. */
export interface BeforeRetryInfo {
  /** The attempt about to be sent (2 = the first retry). */
  attempt: number;
  /** A copy of the request about to be sent (its headers as they will go); change it and return it to send it so. */
  request: Request;
  /** The previous attempt's status, error and response (its body already released). */
  status?: number;
  error?: unknown;
  response?: Response;
  /** Aborts with the caller's signal or the deadline: pass it to a token refresh. */
  signal?: AbortSignal;
}

/** Why a call stopped, as told to `onDone`. */
export type DoneReason =
  | 'success' // a response that is not an error (status < 400)
  | 'not-retryable' // a status outside `retryOn`
  | 'not-idempotent' // a retryable failure of a non-idempotent request (POST, PATCH) without Idempotency-Key or retryNonIdempotent
  | 'vetoed' // shouldRetry returned false, or delay returned false
  | 'not-replayable' // the body was a ReadableStream: sent once
  | 'exhausted' // maxAttempts reached
  | 'retry-after' // the server's Retry-After exceeded maxRetryAfterMs: its response is returned at once
  | 'deadline' // maxElapsedMs: the next wait would end at or past it (the last response is returned), or it passed during an attempt or a hook (rejects with a TimeoutError)
  | 'budget' // the RetryBudget had no retry left
  | 'aborted' // the signal aborted
  | 'hook-error' // shouldRetry, beforeRetry or delay threw, or returned what it may not (the call rejects with its error)
  | 'evicted' // with a gate: dropped from the target's full queue (the call rejects with GateOverflowError)
  | 'freed' // with a gate: gate.free() ended it (held: rejects with TypeError; in flight: its own outcome, not retried)
  | 'circuit-open'; // with a gate in fail-fast mode: the target's circuit is open (rejects with BrokenCircuitError)

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
  /** With `hedge`: the attempt whose answer the call returns (the race's winner), when a race answered. */
  won?: number;
  /** With `hedge`: the hedges sent over the whole call (each counts in `attempts` too). */
  hedges?: number;
  /** With `endpoints`: the origin the last answered attempt went to (e.g. `'https://b.example'`); undefined for a request to an origin the endpoints do not list (failover left it alone). */
  endpoint?: string;
  /** With `auth`: `true` when the call was sent again after a token refresh (inside one attempt). */
  refreshed?: boolean;
  /** With `limit`: how long the call waited for its quota's budget, in ms, over its attempts. */
  quotaMs?: number;
}

/**
 * What `fallback` is told: what `onDone` is told, and the call's last
 * answer (`response`), when it ended with one (a status of `retryOn`);
 * when it rejects, `error` is what it would reject with.
 */
export interface FallbackInfo extends DoneInfo {
  /** The call's last answer (the fallback may return it, read it or leave it: its body is let go when another Response is returned). */
  response?: Response;
}


/**
 * Options of {@link retry}: those of {@link BackoffOptions} (the schedule),
 * plus the deadline, the hooks and a budget.
 */
export interface RetryFnOptions extends BackoffOptions {
  /** Total tries including the first (unless the preset sets its own). @default 5 */
  maxAttempts?: number;
  /**
   * A hard deadline for the whole call, in ms from its start: no wait starts
   * that would end at or past it, and whatever runs when it passes (an attempt,
   * a hook) is aborted: the call rejects with a `TimeoutError` DOMException,
   * as `AbortSignal.timeout` does. @default undefined (none)
   */
  maxElapsedMs?: number;
  /** Per attempt, in ms: its signal aborts with a `TimeoutError` and the attempt counts as failed (and is retried). @default undefined (none) */
  timeoutMs?: number;
  /** Aborts the call: at once, in an attempt, a wait or a hook; it rejects with the signal's `reason`. @default undefined */
  signal?: AbortSignal;
  /**
   * An observer, called before each wait. Observers never change the
   * outcome: what one throws (or the rejection of what it returns) goes to
   * `console.error`. Not awaited.
   * @default undefined (none)
   */
  onRetry?: (info: RetryInfo) => void | Promise<void>;
  /** An observer, called once when the call settles, with the attempts used and why it stopped. @default undefined (none) */
  onDone?: (info: DoneInfo) => void | Promise<void>;
  /**
   * A decision hook, awaited: `true` forces a retry, `false` vetoes one,
   * `undefined` keeps the default decision (for `retry`: retry every
   * rejection). If it throws or rejects, the call rejects with that error;
   * another return type rejects with a `TypeError`. An abort while it runs
   * rejects at once. For `retry` it is asked on rejections only; for fetch,
   * after every attempt (so a 200 can be retried too).
   * @default undefined (the retry policy decides alone)
   */
  shouldRetry?: (info: { attempt: number; status?: number; error?: unknown; response?: Response }) => boolean | undefined | Promise<boolean | undefined>;
  /**
   * Chooses the wait before each retry, from what happened: return a number
   * of ms (>= 0) to wait that instead, `false` to give up (the call ends
   * with this attempt's outcome, reason `'vetoed'`), or `undefined` to keep
   * the schedule's proposal (`info.delayMs`). Synchronous: it runs inside a
   * gate's bookkeeping too (with a gate, its wait is the call's own backoff
   * while the target is healthy; the target's rounds decide while it backs
   * off). Asked only when a retry is wanted and the schedule has one left,
   * and not when the server's wait is over `maxRetryAfterMs` (unless
   * clamped); `maxElapsedMs` then bounds the wait chosen. Not floored by
   * the server's wait: return at least `info.retryAfterMs` to honour it.
   * Another return (a string, a negative number, a promise) rejects with a
   * `TypeError`/`RangeError`; what it throws, with that (`'hook-error'`).
   * A promise it returns is not awaited: what that promise rejects with goes
   * to `console.error` (never an unhandled rejection).
   * @default undefined (the schedule's proposal)
   */
  delay?: (info: DelayInfo) => number | false | undefined;
  /**
   * The base of the wait after a throttled attempt (429, 503 or 529, with or
   * without a server-named wait; for `retry`, an error whose `status` is
   * one), in place of `baseMs`: the same schedule, the same attempt count,
   * the step drawn on this base (the AWS SDKs use 1000 ms for throttling
   * and 50 ms for transient failures). Other failures (network failures,
   * timeouts, other statuses) keep `baseMs`. A server-named wait still
   * lifts it (a finite number >= 0).
   * @default 10 × `baseMs` (the preset's base, when it sets one)
   */
  throttleBaseMs?: number;
  /**
   * Retry an attempt that timed out (`timeoutMs`). `false`: the first
   * timeout ends the call (it rejects with the `TimeoutError`, reason
   * `'not-retryable'`), for work that must not be repeated once it may have
   * started. @default true
   */
  retryOnTimeout?: boolean;
  /** A larger server-named wait (for `retry`: one the error carries) is not waited for: that response (or error) is returned at once (reason `'retry-after'`); see `retryAfterOverMax`. @default 60000 */
  maxRetryAfterMs?: number;
  /**
   * A server-named wait over `maxRetryAfterMs`: `'give-up'` returns that
   * answer at once (reason `'retry-after'`); `'clamp'` waits
   * `maxRetryAfterMs` instead (plus its jitter) and retries, as ky and
   * undici do. @default 'give-up'
   */
  retryAfterOverMax?: 'give-up' | 'clamp';
  /**
   * A budget shared by many calls (a `RetryBudget` from `'wasm-backoff/budget'`,
   * or any object with these two methods): when it is empty, failures are
   * returned at once. @default undefined (none)
   */
  budget?: { deposit(nowMs?: number): void; withdraw(nowMs?: number): boolean };
  /**
   * Spans and metrics of every call and attempt, made by `instrument` of
   * `'wasm-backoff/otel'` (docs/telemetry.md): set it through that function,
   * not by hand. Without it nothing is observed and nothing is paid.
   * @default undefined (none)
   */
  telemetry?: Telemetry;
}

/**
 * What `instrument` of `'wasm-backoff/otel'` puts in the `telemetry` option:
 * the engine calls it once per call and tells what it returns of each
 * attempt, wait and end. Its shape is internal.
 */
export type Telemetry = (call: never, job: never) => unknown;

/**
 * Options of {@link fetchWithBackoff} and {@link withBackoff}: those of
 * {@link retry}, plus what to retry and how. Every option is checked when
 * given (at the call, or when wrapping); the options are copied then, so
 * changing the object later changes nothing.
 */
export interface RetryOptions extends Omit<RetryFnOptions, 'signal'> {
  /**
   * Per attempt, in ms, until its response headers arrive (the body is not
   * covered: the caller's `signal` is): a timed-out attempt counts as a
   * network failure and is retried. @default undefined (none)
   */
  timeoutMs?: number;
  /**
   * A hard deadline from the start of the call until the final response's
   * headers, across attempts, waits and hooks: no wait starts that would end
   * past it (then the last response is returned, reason `'deadline'`), and an
   * attempt or hook still running when it passes is aborted: the call
   * rejects with a `TimeoutError` DOMException, as `AbortSignal.timeout`
   * does. Reading the returned body is not covered (pass a `signal`).
   * @default undefined (none)
   */
  maxElapsedMs?: number;
  /**
   * Statuses to retry. Network failures (fetch's `TypeError`) and timeouts of
   * `timeoutMs` are always retried; 413, 429 and 503 are retried too when the
   * server names a wait (see {@link serverWait}). A request fetch cannot
   * build (a bad URL, method or header) rejects at once, nothing sent; other
   * errors of a custom fetch function are not retried unless `shouldRetry` says so.
   * @default [408, 429, 500, 502, 503, 504, 521, 522, 529]
   */
  retryOn?: number[];
  /** Methods retried (case-insensitive); others only with an `Idempotency-Key`, `idempotencyKey` or `retryNonIdempotent`. @default ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'QUERY'] */
  methods?: string[];
  /** Retry every method (POST, PATCH, …) too. @default false */
  retryNonIdempotent?: boolean;
  /**
   * Send an `Idempotency-Key` header (a `crypto.randomUUID()` per call, the
   * same on every attempt) on a request whose method is not in `methods`,
   * which makes POST and PATCH retryable. A key the request already has is
   * kept; a GET gets none (it needs none). The same rule as
   * `wasm-backoff/undici`'s and the outbox's. @default false
   */
  idempotencyKey?: boolean;
  /**
   * A header naming the attempt on every request, as the AWS SDKs'
   * `amz-sdk-request`: `attempt=2; max=5` (`; max` only with a limit), so
   * that servers can tell retries from new traffic. With `hedge`, racers are
   * numbered too and `max` is `maxAttempts` × (1 + `maxHedges`). The idempotency key's
   * name, a forbidden request header of the Fetch standard (`Host`,
   * `Connection`, `Sec-…`, …) or one undici refuses (`Expect`,
   * `Transfer-Encoding`, `Upgrade`, `Keep-Alive`) throws a `RangeError`.
   * @default undefined (none)
   */
  attemptHeader?: string;
  /**
   * Pace after a success that says no request remains: a response with
   * `RateLimit-Remaining: 0` (or `X-RateLimit-Remaining: 0`, or `RateLimit`'s
   * `r=0`) and a reset (`RateLimit-Reset`, `X-RateLimit-Reset`, `RateLimit`'s
   * `t`, …: what {@link serverWait} reads) holds the next calls to that
   * target until the reset, before their first attempt (cut short by their
   * signal and deadline). A reset past `maxRetryAfterMs` holds nothing (the
   * next call goes and the server's answer decides), unless
   * `retryAfterOverMax: 'clamp'`, which holds `maxRetryAfterMs`. The
   * target is the gate's key with a `gate`, else
   * the request's origin within one `withBackoff` client (`extend` makes a
   * new client); `fetchWithBackoff`, which keeps nothing between calls,
   * paces only through a gate. @default true
   */
  pace?: boolean;
  /**
   * A decision hook, awaited after each wait, before the retry is sent: may
   * return a `Request` (sent from now on, instead of the original), headers
   * (a `Headers`, a record or pairs, set over the request's for this and
   * later attempts: a fresh `Authorization`), or `undefined` (no change). If
   * it throws or rejects, the call rejects with that error; another return
   * type rejects with a `TypeError`.
   * @default undefined (none: every attempt sends the request as it is)
   */
  beforeRetry?: (info: BeforeRetryInfo) => Request | RetryHeaders | undefined | Promise<Request | RetryHeaders | undefined>;
  /**
   * Back off per target instead of per call: a {@link Gate} from `createGate`
   * of `'wasm-backoff/gate'` (its own wasm module, so the gate costs nothing to
   * those who do not use it), shared by every call given it. While the
   * target is down, calls are held and one probe per round is sent.
   * Per-call limits still apply: `maxAttempts` counts the call's own
   * attempts plus each failed round it waited through; `maxElapsedMs` bounds
   * its wait. A held call that runs out rejects with `GateTimeoutError`
   * (`reason` `'deadline'` or `'exhausted'`), whichever timer fires first; its
   * own last response is returned only when it runs out right after its own
   * attempt. `true` or gate options throw `TypeError` (make the gate with
   * `createGate(options)`).
   * @default undefined (no gate: every call backs off on its own)
   */
  gate?: Gate | false;
  /**
   * Hedging: a {@link Hedge} from `hedge({ delayMs, maxHedges })` of
   * `'wasm-backoff/hedge'` (plain JavaScript, downloaded only by those who
   * import it). When an attempt has not answered after `delayMs`, the same
   * request is sent again (up to `maxHedges` more); the first answer that
   * ends the call wins and the others are aborted, their bodies cancelled.
   * An answer worth a retry waits for the racers still out; when none is
   * left, the call backs off as usual and races again. Only requests that
   * may be sent twice (an idempotent method, an `Idempotency-Key`,
   * `idempotencyKey` or `retryNonIdempotent`) whose body can be sent again
   * (not a `ReadableStream`) hedge. Each hedge takes a
   * retry from `budget`, and none is sent unless `gate` has the target's
   * circuit closed. `onDone` tells `won` and `hedges`. Anything else throws
   * a `TypeError`.
   * @default undefined (no hedging)
   */
  hedge?: Hedge;
  /**
   * Failover: a {@link Failover} from `failover(endpoints)` of
   * `'wasm-backoff/failover'` (plain JavaScript): for a request to one of
   * these origins, the origins its attempts go to, its own origin replaced
   * (its path and query kept); a request to any other origin is sent there,
   * untouched. A request sent to another origin than its own goes without
   * its `Authorization`, `Cookie` and `Proxy-Authorization` headers, as on a
   * cross-origin redirect, unless that endpoint says `credentials: true`. The
   * first attempt of a call goes to the first endpoint whose circuit is
   * usable (or, weighted, to one drawn by weight among them); a retry to
   * the next one whose circuit is closed. With a `gate` (a fleet's shared
   * gate too) each endpoint is its own target: its health is kept apart,
   * and a preferred endpoint that recovers is probed (the call that finds
   * it half-open) and returned to. Without a gate, retries rotate through
   * the list. `beforeRetry`'s `request.url` is where the retry goes;
   * `onDone` tells `endpoint`. Anything else throws a `TypeError`.
   * @default undefined (every attempt goes to the request's URL)
   */
  endpoints?: Failover;
  /**
   * What the caller gets when the call fails for good: a rejection (a
   * network failure after the last attempt, the deadline's `TimeoutError`,
   * a gate's or a quota's refusal, an error of a hook or of auth's
   * refresh), or a final answer whose status is one of `retryOn` (a 503
   * after the last attempt, a 429 whose wait is over `maxRetryAfterMs`).
   * Not for a rejection its own signal's abort caused, nor for an error
   * that is no network failure (reason `'not-retryable'`: a request fetch
   * cannot build, a custom fetch function's own error, a timeout with
   * `retryOnTimeout: false`): those reject as they would. Any other
   * answer — a success, a 404 — is the server's answer and is returned as
   * it is: the fallback is not called.
   * Called once, after `onDone`, with the same info plus the last answer
   * (`response`); the call resolves with the `Response` it returns (or
   * resolves to), and the last answer's body is let go unless that is
   * what it returns. To keep the call's own end, return `info.response`
   * or throw `info.error`. What it throws (or rejects with) is what the
   * call rejects with. The caller's signal still aborts the call while it
   * runs. `staleIfError()` of `'wasm-backoff/cache'` makes one that serves
   * the last good copy.
   * @default undefined (none: the call ends as it ended)
   */
  fallback?: (info: FallbackInfo) => Response | Promise<Response>;
  /**
   * Authorization: an {@link Auth} from `auth({ header, refresh })` of
   * `'wasm-backoff/auth'` (plain JavaScript): every attempt carries the
   * header `header()` gives; a 401 starts one `refresh()` shared by every
   * call that meets a 401 while it runs, and each is sent once more with
   * the new header, inside the same attempt (no retry counted, no budget
   * taken). A second 401 of a call is returned as it is. The header never
   * goes to another origin than the call's. `onDone` tells `refreshed`.
   * Anything else throws a `TypeError`.
   * @default undefined (none)
   */
  auth?: Auth;
  /**
   * Request coalescing: a {@link Dedupe} from `dedupe()` of
   * `'wasm-backoff/dedupe'` (plain JavaScript): concurrent GET and HEAD
   * calls for the same request (its URL and headers, or `dedupe`'s `key`)
   * share one call, its retries included; each caller gets its own
   * `Response`; one caller's abort does not abort the others. Anything else
   * throws a `TypeError`.
   * @default undefined (every call sends its own)
   */
  dedupe?: Dedupe;
  /**
   * A quota: a {@link Quota} from `quota({ rpm, tpm, key, cost })` of
   * `'wasm-backoff/quota'` (plain JavaScript): each attempt waits for its
   * key's requests- and tokens-per-minute budget (kept in step with
   * OpenAI's and Anthropic's rate-limit headers) instead of meeting a 429;
   * a call that cannot have it before its deadline rejects at once with a
   * `QuotaError`, nothing sent. `onDone` tells `quotaMs`. Anything else
   * throws a `TypeError`.
   * @default undefined (no quota)
   */
  limit?: Quota;
}

/**
 * `fetch` with retries. Resolves with a `Response` whatever its status (after the
 * last attempt, the last response); rejects only where `fetch` would: a
 * request it cannot build, the last network error, the signal's `reason` on
 * abort (at once, in an attempt, a wait or a hook), a `TimeoutError` at the
 * `maxElapsedMs` deadline, or the error of a decision hook. The caller's
 * `signal` reaches the returned body, as with `fetch`.
 * Bad options reject with `TypeError`/`RangeError` before any request is sent.
 */
export function fetchWithBackoff(input: Request | string | URL, init?: RequestInit, options?: RetryOptions): Promise<Response>;

/** What {@link withBackoff} returns: fetch's signature, plus options per call (merged over the wrapped ones). */
export interface FetchWithBackoff {
  (input: Request | string | URL, init?: RequestInit, options?: RetryOptions): Promise<Response>;
  /** A new wrapper of the same fetch function with `options` merged over these (checked now). */
  extend(options: RetryOptions): FetchWithBackoff;
}

/** Wraps a fetch function (e.g. the global `fetch` in an edge worker); `options` are checked and copied now. */
export function withBackoff(fetchFn: typeof fetch, options?: RetryOptions): FetchWithBackoff;

/**
 * Runs `fn({ attempt, signal })` until it resolves, with the schedules,
 * signal, deadline, hooks and budget of the fetch driver (what p-retry is
 * for): every rejection is retried unless `shouldRetry` returns false; after
 * the last attempt the call rejects with the last error. `signal` aborts
 * with the caller's signal, `timeoutMs` and the deadline: pass it on.
 * @example
 * ```ts
 * const user = await retry(async ({ signal }) => (await db.get('user', { signal })), { preset: 'aws' });
 * ```
 */
export function retry<T>(fn: (context: { attempt: number; signal?: AbortSignal }) => T | PromiseLike<T>, options?: RetryFnOptions): Promise<T>;

/**
 * The wait a response's headers name, in ms: `retry-after-ms` first (it wins
 * over a `Retry-After` beside it, as the OpenAI and Anthropic SDKs read
 * them), then `Retry-After` and the rate-limit headers (`RateLimit`,
 * `X-RateLimit-Reset`, …: docs/fetch.md's "Server-named waits" lists them,
 * in the order they are read):
 * the first that names a wait wins. Seconds of 1e9 or
 * more are a Unix time (GitHub's `X-RateLimit-Reset`). The fetch driver
 * waits at least this long (jitter above), up to `maxRetryAfterMs`.
 */
export function serverWait(headers: { get(name: string): string | null }, nowMs?: number): number | undefined;

/**
 * The wait a `Retry-After` value asks for, in ms (delta-seconds or any RFC 9110
 * HTTP-date); `undefined` if absent, invalid (any non-ASCII character
 * included) or a date not after `nowMs`. Parsed in JavaScript (it is a string);
 * the Rust core's parser is tested against the same vectors.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs?: number): number | undefined;

import type { Gate } from './gate/index.js';
import type { Hedge } from './hedge/index.js';
import type { Failover } from './failover/index.js';
import type { Auth } from './auth/index.js';
import type { Dedupe } from './dedupe/index.js';
import type { Quota } from './quota/index.js';
