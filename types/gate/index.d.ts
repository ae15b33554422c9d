/**
 * The per-target gate: backoff, circuit breaking and adaptive rate limiting per target.
 *
 * Its own wasm module: the gate, its limiter and the calculator.
 * @module wasm-backoff/gate
 */
import type { BackoffOptions } from '../index.js';
export { Backoff, BackoffOptions, Preset, Strategy, Jitter } from '../index.js';

/**
 * Options of {@link createGate}: the schedule of the backoff rounds (any
 * {@link BackoffOptions}; a gate never gives a target up, so the schedule's own
 * `maxAttempts` and `maxElapsedMs` are not used for it), the queue, and the
 * per-call defaults of {@link Gate.run}.
 */
export interface GateOptions extends BackoffOptions {
  /** Most calls held per target while its circuit is open (integer >= 0, or `Infinity`); beyond it, `overflow` decides. A healthy target's calls waiting only for a `concurrency` slot are never refused. @default 1000 */
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
  /** A probe still unsettled after this many ms counts as failed: the next round starts and another held call probes (the hung one is left to its own timeout). So does a probe its own deadline (`maxElapsedMs`) cuts in flight. Also ends the slots of hung calls (see `concurrency`). `Infinity` = wait for them. @default 30000 */
  probeTimeoutMs?: number;
  /** The target of a fetch call. @default the request URL's origin */
  key?: (input: Request | string | URL, init?: RequestInit) => unknown;
  /** {@link Gate.run}: whether a rejection means the target is failing (held and retried) or not (returned at once, the target stays healthy). A request `fetch` refused to send (Node's `TypeError` whose cause's code is `UND_ERR_NOT_SUPPORTED` or `UND_ERR_INVALID_ARG`: an `Expect` header, say) is never a failure, whatever this says: it is returned at once. @default every rejection is a failure */
  retryable?: (error: unknown) => boolean;
  /** {@link Gate.run}: default per-call limit of attempts, counting each failed round a held call waited through (integer >= 1, or `Infinity`). @default 5 */
  maxAttempts?: number;
  /** {@link Gate.run}: default per-call deadline in ms from the call: no wait for a round that ends past it. @default undefined (none) */
  maxElapsedMs?: number;
  /**
   * A healthy target trips (its circuit opens) after this many failures in a row (integer >= 1, or
   * `Infinity` = never by count). Below it, a failed call retries on its own schedule and the target
   * stays closed. Not together with `failureRatio`. @default 5
   */
  consecutive?: number;
  /** Trip instead when at least this share (in (0, 1]) of the calls that ended in the last `windowMs` failed, once `minCalls` ended there. @default undefined (use `consecutive`) */
  failureRatio?: number;
  /** The sliding window of `failureRatio`, in ms (kept in 8 buckets). @default 30000 */
  windowMs?: number;
  /** Fewer calls than this in the window never trip `failureRatio` (integer >= 1). @default 20 */
  minCalls?: number;
  /** While the circuit is open: `'hold'` the calls until a probe succeeds, or `'fail-fast'`: reject them at once with {@link BrokenCircuitError} (one call still probes when the round is over). @default 'hold' */
  mode?: 'hold' | 'fail-fast';
  /**
   * `'adaptive'`: also limit the rate of every attempt to the target, first attempts included, with a
   * token bucket that follows what the server takes, backs off when the server throttles (`throttleOn`,
   * or 503 naming a wait; once per round trip) and recovers as CUBIC does (the AWS SDKs' adaptive mode,
   * see {@link AdaptiveLimiter}). A server-named wait delays the retry of the call that got it only. A
   * call whose token wait plus a round trip would end past its deadline is refused at once, unsent
   * (`GateTimeoutError`, reason 'deadline'); a wait never runs past the call's signal. @default 'none'
   */
  limit?: 'none' | 'adaptive';
  /** Statuses that mean "slow down" to the adaptive limiter (503 with a named wait always does). @default [429, 503, 529] (the statuses the retry policy calls throttling, `THROTTLE_STATUSES` of the core) */
  throttleOn?: number[];
  /** Told every change of a target's circuit state (an observer: what it throws goes to the console). @default undefined (none) */
  onStateChange?: (change: CircuitChange) => void;
}

