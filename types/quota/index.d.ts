/**
 * `quota()`: requests- and tokens-per-minute budgets per key, kept in step
 * with OpenAI's and Anthropic's rate-limit headers, for the fetch driver's
 * `limit` option: a call waits for its budget instead of meeting a 429.
 *
 * Plain JavaScript: importing it loads no wasm module.
 * @module wasm-backoff/quota
 */

/**
 * A request as `key` and `cost` see it: its URL (absolute where it can be
 * made so), method (upper-case), headers, and the body as given to fetch
 * (`init.body`: the OpenAI and Anthropic SDKs give a JSON string; a
 * `Request`'s own body is not read), parsed as JSON in `json` (undefined
 * when it is not a JSON string).
 */
export interface QuotaRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body: unknown;
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body, any shape
  readonly json: any;
}

/** Options of {@link quota}. */
export interface QuotaOptions {
  /**
   * Requests per minute per key (a finite number >= 0). Without it, each
   * key's limit is learned from the answers' `…-limit-requests` headers;
   * until one comes, its calls are not held. @default undefined (learned)
   */
  rpm?: number;
  /**
   * Tokens per minute per key (a finite number >= 0), spent by `cost`.
   * Without it, learned from the answers' `…-limit-tokens` headers.
   * @default undefined (learned)
   */
  tpm?: number;
  /**
   * The key of a call's budgets (each key has its own): e.g. the model,
   * `(r) => r.json?.model ?? ''`. Synchronous; another return than a string
   * rejects the call with a `TypeError`, and nothing is sent.
   * @default () => '' (one budget for every call)
   */
  key?: (request: QuotaRequest) => string;
  /**
   * The tokens one attempt spends (a finite number >= 0), as the API
   * counts them before it answers: e.g. the prompt's estimate plus
   * `max_tokens`. Synchronous. @default () => 0
   */
  cost?: (request: QuotaRequest) => number;
}

/** Type-only: marks a {@link Quota} as made by {@link quota} (no such property at run time). */
declare const made: unique symbol;

/** A key's budgets now (see {@link Quota.state}). */
export interface QuotaState {
  /** Requests left now (below 0: reserved ahead by calls waiting); undefined while no limit is known. */
  requests: number | undefined;
  /** Tokens left now; undefined while no limit is known. */
  tokens: number | undefined;
  /** The requests-per-minute limit in use (the option's, or the learned one). */
  rpm: number | undefined;
  /** The tokens-per-minute limit in use. */
  tpm: number | undefined;
  /** How much longer a 429's wait holds the key's calls, in ms. */
  heldMs: number;
}

/**
 * The `limit` option's value (frozen), shared by every call given it: one
 * budget per key for all of them. Only {@link quota} makes one.
 */
export interface Quota {
  readonly rpm: number | undefined;
  readonly tpm: number | undefined;
  /** Key `key`'s budgets now (undefined: no call of it yet). */
  state(key?: string): QuotaState | undefined;
  readonly [made]: true;
}

/**
 * What a call rejects with when its budget would come only after its
 * deadline (`maxElapsedMs`), or never (a limit of 0): nothing was sent.
 * onDone's reason is `'deadline'`.
 */
export class QuotaError extends Error {
  constructor(key: string, waitMs: number);
  readonly name: 'QuotaError';
  /** The key whose budget was short. */
  readonly key: string;
  /** How long the call would have waited, in ms (Infinity: never). */
  readonly retryAfterMs: number;
}

/**
 * The `limit` option of `fetchWithBackoff` / `withBackoff`: before each
 * attempt (after its backoff), the call takes one request and `cost`
 * tokens of its key's budgets, which refill continuously up to the limit
 * per minute, and waits until they are there (first come, first served). A
 * wait that would end past the call's deadline is not started: the call
 * rejects at once with a {@link QuotaError}, nothing sent.
 *
 * The budgets follow every answer's headers: OpenAI's
 * `x-ratelimit-{limit,remaining,reset}-{requests,tokens}` and Anthropic's
 * `anthropic-ratelimit-{requests,tokens}-{limit,remaining,reset}`. `limit`
 * is the budget when the options name none; `remaining` caps what is left
 * (less what this quota reserved after that request went); once at most
 * half remains, `reset` sets the refill pace when it is slower than the
 * limit per minute. A 429 that names a wait (`retry-after-ms`,
 * `Retry-After`; up to `maxRetryAfterMs`) holds the key's calls until then.
 * Whether and when to retry stays the call's own (its schedule, a gate).
 * Hedges (`hedge`) are not counted.
 * @throws {TypeError | RangeError} naming the offending option.
 */
export function quota(options?: QuotaOptions): Quota;

export {};
