/**
 * The test kit: a virtual clock the package's timers follow, a scripted `fetch`, and faults injected around any fetch.
 *
 * Plain JavaScript: importing it loads no wasm module, and no other entry contains any of it.
 * @module wasm-backoff/testing
 */

/** Options of {@link virtualClock}. */
export interface VirtualClockOptions {
  /**
   * What `Date.now()` reads when the clock is installed, in epoch ms (a
   * finite number). 0 makes {@link VirtualClock.now} read as the ms since
   * the install; pass a date (`Date.parse('2025-01-01')`) when the code
   * under test compares times with real dates (a token's expiry, an HTTP
   * date in `Retry-After`).
   * @default 0
   */
  now?: number;
  /**
   * Whether `performance.now()` follows the clock too (from its real value
   * at the install). `false` leaves it real, to measure in the test how
   * little real time passed.
   * @default true
   */
  performance?: boolean;
}

/** Options of {@link VirtualClock.runUntilIdle}. */
export interface RunUntilIdleOptions {
  /**
   * The most virtual time to advance, in ms (>= 0): a timer still pending
   * past it (one that re-arms itself, an interval or a poll) fails the run.
   * @default 600000
   */
  maxMs?: number;
}

/** Options of {@link VirtualClock.run}. */
export interface RunOptions extends RunUntilIdleOptions {
  /**
   * Real ms to wait, when no timer is pending and the promise has not
   * settled, for work outside the clock (real I/O: a real fetch inside
   * `chaos`) to settle it or to arm a timer, before the run fails as stuck
   * (a number in [0, 2^31)). It is counted in real 10 ms timeouts, each
   * a turn of the event loop, so a process the machine pauses (a busy CI)
   * does not run out of grace at once. Virtual time never waits for real I/O
   * otherwise: a timer due (a `timeoutMs`) fires as soon as nothing is due
   * before it.
   * @default 1000
   */
  graceMs?: number;
}

/**
 * A virtual clock, installed: `setTimeout`, `clearTimeout`, `setInterval`,
 * `clearInterval`, `Date` (`Date.now()`, `new Date()` and `Date()`) and
 * `performance.now()` are its own until {@link VirtualClock.uninstall}.
 *
 * Time moves only in {@link VirtualClock.tick}, {@link VirtualClock.run} and
 * {@link VirtualClock.runUntilIdle} (one at a time: awaited), which fire
 * each due timer at its own time, in order, and let promise reactions run
 * between two timers (a few real macrotasks; no real waiting), as an event
 * loop does. Timers are clamped and ordered as browsers do: a delay that is
 * negative or NaN is 0, one past 2^31 − 1 wraps (ToInt32), one nested more
 * than 5 timers deep is at least 4 ms; timers due at the same time fire in
 * the order they were armed. A fractional delay is kept (browsers truncate
 * it, Node rounds it up), so waits add up exactly; `Date.now()` is the
 * virtual time rounded down. In Node and Bun timers are objects (`ref`,
 * `unref`, `hasRef`, `refresh`, a number as primitive), elsewhere numbers.
 * More than 10 000 timers firing at one virtual time (a timer that re-arms
 * at the same time, from outside its own task) reject the advance with an
 * error saying so, rather than hang it. `setImmediate` stays real: a chain
 * of more than a few of them between two timers may see the clock move on.
 *
 * Every timer the package starts (waits, deadlines, `timeoutMs`, a gate's
 * rounds, idle timeouts) reads these globals when it starts, so it follows
 * the clock. At run time the object also has `[Symbol.dispose]` (the same
 * function as `uninstall`) where the runtime has `Symbol.dispose`, so
 * `using clock = virtualClock()` uninstalls at the end of the block.
 */
