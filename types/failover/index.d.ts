/** @module wasm-backoff/failover */
// `wasm-backoff/failover`: failover(), for the `endpoints` option of the
// fetch driver. Plain JavaScript: importing it loads no wasm module.

/**
 * An endpoint: an absolute http(s) origin (`https://host[:port]`, no path,
 * query or fragment), with a weight when first attempts are drawn by weight.
 */
export type Endpoint =
  | string
  | URL
  | {
      url: string | URL;
      /** Its share of first attempts (finite, > 0); giving any endpoint a weight draws first attempts by weight. @default 1 */
      weight?: number;
    };

/** Type-only: marks a {@link Failover} as made by {@link failover} (no such property at run time). */
declare const made: unique symbol;

/**
 * The `endpoints` option's value: the origins, checked, in order (frozen).
 * Only {@link failover} makes one: a hand-written object or array is a type
 * error here, as it is a `TypeError` at run time.
 */
export interface Failover {
  readonly endpoints: readonly string[];
  /** First attempts are drawn by weight (else the first usable endpoint is preferred). */
  readonly weighted: boolean;
  readonly [made]: true;
}

/**
 * Failover for the `endpoints` option of `fetchWithBackoff` / `withBackoff`:
 * attempts go to these origins (the request's own origin replaced); a retry
 * goes to the next endpoint whose circuit is closed; with a gate, each
 * endpoint's health is kept apart and a recovered preferred endpoint is
 * probed and returned to.
 * @throws {TypeError | RangeError} naming the option: not an array, empty, not absolute http(s) origins, repeated origins, weights <= 0.
 */
export function failover(endpoints: Endpoint[]): Failover;

// (only what is exported above: `made` stays private to this file)
export {};