/** Options of one {@link Gate.run} call: its signal, and its limits over the gate's defaults. */
export interface GateRunOptions {
  /** Aborts the call: it rejects at once with the signal's reason, held, waiting or running (the task is given the same signal). @default undefined */
  signal?: AbortSignal;
  /** The call's limit of attempts, counting each failed round it waited through held (integer >= 1, or `Infinity`). @default the gate's `maxAttempts` */
  maxAttempts?: number;
  /** The call's deadline in ms from its start: no wait for a round that ends past it (ms, >= 0). @default the gate's `maxElapsedMs` */
  maxElapsedMs?: number;
}

/** A circuit's state: `closed` (calls pass), `open` (backing off), `half-open` (the next call probes, or the probe is out), `isolated` (by hand). */
export type CircuitState = 'closed' | 'open' | 'half-open' | 'isolated';

/** Where a target stands ({@link Gate.state}): its circuit's state, in the one vocabulary of `state()`, `onStateChange` and `toJSON()`. */
export interface GateTargetState {
  /** `closed` (calls pass), `open` (backing off: every call held), `half-open` (the round is over: the next call probes, or the probe is out), `isolated` (by hand). */
  state: CircuitState;
  /** Half-open with the probe out (the other calls wait for its outcome). */
  probing: boolean;
  /** Calls held now. */
  held: number;
  /** Calls in flight now. */
  inFlight: number;
  /**
   * How long until the target's round ends and its next probe may go, in whole ms (rounded up, as
   * {@link BrokenCircuitError.retryAfterMs}): counting down while `open`, 0 once the round is over
   * (`closed`, `half-open`), `Infinity` while `isolated`. A {@link SharedGate}'s is its local
   * circuit's, which follows the round its object named.
   */
  retryAfterMs: number;
}

/** What {@link GateOptions.onStateChange} is told. */
export interface CircuitChange {
  key: unknown;
  from: CircuitState;
  to: CircuitState;
  /** `'tripped'` (threshold reached), `'round-over'`, `'probe-failed'`, `'probe-timeout'`, `'probe-succeeded'`, `'isolated'`, `'released'` or `'restored'`. */
  reason: 'tripped' | 'round-over' | 'probe-failed' | 'probe-timeout' | 'probe-succeeded' | 'isolated' | 'released' | 'restored';
}

/** One target in a {@link GateState}. Times are epoch ms. */
export interface SavedTarget {
  state: 'closed' | 'open' | 'isolated';
  /** When the round ends (an open target probes from then). */
  untilMs: number;
  /** Rounds since the target last closed (the schedule goes on from there). */
  round: number;
  lastDelayMs: number;
  chainMs: number;
  /** Failures in a row (the `consecutive` count). */
  failures: number;
  /** The `failureRatio` window: its newest bucket's start, then calls and failures per bucket, oldest first. */
  windowAt: number | null;
  calls: number[];
  fails: number[];
}

/** What {@link Gate.toJSON} returns and {@link Gate.restore} takes: plain JSON, for KV, a Durable Object or a cookie. */
export interface GateState {
  version: 1;
  savedAt: number;
  targets: Record<string, SavedTarget>;
}