export interface VirtualClock {
  /**
   * The virtual time, in epoch ms (it may carry a fraction; `Date.now()`
   * reads it rounded down, exactly). Near today's epoch a double holds a ms
   * to 2.4e-4 only: to compare times with fractional waits, use {@link elapsed}.
   */
  now(): number;
  /** The virtual ms since the clock was installed, exact (the sum of the waits it moved through). */
  elapsed(): number;
  /**
   * Advances the clock by `ms` (a finite number >= 0), firing each timer
   * due on the way at its own time; resolves with the new {@link now}.
   * @throws {TypeError | RangeError} (a rejection) for a bad `ms`; the error of a timer's callback that throws.
   */
  tick(ms: number): Promise<number>;
  /** The same function as {@link tick} (the name @sinonjs/fake-timers users know). */
  tickAsync(ms: number): Promise<number>;
  /**
   * Fires timers, in order, until none is pending (those they arm too);
   * resolves with the new {@link now}. Rejects, naming the pending timers,
   * when one is still pending after `maxMs` of virtual time.
   */
  runUntilIdle(options?: RunUntilIdleOptions): Promise<number>;
  /**
   * Advances the clock timer by timer until `promise` settles, then
   * settles as it does. Rejects with an error saying `stuck` when it has
   * not settled and no timer is pending (after `graceMs` of real time),
   * and when `maxMs` of virtual time pass first.
   */
  run<T>(promise: PromiseLike<T> | T, options?: RunOptions): Promise<Awaited<T>>;
  /** Whether `promise` has settled, once pending reactions ran (no virtual time passes). */
  settled(promise: PromiseLike<unknown>): Promise<boolean>;
  /** How many timers are pending (armed and not yet fired or cleared; an interval counts until cleared). */
  pending(): number;
  /** Every delay asked of `setTimeout` and `setInterval` since the install, in order, as asked (before clamping). */
  readonly asked: readonly number[];
  /**
   * Puts the real globals back, and drops the timers still pending (they
   * never fire). Calling it again does nothing; the other methods then
   * reject.
   */
  uninstall(): void;
}

/**
 * Installs a virtual clock at once (one at a time: a second throws `Error`
 * until the first is uninstalled). Runtime-agnostic: Node, Deno, Bun,
 * browsers, Web Workers, workerd.
 * @throws {TypeError | RangeError} naming the offending option.
 * @example
 * const clock = virtualClock();
 * try {
 *   const res = await clock.run(api('https://api.example.com/items'));
 * } finally {
 *   clock.uninstall();
 * }
 */
export function virtualClock(options?: VirtualClockOptions): VirtualClock;

/** A scripted answer given as an object (every field optional). */
export interface OutcomeInit {
  /** The response's status (an integer in [200, 599]). @default 200 */
  status?: number;
  /** The response's status text. @default '' */
  statusText?: string;
  /** The response's headers (`Retry-After`, `RateLimit-Reset`, …). @default undefined (none) */
  headers?: Headers | Record<string, string> | [string, string][];
  /**
   * The response's body: a string, bytes, a `Blob`, a `ReadableStream`, or
   * any other object, sent as JSON (with `content-type: application/json`
   * unless `headers` name one).
   * @default null
   */
  body?: string | ArrayBuffer | ArrayBufferView | Blob | ReadableStream | URLSearchParams | object | null;
  /** A body of `size` bytes in place of `body` (byte i = i · 7 mod 251, as the project's scripted server sends); an integer >= 0. @default undefined (`body`) */
  size?: number;
  /**
   * Virtual ms before the answer (or the reset) comes, as a slow server
   * (finite, >= 0). The request's signal aborting meanwhile rejects the
   * call with its reason.
   * @default 0
   */
  delayMs?: number;
  /**
   * Rejects the call as a network failure (after `delayMs`): a `TypeError`
   * `'fetch failed'` with `cause.code` `'ECONNRESET'`, as Node words it, which
   * the package retries as any network failure.
   * @default false
   */
  reset?: boolean;
  /** Never answers (after `delayMs`); only the request's signal ends the call, with its reason. @default false */
  hang?: boolean;
  /**
   * The body gives its first `stallAfter` bytes, then nothing more: a read
   * waits until the request's signal aborts (then it errors with its
   * reason) or the body is cancelled. An integer >= 0.
   * @default undefined (the whole body)
   */
  stallAfter?: number;
  /**
   * The body gives its first `cutAfter` bytes, then errors as a connection
   * cut mid-body: a `TypeError` `'terminated'`, as Node words it. An
   * integer >= 0; not with `stallAfter`.
   * @default undefined (the whole body)
   */
  cutAfter?: number;
}

/**
 * One scripted answer: a status (`503`), `'reset'` (`{ reset: true }`), an
 * {@link OutcomeInit}, or a `Response`, returned as is (a clone of it when
 * it is given again: the last outcome of a list repeats).
 */
export type Outcome = number | 'reset' | OutcomeInit | Response;

/** A call the scripted fetch received, as {@link ScriptedFetch.calls} records it. */
export interface ScriptedCall {
  /** The request's method (upper case, as `Request` normalizes it). */
  method: string;
  /** The request's URL, absolute. */
  url: string;
  /** The request's headers, names in lower case (as `Headers` iterates them). */
  headers: Record<string, string>;
  /** The request's body as text; `null` without one. */
  body: string | null;
  /** `Date.now()` when the call was made: virtual time while a clock is installed. */
  at: number;
}

