/**
 * `RetryBudget`: retries as at most a fraction of recent traffic, for the fetch driver's `budget` option.
 *
 * Plain JavaScript: importing it loads no wasm module.
 * @module wasm-backoff/budget
 */

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
 *
 * `nowMs` (default `Date.now()`) must be finite (else a RangeError). A clock
 * that steps back by less than `ttlMs` is held where it was; one that steps
 * back further (after a jump ahead: another clock's timestamp, a mistaken
 * +1 day) starts the window afresh instead of refusing retries until real
 * time catches up.
 */
export class RetryBudget {
  /** @throws {TypeError | RangeError} naming the offending option. */
  constructor(options?: RetryBudgetOptions);
  /** Records one request (fetchWithBackoff does this once per call), or `count` of them (a finite number >= 0). */
  deposit(nowMs?: number, count?: number): void;
  /** Takes one retry if available (fetchWithBackoff does this before each retry). */
  withdraw(nowMs?: number): boolean;
  /** Retries available now. */
  available(nowMs?: number): number;
}
