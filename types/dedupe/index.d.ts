/**
 * `dedupe()`: concurrent identical GET and HEAD calls share one call, for
 * the fetch driver's `dedupe` option.
 *
 * Plain JavaScript: importing it loads no wasm module.
 * @module wasm-backoff/dedupe
 */

/** Options of {@link dedupe}. */
export interface DedupeOptions {
  /**
   * The key of a GET or HEAD request: calls in flight with the same key
   * share one call; `undefined`: this call is not shared. Asked only of GET
   * and HEAD requests (other methods are never shared). Anything else it
   * returns rejects the call with a `TypeError`; what it throws, with that.
   * @default the method, the URL, every header, and the request's `credentials`, `cache`, `redirect` and `mode`
   */
  key?: (request: Request) => string | undefined;
}

/** Type-only: marks a {@link Dedupe} as made by {@link dedupe} (no such property at run time). */
declare const made: unique symbol;

/**
 * The `dedupe` option's value (frozen), shared by every call given it: its
 * shared calls live as long as it does. Only {@link dedupe} makes one.
 */
export interface Dedupe {
  /** Shared calls in flight now. */
  readonly size: number;
  readonly [made]: true;
}

/**
 * The `dedupe` option of `fetchWithBackoff` / `withBackoff`: a GET or HEAD
 * call made while another with the same key is in flight shares that call,
 * its retries included, and gets its own `Response` (a copy: each caller
 * reads, or cancels, its own body), whose body follows its own signal, as
 * with fetch. A caller's abort rejects that caller only; the shared call is
 * aborted when every caller has gone. The shared call runs with the options
 * of the call that started it (its `onDone`, its deadline). Once it has
 * settled, a call sends again. Other methods are never shared.
 * @throws {TypeError} when `key` is not a function.
 */
export function dedupe(options?: DedupeOptions): Dedupe;

export {};
