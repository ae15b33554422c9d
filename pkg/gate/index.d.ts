// `wasm-backoff/gate`: the per-target backoff gate (the full wasm module,
// shared with `wasm-backoff/stats` and `wasm-backoff/queue`: a page using
// several of them downloads it once).
import type { BackoffOptions } from '../index.js';
export { Backoff, BackoffOptions, Preset, Strategy, Jitter } from '../index.js';

/**
 * Options of {@link createGate}: the schedule of the backoff rounds (any
 * {@link BackoffOptions}; a gate never gives a target up, so the schedule's own
 * `maxAttempts` and `maxElapsedMs` are not used for it), the queue, and the
 * per-call defaults of {@link Gate.run}.
 */
export interface GateOptions extends BackoffOptions {
  /** Most calls held per target (integer >= 0, or `Infinity`); beyond it, `overflow` decides. @default 1000 */
  maxQueued?: number;
  /** When the queue is full: drop the oldest held call, or refuse the newest; either rejects with {@link GateOverflowError} and counts in `stats().evictions`. @default 'evict-oldest' */
  overflow?: 'evict-oldest' | 'reject-newest';
  /**
   * Most calls in flight per target (integer >= 1, or `Infinity`); more wait in the queue, in order.
   * The probe is always sent. So that hung calls cannot hold the queue forever, once nothing has been
   * sent for `probeTimeoutMs` while calls wait, the calls in flight (all that old) stop counting
   * against the limit (they still count in `inFlight`; their late failures start no round).
   * @default Infinity
   */
  concurrency?: number;
  /** A probe still unsettled after this many ms counts as failed: the next round starts and another held call probes (the hung one is left to its own timeout). Also ends the slots of hung calls (see `concurrency`). `Infinity` = wait for them. @default 30000 */
  probeTimeoutMs?: number;
  /** The target of a fetch call. @default the request URL's origin */
  key?: (input: Request | string | URL, init?: RequestInit) => unknown;
  /** {@link Gate.run}: whether a rejection means the target is failing (held and retried) or not (returned at once, the target stays healthy). @default every rejection is a failure */
  retryable?: (error: unknown) => boolean;
  /** {@link Gate.run}: default per-call limit of attempts, counting each failed round a held call waited through (integer >= 1, or `Infinity`). @default 5 */
  maxAttempts?: number;
  /** {@link Gate.run}: default per-call deadline in ms from the call: no wait for a round that ends past it. @default undefined (none) */
  maxElapsedMs?: number;
}

/** Where a target stands: `'healthy'` (calls pass), `'backing-off'` (all held until the round ends), `'open'` (the next call probes), `'probing'` (one probe out, the rest held). */
export type GatePhase = 'healthy' | 'backing-off' | 'open' | 'probing';

/**
 * A per-target backoff gate (the actor-supervisor pattern): while a target is
 * healthy, calls pass straight through. The first failure of a call sent while
 * it was healthy starts a backoff round (the other calls failing with it join
 * that round instead of starting their own); the call and every new call for
 * the target are held. When the round ends, one held call (the oldest) is sent
 * as the probe; its success resets the schedule and releases the held calls in
 * arrival order (up to `concurrency` at a time); its failure starts the next,
 * longer round. Timers exist only while calls are held.
 */
export class Gate {
  /** @throws {TypeError | RangeError} naming the offending option. */
  constructor(options?: GateOptions);
  /**
   * Runs `task` through the gate of `key` (any value; compared with `Map` semantics),
   * retrying it (held) while it rejects, within its limits. Resolves with its value;
   * rejects with its last error, {@link GateOverflowError}, {@link GateTimeoutError},
   * or the signal's reason at once on abort.
   */
  run<T>(key: unknown, task: (ctx: { signal?: AbortSignal }) => Promise<T> | T, options?: { signal?: AbortSignal; maxAttempts?: number; maxElapsedMs?: number }): Promise<T>;
  /**
   * Counters since creation — `evictions` (calls dropped by `maxQueued`), `rounds` (backoff
   * rounds started), `probes` (probes sent), `timeouts` (held calls that gave up with
   * {@link GateTimeoutError}) — and now, over all targets: calls `held`, calls `inFlight`,
   * and `targets` that are not idle.
   */
  stats(): { evictions: number; rounds: number; probes: number; timeouts: number; held: number; inFlight: number; targets: number };
  /** Where the target `key` stands now. */
  state(key: unknown): { phase: GatePhase; held: number; inFlight: number };
  /**
   * Releases every target's memory in the wasm module now. Calls held or in
   * flight are left as they are; new calls throw `TypeError`. Optional: a
   * gate that is garbage collected is freed too, later. (`[Symbol.dispose]`
   * is the same function at run time, for `using`; see `Backoff.free`.)
   */
  free(): void;
}

/** A gate for {@link Gate.run} and for the `gate` option of `fetchWithBackoff` / `withBackoff`. */
export function createGate(options?: GateOptions): Gate;

/** A held call dropped because its target's queue was full (`maxQueued`); `name` is `'GateOverflowError'`. */
export class GateOverflowError extends Error {
  readonly name: 'GateOverflowError';
  /** The target's key. */
  readonly key: unknown;
}

/** A held call that ran out of attempts or time before its target recovered; `name` is `'GateTimeoutError'`. */
export class GateTimeoutError extends Error {
  readonly name: 'GateTimeoutError';
  readonly key: unknown;
  /** `'exhausted'` (maxAttempts) or `'deadline'` (maxElapsedMs). */
  readonly reason: 'exhausted' | 'deadline';
}
