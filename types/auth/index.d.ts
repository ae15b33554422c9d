/**
 * `auth()`: a header on every attempt, and one token refresh shared by every
 * call that meets a 401, for the fetch driver's `auth` option.
 *
 * Plain JavaScript: importing it loads no wasm module.
 * @module wasm-backoff/auth
 */

/** Options of {@link auth}. */
export interface AuthOptions {
  /**
   * The header's value, read before every attempt (and again for the
   * request sent after a refresh): `Bearer ${token}`. `undefined` or
   * `null`: no header on that attempt (no token yet: its 401 starts a
   * refresh). Anything else rejects the call with a `TypeError`; what it
   * throws rejects the call with that.
   */
  header: () => string | undefined | null | Promise<string | undefined | null>;
  /**
   * Gets a new token (stores it where `header` reads it). Called once for
   * all the calls that meet a 401 while it runs; what it resolves with is
   * not read. Its `signal` aborts at `timeoutMs`.
   */
  refresh: (info: { signal: AbortSignal }) => unknown;
  /**
   * The header's name (case-insensitive). A header of this name the
   * request carries is replaced. Names fetch will not send (`Host`,
   * `Connection`, `Sec-…`, …) and `Idempotency-Key` throw a `RangeError`.
   * @default 'authorization'
   */
  name?: string;
  /** The statuses that start (or join) a refresh: integer HTTP statuses, at least one. @default [401] */
  on?: number[];
  /**
   * How long one refresh may take, in ms (> 0): past it, every call waiting
   * on it rejects with an {@link AuthRefreshError} (its `cause` a
   * `TimeoutError`), and the next 401 starts another. @default 30000
   */
  timeoutMs?: number;
}

/** Type-only: marks an {@link Auth} as made by {@link auth} (no such property at run time). */
declare const made: unique symbol;

/**
 * The `auth` option's value (frozen). Only {@link auth} makes one: a
 * hand-written object is a type error here, as it is a `TypeError` at run time.
 */
export interface Auth {
  /** The header's name, lower-case. */
  readonly name: string;
  readonly on: readonly number[];
  readonly timeoutMs: number;
  /** Refreshes started so far (each shared by every call that waited on it). */
  readonly refreshes: number;
  readonly [made]: true;
}

/**
 * What a call waiting on a refresh rejects with when the refresh rejects or
 * passes `timeoutMs`: its `cause` is what the refresh threw (or the
 * `TimeoutError`), its message names it.
 */
export class AuthRefreshError extends Error {
  constructor(cause: unknown);
  readonly name: 'AuthRefreshError';
}

/**
 * The `auth` option of `fetchWithBackoff` / `withBackoff`: every attempt
 * carries the header `header()` gives. A 401 (a status of `on`) for a
 * request that carried it starts one `refresh()`, shared by every call that
 * meets a 401 while it runs (single flight); each such call is then sent
 * once more, with the new header, inside the same attempt: the refresh is
 * no retry (`maxAttempts`, the attempt header, `onRetry` and the budget do
 * not count it). A second 401 for the same call is returned as it is. A
 * refresh that fails rejects the calls waiting on it with an
 * {@link AuthRefreshError}. A call's own signal and deadline end its wait at
 * once, never the refresh the others wait on.
 *
 * The header stays with the call's origin: a request failover sends to
 * another origin goes without it (unless that endpoint says `credentials:
 * true` and the name is `Authorization`, `Cookie` or
 * `Proxy-Authorization`), and a 401 from there starts no refresh.
 * @throws {TypeError | RangeError} naming the offending option.
 */
export function auth(options: AuthOptions): Auth;

export {};