/**
 * A per-target backoff gate and circuit breaker (the actor-supervisor pattern):
 * while a target is healthy (closed), calls pass straight through, and a failed
 * call retries on its own schedule. Once failures reach the threshold
 * (`consecutive`, or `failureRatio`), the circuit opens: a backoff round starts
 * (the other calls failing with it join that round instead of starting their
 * own); the call and every new call for the target are held (or, with
 * `mode: 'fail-fast'`, rejected at once). When the round ends, one held call (the oldest) is sent
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
  run<T>(key: unknown, task: (ctx: { signal?: AbortSignal }) => Promise<T> | T, options?: GateRunOptions): Promise<T>;
  /**
   * Counters since creation — `evictions` (calls dropped by `maxQueued`), `rounds` (backoff
   * rounds started), `probes` (probes sent), `timeouts` (held calls that gave up with
   * {@link GateTimeoutError}) — and now, over all targets: calls `held`, calls `inFlight`,
   * and `targets` that are not idle.
   */
  stats(): { evictions: number; rounds: number; probes: number; timeouts: number; held: number; inFlight: number; targets: number };
  /** Where the target `key` stands now. */
  state(key: unknown): GateTargetState;
  /**
   * Counts outcomes of calls to `key` that were sent elsewhere — `ok` successes, then `failed`
   * failures — against the threshold while the target is closed, as that many calls through this
   * gate would count (a fleet's {@link GateObject} records its isolates' reports so). Negative or
   * non-numeric counts count as 0.
   */
  record(key: unknown, ok: number, failed: number): void;
  /**
   * Paces `key`: calls to it that start in the next `ms` wait until then before their first attempt
   * (their deadlines and signals still apply). The fetch driver calls it when a success through this
   * gate says no request remains (`RateLimit-Remaining: 0` with a reset; its option `pace`). The
   * circuit and the counters are unchanged. Not shared across a fleet.
   */
  pace(key: unknown, ms: number): void;
  /** Isolates `key` by hand: nothing is sent to it until {@link Gate.release}; calls are held, or rejected with {@link BrokenCircuitError} in fail-fast mode. */
  isolate(key: unknown): void;
  /** Closes the circuit of `key` by hand (ends an isolation or a backoff); held calls go out in order. */
  release(key: unknown): void;
  /** The state worth carrying to another isolate or invocation (targets with string keys that are not closed and clean). `JSON.stringify(gate)` calls it. */
  toJSON(): GateState;
  /**
   * Takes up a state from {@link Gate.toJSON}: each target resumes where it was (a round still
   * running ends when it would have, but at most `maxDelayMs` or one minute, whichever is longer,
   * after it was saved; failure counts go on). The wrong shape throws `TypeError` and
   * changes nothing; a target out of range, or a state saved more than 1 s in the future, throws
   * `RangeError` and that target starts closed.
   */
  restore(state: GateState): void;
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

/** A call refused because its target's circuit is open (`mode: 'fail-fast'`) or isolated; `name` is `'BrokenCircuitError'`. */
export class BrokenCircuitError extends Error {
  /** Made by the gate; exported for `instanceof`. */
  constructor(key: unknown, retryAfterMs: number, isolated: boolean);
  readonly name: 'BrokenCircuitError';
  readonly key: unknown;
  /** Time until the next probe may go, in whole ms (rounded up: a call made that long after is not refused again): 0 when a probe is due or out, `Infinity` when isolated. */
  readonly retryAfterMs: number;
  readonly isolated: boolean;
}

/** Options of {@link AdaptiveLimiter.acquire}. */
export interface AcquireOptions {
  /** Aborts the wait: the call rejects with its reason and the token is given back. @default undefined */
  signal?: AbortSignal;
  /** The longest wait accepted, ms (a number >= 0). @default Infinity */
  maxWaitMs?: number;
}

/**
 * The adaptive limiter alone (what `limit: 'adaptive'` gives each target of a gate): the AWS SDKs'
 * CUBIC token bucket, cut at most once per round trip (a throttle of a request whose token was taken
 * before the last cut cuts nothing more), cut from what the server took lately (its successes),
 * never above 1.25× those successes nor twice what callers ask for (calls that gave up count), with
 * reservations paced evenly (callers arriving together wait one token time apart instead of racing;
 * one token saved up at most). A server-named
 * wait is stored nowhere: it delays the retry of the request that got it, not other requests. Off
 * until the first throttling answer. Share one among concurrent callers: `await acquire()`, send,
 * `record()` the answer (answers are paired with acquires in order).
 */
export class AdaptiveLimiter {
  constructor();
  /**
   * Resolves when one more request may be sent: after (tokens reserved ahead + 1) / rate at most,
   * e.g. 20 callers waiting at the floor rate of 0.5 req/s wait up to 40 s; bound it with `maxWaitMs`.
   * Rejects with the signal's reason on abort (at once if already aborted), or with a `RangeError`
   * at once if the wait would exceed `maxWaitMs`; either way the token is given back and the
   * limiter keeps working. Bad options: `TypeError`/`RangeError` naming them.
   */
  acquire(options?: AcquireOptions): Promise<void>;
  /**
   * The answer to a request sent (the oldest acquired and not yet answered): `throttled` (e.g. a 429;
   * a boolean, else `TypeError`). `retryAfterMs`, the wait the server named (a number >= 0,
   * `Infinity` included, else `RangeError`/`TypeError`), is accepted and stored nowhere: wait it
   * before retrying that request yourself. Returns the rate now (requests per second; `Infinity` while off).
   */
  record(throttled: boolean, retryAfterMs?: number): number;
  /** The current rate in requests per second (`Infinity` while off). */
  readonly rate: number;
  /** Releases its wasm memory now (optional: garbage collection does it too). */
  free(): void;
}

