/**
 * `hedge()`: a copy of a slow request races the first, for the fetch driver's `hedge` option.
 *
 * Plain JavaScript: importing it loads no wasm module.
 * @module wasm-backoff/hedge
 */

/** Options of {@link hedge}. */
export interface HedgeOptions {
  /**
   * How long the attempts out may go unanswered before the next hedge is
   * sent, in ms (finite, >= 0; 0 sends every hedge at once). Set it near
   * the latency percentile to cut (the 95th: about 5 % of calls then send
   * one more request). Past 2^31 - 1 ms (a timer's longest, about 24.8
   * days) it is that: in effect, no hedge.
   */
  delayMs: number;
  /** Hedges per attempt, beyond the attempt itself (an integer in [1, 10]). @default 1 */
  maxHedges?: number;
}

/** Type-only: marks a {@link Hedge} as made by {@link hedge} (no such property at run time). */
declare const made: unique symbol;

/**
 * The `hedge` option's value: its settings, checked (frozen). Only
 * {@link hedge} makes one: a hand-written object is a type error here, as
 * it is a `TypeError` at run time.
 */
export interface Hedge {
  readonly delayMs: number;
  readonly maxHedges: number;
  readonly [made]: true;
}

/**
 * Hedging for the `hedge` option of `fetchWithBackoff` / `withBackoff`:
 * when the attempt has not answered within `delayMs`, the same request goes
 * out again (up to `maxHedges` more); the first answer that ends the call
 * wins, the others are aborted and their bodies cancelled. Only a request
 * that may be sent twice is hedged: an idempotent one whose body can be sent
 * again (not a `ReadableStream`, nor a body `wasm-backoff/stream` feeds).
 * @throws {TypeError | RangeError} naming the offending option (`delayMs` < 0 or not finite, `maxHedges` outside [1, 10]).
 */
export function hedge(options: HedgeOptions): Hedge;

// (only what is exported above: `made` stays private to this file)
export {};
