/**
 * Retry options for TanStack Query (`queryRetry`) and SWR (`swrRetry`), on the package's schedule and retry policy.
 *
 * TanStack's `retry` and `retryDelay`, SWR's `onErrorRetry`: the small
 * module's calculator (seeded jitter) and the retry policy (statuses,
 * server-named waits). No dependency on either library.
 * @module wasm-backoff/query
 */
import type { BackoffOptions } from '../index.js';
export { BackoffOptions, Preset, Strategy, Jitter } from '../index.js';

/** What `shouldRetry` is told about each failure. */
export interface QueryRetryInfo {
  /** The tries that failed so far, this one included (1 = the first try failed). */
  attempt: number;
  /** The error the query function threw (or SWR's fetcher). */
  error: unknown;
  /** The HTTP status the error carries (see {@link QueryRetryOptions}), if any. */
  status?: number;
  /** The wait the server named in that response's headers, in ms, if any. */
  retryAfterMs?: number;
}

/**
 * Options of {@link queryRetry} and {@link swrRetry}: the schedule's
 * ({@link BackoffOptions}, but `maxElapsedMs`: neither library tells when a
 * query began), and the retry policy's. Checked when the factory is called:
 * a wrong type throws `TypeError`, a value out of range `RangeError`, the
 * message starting with the option's name.
 *
 * What an error tells: its HTTP status and headers are read from, in this
 * order, `error.response` when it is an object (ky's `HTTPError`, axios's
 * `AxiosError`, ofetch's `FetchError`: `{ status, headers }`), else the
 * error itself (a thrown `Response`; the OpenAI and Anthropic SDKs'
 * `APIError`: `status` and `headers`). Headers may be a `Headers` (or any
 * object with `get(name)`, as `AxiosHeaders`) or a plain record, in any case.
 * An error with no numeric `status` (a network failure, a bug, a parse
 * error) is retried; one with a status is retried when the status is in
 * `retryOn`, or is 413, 429 or 503 with a server-named wait; the server's
 * `x-should-retry: true | false` overrules the status, as for the fetch
 * driver (the OpenAI and Anthropic APIs send it).
 */
export interface QueryRetryOptions extends Omit<BackoffOptions, 'maxElapsedMs' | 'maxAttempts'> {
  /**
   * Total tries including the first (`maxAttempts − 1` retries); an integer
   * >= 1, or `Infinity`. @default 5 (or the preset's)
   */
  maxAttempts?: number;
  /** Statuses retried, each an integer in [100, 599]. @default [408, 429, 500, 502, 503, 504, 521, 522, 529] */
  retryOn?: number[];
  /**
   * A server-named wait longer than this (ms, >= 0) is not waited for: the
   * error is final at once, as the fetch driver returns such a response.
   * @default 60000
   */
  maxRetryAfterMs?: number;
  /**
   * The base of the wait after a throttled failure (an error whose status is
   * 429, 503 or 529), in place of `baseMs`, as for the fetch driver: the same
   * schedule and retry count, that retry's step drawn on this base (a finite
   * number >= 0). Other failures keep `baseMs`; a server-named wait still
   * lifts it. @default 10 × `baseMs` (the preset's base, when it sets one)
   */
  throttleBaseMs?: number;
  /**
   * Asked (synchronously) at each failure the attempts allow: `true` retries
   * it (even a 404), `false` does not, `undefined` keeps the rule above.
   * Another return value (a promise too: it is not awaited) is a
   * `TypeError`. Nothing is thrown into TanStack Query or SWR: if the hook
   * throws or returns anything else (or reading the error's `status`,
   * `response` or `headers` throws), the retries end, the query settles
   * with its own error, and that fault goes to `console.error`, as does the
   * rejection of a promise the hook returned. @default undefined (the rule above)
   */
  shouldRetry?: (info: QueryRetryInfo) => boolean | undefined;
}

/** TanStack Query's retry options, made by {@link queryRetry}. Neither throws (see {@link QueryRetryOptions.shouldRetry}). */
export interface QueryRetry {
  /** Whether the query retries after `failureCount + 1` failures (TanStack counts from 0). */
  retry: (failureCount: number, error: unknown) => boolean;
  /** The wait before that retry, in ms (0 when `retry` says no: TanStack asks both). */
  retryDelay: (failureCount: number, error: unknown) => number;
}

/**
 * TanStack Query's `retry` and `retryDelay`, to spread into a query's options
 * or `new QueryClient({ defaultOptions: { queries: queryRetry(options) } })`.
 * Each answer is computed afresh for that failure count: nothing is kept
 * between calls, so one result serves every query.
 * @throws {TypeError | RangeError} naming the offending option.
 */
export function queryRetry(options?: QueryRetryOptions): QueryRetry;

/** SWR's retry option, made by {@link swrRetry}. */
export interface SwrRetry {
  /**
   * SWR's `onErrorRetry`: unless the policy says no, calls `revalidate(opts)`
   * after the schedule's delay for retry `opts.retryCount` (1 = the first).
   * Replaces SWR's `errorRetryCount` and `errorRetryInterval` (`maxAttempts`,
   * `baseMs` instead). Never throws (see {@link QueryRetryOptions.shouldRetry}).
   */
  onErrorRetry: (error: unknown, key: unknown, config: unknown, revalidate: (opts: any) => unknown, opts: { retryCount: number }) => void;
}

/**
 * SWR's `onErrorRetry`, in an object to spread into `useSWR`'s options or
 * `<SWRConfig value>`.
 * @throws {TypeError | RangeError} naming the offending option.
 */
export function swrRetry(options?: QueryRetryOptions): SwrRetry;
