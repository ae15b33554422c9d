/**
 * `staleIfError()`: the last good answer of a GET, served when a later
 * call for it fails for good, for the fetch driver's `fallback` option.
 *
 * Plain JavaScript: importing it loads no wasm module.
 * @module wasm-backoff/cache
 */
import type { FallbackInfo } from '../index.js';

/** Options of {@link staleIfError}. */
export interface StaleIfErrorOptions {
  /** How old a copy may be served, in ms (>= 0). @default 86400000 (a day) */
  maxStaleMs?: number;
  /**
   * Copies kept at most (an integer in [1, 100000]); past it, the least
   * recently stored goes (in Cloudflare Workers, whose cache cannot list its
   * keys: of those this isolate stored; each copy also expires there after
   * `maxStaleMs`). @default 100
   */
  max?: number;
  /** The longest body kept, in bytes (an integer >= 0): a longer answer is not stored. @default 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /**
   * Where the copies are kept: `'cache'` the Cache API (a `RangeError` where
   * the runtime has none), `'memory'` this realm's memory, `'auto'` the Cache
   * API where there is one (pages and workers in a secure context, Service
   * Workers, Cloudflare Workers, Deno), memory elsewhere (Node, Bun).
   * @default 'auto'
   */
  store?: 'auto' | 'cache' | 'memory';
  /** The Cache API's cache name (its entries are this function's only). @default 'wasm-backoff-stale' */
  cacheName?: string;
  /**
   * The key a GET's answer is kept under; `undefined`: not kept. Asked of
   * GET requests only. The default keeps nothing for a request that
   * carries `Authorization` or `Cookie` (one user's answer); a key that
   * names the user keeps those too.
   * @default the request's URL, unless it carries `Authorization` or `Cookie`
   */
  key?: (request: Request) => string | undefined;
}

/**
 * The `fallback` option's value: the fallback itself, with what wires it
 * (it also stores each good answer). Only {@link staleIfError} makes one.
 */
export interface StaleIfError {
  (info: FallbackInfo): Promise<Response>;
  readonly maxStaleMs: number;
  readonly max: number;
  readonly maxBodyBytes: number;
  /** Where the copies are kept. */
  readonly store: 'cache' | 'memory';
  /** Forgets every copy (e.g. when a user signs out). */
  clear(): Promise<void>;
}

/**
 * A value for the `fallback` option of `fetchWithBackoff` / `withBackoff`:
 * each 200 answer of a GET that may be stored (not `no-store`, not `Vary:
 * *`, not an event stream, at most `maxBodyBytes`) is kept (its last, per
 * key; `Set-Cookie` left out), read beside the caller's without delaying
 * it. When a later call for it fails for good (the `fallback` option's
 * rule: a rejection, but the caller's abort and a `'not-retryable'`
 * error; or a final answer of `retryOn`), the copy is served
 * if it is at most `maxStaleMs` old, with an `Age` header (its age in
 * seconds, the answer's own `Age` added); else the call ends as it would
 * have (its last answer, or its error).
 * @throws {TypeError | RangeError} naming the offending option.
 */
export function staleIfError(options?: StaleIfErrorOptions): StaleIfError;

export {};