/** A stand-alone {@link AdaptiveLimiter}. */
export function createLimiter(): AdaptiveLimiter;

/** A held call dropped because its target's queue was full (`maxQueued`); `name` is `'GateOverflowError'`. */
export class GateOverflowError extends Error {
  /** Made by the gate; exported for `instanceof`. */
  constructor(key: unknown);
  readonly name: 'GateOverflowError';
  /** The target's key. */
  readonly key: unknown;
}

/** A held call that ran out of attempts or time before its target recovered; `name` is `'GateTimeoutError'`. */
export class GateTimeoutError extends Error {
  /** Made by the gate; exported for `instanceof`. */
  constructor(key: unknown, reason: 'exhausted' | 'deadline');
  readonly name: 'GateTimeoutError';
  readonly key: unknown;
  /** `'exhausted'` (maxAttempts) or `'deadline'` (maxElapsedMs). */
  readonly reason: 'exhausted' | 'deadline';
}

/**
 * Options of {@link sharedGate}: every {@link GateOptions} option, plus `name` and `pollMs`. The
 * threshold (`consecutive`, `failureRatio`, `windowMs`, `minCalls`), the rounds' schedule, `mode` and
 * `probeTimeoutMs` are the shared circuit's: sent to the target's {@link GateObject}, whose gate is
 * made from the first request it gets (keep them the same in every Worker). The queue
 * (`maxQueued`, `overflow`), `concurrency`, the per-call limits, `retryable`, `key`, `onStateChange`
 * and `throttleOn` stay with each isolate. `limit: 'adaptive'` makes the adaptive limiter the
 * fleet's: one per target in its object, each isolate sending at its share of the fleet's rate
 * (see {@link SharedGate.share}). `consecutive: Infinity` (no `failureRatio`): no circuit, and no
 * failure is reported.
 */
export interface SharedGateOptions extends GateOptions {
  /** The {@link GateObject} of a target key: its name in the namespace (a non-empty string). @default the key itself (one object per target) */
  name?: (key: string) => string;
  /**
   * Longest wait of one request to the object for a round's outcome (a long poll), in ms (in [1, 60000]);
   * then the isolate asks again, within its calls' limits. Unanswered `pollMs` + 1 s after it was sent
   * (other requests: 1 s), a request is given up and the isolate goes on with its local gate. No wait
   * on the object runs past a call's `maxElapsedMs` or its signal. @default 10000
   */
  pollMs?: number;
  /** The target of a fetch call; must be a string (it names the object). @default the request URL's origin */
  key?: (input: Request | string | URL, init?: RequestInit) => string;
}

/**
 * A {@link Gate} whose circuits are kept, one per target key, in {@link GateObject}s, so a fleet of
 * isolates sees one failure round and sends one probe per round in total. Healthy calls go straight
 * out (no round trip); the failures of one macrotask are reported in one round trip, and the object
 * answers its state; while the shared circuit is open, the isolate holds its calls until the round
 * the object named ends, then its probe asks the object, which lets exactly one request fleet-wide
 * probe and answers the others when the probe has succeeded (a long poll). Keys must be strings.
 * `isolate`, `release`, `state`, `stats`, `toJSON` and `restore` are the local gate's.
 * In the workerd build of `wasm-backoff/gate` only.
 */
