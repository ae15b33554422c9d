/**
 * `failover()`: a retry goes to the next healthy origin, for the fetch driver's `endpoints` option.
 *
 * Plain JavaScript: importing it loads no wasm module.
 * @module wasm-backoff/failover
 */

/**
 * An endpoint: an absolute http(s) origin (`https://host[:port]`, no path,
 * query or fragment), with a weight when first attempts are drawn by weight,
 * and whether it takes the credentials of requests for the list's other origins.
 */
export type Endpoint =
  | string
  | URL
  | {
      /** The endpoint: an absolute http(s) origin, as a string or a URL. */
      url: string | URL;
      /** Its share of first attempts (finite, > 0; drawn by each weight over the largest, so huge weights work too); giving any endpoint a weight draws first attempts by weight. @default 1 */
      weight?: number;
      /**
       * `true`: a request for another listed origin sent here keeps its
       * `Authorization`, `Cookie` and `Proxy-Authorization` headers. By
       * default they are dropped whenever a request goes to another origin
       * than its own, as fetch drops them on a cross-origin redirect.
       * @default false
       */
      credentials?: boolean;
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
 * the attempts of a request for one of these origins go to them (the
 * request's own origin replaced; a request for any other origin is sent
 * there, untouched); a retry goes to the next endpoint whose circuit is
 * closed; with a gate, each endpoint's health is kept apart and a recovered
 * preferred endpoint is probed and returned to. Credential headers reach
 * only the request's own origin, unless an endpoint says `credentials: true`.
 * @throws {TypeError | RangeError} naming the option (`endpoints[i].weight`, `endpoints[i].credentials`): not an array, empty, not absolute http(s) origins, repeated origins, a weight that is not a finite number > 0 (`null` included), a `credentials` that is not a boolean.
 */
export function failover(endpoints: Endpoint[]): Failover;

// (only what is exported above: `made` stays private to this file)
export {};