/**
 * A script for one URL: one outcome (every call), a list (one per call,
 * the last repeating), or a function of the call and its number `n` (from 0
 * for the first call to this script) returning an outcome or a promise of one.
 */
export type Script = Outcome | readonly Outcome[] | ((call: ScriptedCall, n: number) => Outcome | PromiseLike<Outcome>);

/**
 * A script per URL path (`'/items'`; the query string is not matched), with
 * `'*'` for every other path. A path with no script is answered 404.
 */
export interface ScriptsByPath {
  readonly [path: `/${string}`]: Script;
  /** The script of every path without its own. */
  readonly '*'?: Script;
}

/** The fetch function {@link scriptedFetch} returns. */
export interface ScriptedFetch {
  /**
   * Answers as its script says. Rejects as `fetch` does: a request it
   * cannot build with `fetch`'s own `TypeError` (recorded nowhere), an
   * aborted signal with its reason.
   */
  (input: Request | string | URL, init?: RequestInit): Promise<Response>;
  /** Every call so far, in order. */
  readonly calls: readonly ScriptedCall[];
  /** How many calls so far. */
  readonly count: number;
}

/**
 * A `fetch` answered by a script, not a network: give it to `withBackoff`
 * (or to the code under test) in place of `fetch`. Its delays and hangs run
 * on the global timers, so they follow a {@link virtualClock}.
 * @throws {TypeError | RangeError} naming the outcome at fault (`script[1].status …`) for a list's bad outcome; a function's is a rejection of that call.
 * @example
 * const fetch = scriptedFetch([{ status: 503, headers: { 'retry-after': '2' } }, 503, { body: { id: 7 } }]);
 * const byPath = scriptedFetch({ '/items': [503, 200], '/health': 200 });
 */
export function scriptedFetch(script: Script | ScriptsByPath): ScriptedFetch;

/** Options of {@link chaos}. */
export interface ChaosOptions {
  /** The probability that a call is answered by a fault (a number in [0, 1]). */
  rate: number;
  /** The status of a fault (an integer in [200, 599]). @default 503 */
  status?: number;
  /** Statuses to choose a fault's from, uniformly (in place of `status`; a non-empty list). @default [status] */
  statuses?: readonly number[];
  /**
   * Which faults are resets (network failures, as an outcome `'reset'`) rather
   * than statuses: `true` all, `false` none, or the share of them (a number
   * in [0, 1]).
   * @default false
   */
  reset?: boolean | number;
  /**
   * Latency added before every call (faulted or not), in ms: a number, or a
   * range `[min, max]` drawn uniformly (finite, 0 <= min <= max). On the
   * global timers: virtual while a clock is installed.
   * @default 0
   */
  latencyMs?: number | readonly [number, number];
  /** Headers of a fault's response (a `Retry-After`, say). @default undefined (none) */
  headers?: Headers | Record<string, string> | [string, string][];
  /**
   * The seed of the PRNG (a safe integer): the same seed faults the same
   * calls, in every runtime. Which calls fault depends on `seed` and `rate`
   * only (one draw per call, as the project's scripted server's `failRate`).
   * @default 1
   */
  seed?: number;
}

/** What {@link chaos} injected into one call. */
export interface Injected {
  /** The fault's status, or `'reset'`; absent when the call went through. */
  fault?: number | 'reset';
  /** The latency added, in ms. */
  latencyMs: number;
}

/** The fetch function {@link chaos} returns. */
export interface ChaosFetch {
  (input: Request | string | URL, init?: RequestInit): Promise<Response>;
  /** What was injected, one entry per call, in order. */
  readonly injected: readonly Injected[];
}

/**
 * `fetchFn` with faults injected, as Polly's Simmy chaos strategies: with
 * probability `rate` a call is answered by a fault (a response of a fault
 * status, or a reset) without reaching `fetchFn`; the others go through.
 * An aborted signal rejects with its reason, during the latency too.
 * @throws {TypeError | RangeError} naming the offending option (`fetch`, `rate`, `status`, `statuses`, `reset`, `latencyMs`, `headers`, `seed`).
 * @example
 * const flaky = chaos(fetch, { rate: 0.2, statuses: [500, 503], reset: 0.5, latencyMs: [0, 100], seed: 7 });
 */
export function chaos(fetchFn: (input: Request | string | URL, init?: RequestInit) => Promise<Response>, options: ChaosOptions): ChaosFetch;