export class SharedGate extends Gate {
  /** @throws {TypeError | RangeError} naming the offending option, or when `namespace` is not a Durable Object namespace. */
  constructor(namespace: DurableObjectNamespaceLike, options?: SharedGateOptions);
  /** Round trips to the objects so far, by method: `report` (failures), `admit` (a local probe asking to go), `probed` (the fleet's probe's outcome), `lease` (the shared limiter: a throttle, or a share renewed). */
  readonly rpcs: { report: number; admit: number; probed: number; lease: number };
  /**
   * With `limit: 'adaptive'`: this isolate's share of the fleet's rate for `key`. Nothing is shared
   * or asked until an isolate is throttled (429, or a 503 naming a wait); its report makes the
   * object's limiter (the same adaptive limiter as `createLimiter`'s, fed the fleet's send rate) cut
   * the fleet's rate, once per lease period however many isolates were throttled. Each isolate then
   * sends through a token bucket of its share (max-min fair over what the isolates want), renewed
   * once a second while its calls flow. A server-named wait delays the retry of the call that got it only.
   * `rate` is this isolate's share (req/s; `Infinity` while not throttled), `fleet` the fleet's
   * rate, `alone` true while the object cannot be reached (this isolate's own limiter decides, as
   * a local gate's would). `undefined` without `limit: 'adaptive'`.
   */
  share(key: string): { rate: number; fleet: number; alone: boolean } | undefined;
  /** The long poll's limit (`pollMs`). */
  readonly pollMs: number;
  /**
   * Resolves when every report of this isolate has reached its object, or has been given up
   * (unanswered after 1 s: in workerd, a report whose request ended first is never answered). In
   * every request whose call may have failed or been the fleet's probe, on every path (a `finally`):
   * `ctx.waitUntil(gate.flush())` (`run` waits for it itself, within the call's `maxElapsedMs` and
   * signal), so the reports are not dropped with the request.
   */
  flush(): Promise<void>;
}

/** What {@link sharedGate} needs of a Durable Object namespace binding (`env.<BINDING>`). */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: any): any;
}

/**
 * A {@link SharedGate} for `gate.run(key, task)` and the `gate` option of `fetchWithBackoff` /
 * `withBackoff`, its circuits in the {@link GateObject}s of `namespace`. Make it once per isolate
 * (at module scope, from the first request's `env`). In the workerd build only.
 */
export function sharedGate(namespace: DurableObjectNamespaceLike, options?: SharedGateOptions): SharedGate;

/** What a {@link GateObject} answers an isolate. */
export interface GateAnswer {
  /** `'state'` (a report's answer), `'probe'` (send the probe, then report with `id`), `'go'` (closed), `'refused'` (fail-fast), `'wait'` (the poll ran out). */
  kind: 'state' | 'probe' | 'go' | 'refused' | 'wait';
  state: CircuitState;
  /** Half-open with the fleet's probe out. */
  probing: boolean;
  savedAt: number;
  /** The target's state in the object (null when closed and clean). */
  target: SavedTarget | null;
  id?: number;
  retryAfterMs?: number;
}

/**
 * The Durable Object of {@link sharedGate}: bind it as is (`export { GateObject } from
 * 'wasm-backoff/gate'`, with a `[[durable_objects.bindings]]` entry). It runs a real {@link Gate}
 * (the same state machine) for the keys of its name, made from the options of the first request;
 * its circuits are written to its storage on each change and taken up when it starts again. In the
 * workerd build only.
 */
export class GateObject {
  constructor(ctx: any, env: any);
  /** RPC: `ok` successes then `failed` failures seen by one isolate since its last report (applied while the circuit is closed). */
  report(key: string, ok: number, failed: number, options: Record<string, unknown>): Promise<GateAnswer>;
  /** RPC: a local probe asks to go; held in the object's gate until it is the probe, the circuit closes, or `pollMs` has passed. */
  admit(key: string, pollMs: number, options: Record<string, unknown>): Promise<GateAnswer>;
  /** RPC: the probe's outcome (`null`: cancelled, the next request probes). A probe not reported within `probeTimeoutMs`, or when its circuit has closed, is let go (it no longer counts in `inFlight`): its late report changes nothing. */
  probed(key: string, id: number, ok: boolean | null, options: Record<string, unknown>): GateAnswer;
  /** RPC: an isolate's report to the shared limiter of `key` (its send rate, what it wanted, its throttles); answers its share. */
  lease(key: string, report: Record<string, unknown>): { rate: number; fleet: number; version: number };
  /** RPC of {@link sharedBudget}: deposits `deposits` first attempts in the budget `key`, then grants up to `ask` retries (withdrawn from it: min(ask, floor(available))). */
  budget(key: string, deposits: number, ask: number, options: Record<string, unknown>): BudgetGrant;
  /** The requests answered by method, the object's gate's counters (null before its first request), its limiters (by key: the fleet's rate, its cuts so far, the isolates counted) and its budgets' counts. */
  stats(): {
    rpcs: { report: number; admit: number; probed: number; lease: number };
    gate: ReturnType<Gate['stats']> | null;
    limiters: Record<string, { rate: number; version: number; isolates: number }>;
    budget: { rpcs: number; deposits: number; asked: number; granted: number };
  };
}

/** What a {@link GateObject} answers a {@link SharedBudget}'s request. */
export interface BudgetGrant {
  /** Retries granted: credit the isolate spends until `ttlMs` after it asked. */
  granted: number;
  /** Retries left in the object's budget after the grant. */
  available: number;
  /** The object's budget's window, in ms. */
  ttlMs: number;
}

/**
 * Options of {@link sharedBudget}: the budget's (`RetryBudget` of `wasm-backoff/budget`, checked the
 * same way), which are the object's (sent with each request; the first request makes the object's budget,
 * so keep them the same in every Worker), plus `key` and `maxSlice`.
 */
export interface SharedBudgetOptions {
  /** The budget's scope: the name of its {@link GateObject} (a non-empty string). Callers that share a key share one budget. @default 'default' */
  key?: string;
  /** The sliding window, in ms; a granted retry is credit for this long. @default 10000 */
  ttlMs?: number;
  /** Retries always allowed per second of window, whatever the traffic: one floor for the whole fleet. @default 10 */
  minPerSec?: number;
  /** Extra retries allowed per request (first attempt) seen in the window, fleet-wide. @default 0.2 */
  retryRatio?: number;
  /** Most credit an isolate asks for in one request (an integer in [1, 1000]); its ask follows its recent retries and its own traffic's share, at least 1. @default 10 */
  maxSlice?: number;
}

/**
 * A retry budget (the `budget` option of `fetchWithBackoff` / `withBackoff`) shared by a fleet of isolates:
 * one RetryBudget per key in a {@link GateObject}, handed out to each isolate as credit, a slice per round
 * trip. `deposit` and `withdraw` are synchronous and local: deposits are sent with the next request;
 * `withdraw` spends credit and is `false` when there is none (the retry is refused, reason `'budget'`), even
 * while a grant is on its way. The isolate keeps a retry in reserve (asked for at its first deposit, again
 * when it expires: about one round trip per `ttlMs` while healthy) and asks for more as its retries use it up.
 * While the object fails (or cannot be reached), retries beyond the credit come from a local RetryBudget
 * of the same options: never fewer than the isolate alone would have. In the workerd build only.
 */
export class SharedBudget {
  /** @throws {TypeError | RangeError} naming the offending option, or when `namespace` is not a Durable Object namespace. */
  constructor(namespace: DurableObjectNamespaceLike, options?: SharedBudgetOptions);
  /** Records one request (a first attempt): counted here, sent with the next request to the object. */
  deposit(nowMs?: number): void;
  /** Takes one retry from this isolate's credit (no round trip); `false` when there is none. */
  withdraw(nowMs?: number): boolean;
  /** Retries this isolate can take now: its credit (plus its local budget's while the object fails). */
  available(nowMs?: number): number;
  /** Round trips to the object so far. */
  readonly rpcs: number;
  /** Of those, the ones that failed (the local budget stood in). */
  readonly failedRpcs: number;
  /**
   * Resolves when this isolate's request to the object, if one is out, has settled, or has been given up
   * (unanswered after 1 s: taken for failed, the local budget stands in). `ctx.waitUntil(budget.flush())`
   * on every path of a request that used the budget (a `finally`).
   */
  flush(): Promise<void>;
}

/**
 * A {@link SharedBudget} kept in the {@link GateObject} of `namespace` named `options.key` (default
 * `'default'`). Make it once per isolate (at module scope, from the first request's `env`). In the
 * workerd build only.
 */
export function sharedBudget(namespace: DurableObjectNamespaceLike, options?: SharedBudgetOptions): SharedBudget;
