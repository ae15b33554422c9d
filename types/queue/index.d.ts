/**
 * A durable task queue (the Scheduler–Agent–Supervisor pattern), with the calculator.
 *
 * A module of its own: importing 'wasm-backoff' or fetchWithBackoff
 * downloads none of it.
 * @module wasm-backoff/queue
 */
import type { BackoffOptions } from '../index.js';
export { Backoff, BackoffOptions, Preset, Strategy, Jitter } from '../index.js';

/** Where a task is: `processed` and `error` are final. */
export type TaskState = 'pending' | 'processing' | 'processed' | 'error';

/** A task's record, as the store keeps it. Times are `Date.now()` milliseconds. */
export interface TaskRecord<P = unknown> {
  id: string;
  /** What `enqueue` was given (structured-cloneable: IndexedDB stores it). */
  payload: P;
  state: TaskState;
  /** The `instanceId` holding the lease while `processing`; otherwise null. */
  lockedBy: string | null;
  /** `processing` only: the lease ends here; then the handler's signal aborts and the sweep takes the task back. */
  completeBy: number;
  /** Handler rejections and expired leases so far (not the network waits: see `networkWaits`). */
  failureCount: number;
  /**
   * Rejections with `network: true` so far (the network failed, not the
   * task): they spend no failure; each waits the backoff's delay for that
   * many waits. Absent until the first.
   */
  networkWaits?: number;
  /** `pending` only: not claimed before this time. */
  nextAttemptAt: number;
  createdAt: number;
  /** Seeds this task's retry delays (the delay after failure n is a function of it and n). */
  seed: number;
  /** Incremented by every write; the store's compare-and-set compares it. */
  version: number;
  /** The message of the last failure, or null. */
  lastError: string | null;
}

/**
 * Where the records live. Implement it for another backend (a server, SQLite,
 * Durable Objects…); every method may be async. The queue needs ONE atomic
 * operation, `swap`: two instances that both read version v and both call
 * swap must not both succeed.
 */
export interface TaskStore {
  /** Inserts `record` unless its id exists; resolves with whether it was inserted. Must be atomic too (check and insert). */
  add(record: TaskRecord): Promise<boolean> | boolean;
  /** The record of `id`, or undefined. */
  get(id: string): Promise<TaskRecord | undefined> | TaskRecord | undefined;
  /** Every record whose state is `pending` or `processing` (in any order). Read by each pass only when the store has no `earliest`. */
  active(): Promise<TaskRecord[]> | TaskRecord[];
  /**
   * What a pass reads, when the store has it (recommended beyond a few
   * hundred records: without it each pass reads every active record): the
   * `limit` pending records with the smallest `nextAttemptAt` and the `limit`
   * processing records with the smallest `completeBy`, in any order (fewer
   * when there are fewer). An ordered index makes it cost O(limit), not
   * O(backlog): `SELECT … WHERE state = 'pending' ORDER BY nextAttemptAt LIMIT ?`.
   */
  earliest?(limit: number): Promise<TaskRecord[]> | TaskRecord[];
  /**
   * Needed by {@link TaskQueue.purge} only: deletes the records whose state
   * is one of `states` (final states only) and whose `createdAt <= before`;
   * resolves with how many.
   */
  purge?(before: number, states: TaskState[]): Promise<number> | number;
  /**
   * Compare-and-set: atomically, if the stored record of `expected.id` has
   * `version === expected.version`, replace it with `next` (whose version is
   * `expected.version + 1`) and resolve true; otherwise change nothing and
   * resolve false. Resolve only once the write is durable.
   */
  swap(expected: TaskRecord, next: TaskRecord): Promise<boolean> | boolean;
}

/** What the stores of this package have: every TaskStore method (async), and `list()`. */
export interface StoreMethods extends TaskStore {
  add(record: TaskRecord): Promise<boolean>;
  get(id: string): Promise<TaskRecord | undefined>;
  active(): Promise<TaskRecord[]>;
  earliest(limit: number): Promise<TaskRecord[]>;
  swap(expected: TaskRecord, next: TaskRecord): Promise<boolean>;
  purge(before: number, states: TaskState[]): Promise<number>;
  /** Every record (for inspection and tests). */
  list(): Promise<TaskRecord[]>;
}

/**
 * The default store: a Map in this realm (Node, workerd, one page). Share one
 * object to share its tasks; nothing survives the process. Pending and
 * processing records are indexed by due time, so a pass costs O(log n).
 */
export interface MemoryStore extends StoreMethods {}
export class MemoryStore {
  constructor();
}

/**
 * Records in IndexedDB (browsers and workers): they survive reloads, crashes
 * and closed tabs, and are shared by every page and worker of the origin that
 * opens the same database. `swap` reads, compares and writes in one readwrite
 * transaction, which IndexedDB serialises across pages. Indexes on
 * (state, nextAttemptAt) and (state, completeBy) make a pass read only the
 * records it can act on (a database of version 1 is upgraded in place).
 */
export interface IndexedDBStore extends StoreMethods {}
export class IndexedDBStore {
  constructor(options?: {
    /** The IndexedDB database name (one object store `tasks` inside). @default 'wasm-backoff-queue' */
    name?: string;
  });
  /** Closes the connection (reopened on next use). */
  close(): Promise<void>;
}

/** What DurableObjectStore needs of a Durable Object's `ctx.storage` (workerd's DurableObjectStorage has it all). */
export interface DurableObjectStorageLike {
  get(key: string): Promise<unknown>;
  get(keys: string[]): Promise<Map<string, unknown>>;
  put(entries: Record<string, unknown>): Promise<void>;
  delete(keys: string | string[]): Promise<unknown>;
  list(options?: { prefix?: string; start?: string; startAfter?: string; end?: string; limit?: number }): Promise<Map<string, unknown>>;
  transaction<T>(closure: (txn: any) => Promise<T>): Promise<T>;
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number | Date): Promise<void>;
  deleteAlarm(): Promise<void>;
}

/** A Durable Object namespace binding (`env.TASKS`), as enqueueTo and DurableObjectStore.remote use it. */
export interface DurableObjectNamespaceLike {
  idFromName(name: string): unknown;
  get(id: any): any;
}

/**
 * Task records in a Durable Object's storage (Cloudflare Workers; the
 * `workerd` build only: elsewhere its constructor throws a TypeError).
 * Every write is one storage transaction (`swap` reads, compares and writes
 * atomically); pending and processing records are indexed by due time, so
 * `earliest` reads only what a pass acts on. With `alarms: true` each write
 * moves the object's alarm forward to the record's due time; the object's
 * `alarm()` then drains the queue (see {@link TaskQueueObject}, which does).
 */
/** Options of {@link DurableObjectStore}. */
export interface DurableObjectStoreOptions {
  /** Move the object's alarm to each record's due time when sooner (the class must have an `alarm()`). @default false */
  alarms?: boolean;
}

export interface DurableObjectStore extends StoreMethods {}
export class DurableObjectStore {
  constructor(storage: DurableObjectStorageLike, options?: DurableObjectStoreOptions);
  /** A TaskStore for a Worker whose TaskQueue processes tasks too: each call goes to the TaskQueueObject named `name` (make it per request). */
  static remote(namespace: DurableObjectNamespaceLike, name?: string): StoreMethods;
  /**
   * When the next pending task falls due or the next lease ends, from the
   * index (Infinity when none); entries whose record is missing or no task
   * (what the queue reports and steps past) do not count.
   */
  nextDue(): Promise<number>;
  /** Sets the alarm to nextDue() (deletes it when nothing is pending or processing); `fresh`: deleted and written anew. */
  rearm(fresh?: boolean): Promise<void>;
}

/**
 * A Durable Object class that keeps a task queue in its storage and runs it
 * on its alarm (Cloudflare Workers; the `workerd` build only). Extend it with
 * `handler` (and `options`), export the subclass, bind it (a
 * `new_sqlite_classes` migration) and enqueue with {@link enqueueTo}. Its
 * queue is never started: each alarm drains it and sets the alarm to the
 * next due time (a retry, a delayed task, a lease to sweep), so nothing
 * polls; a task whose object was reset mid-run is swept after its lease.
 * It re-arms its alarm when it starts (the first request after a restart:
 * local workerd forgets alarms across one) and logs its queue's
 * `storeerror` events with console.error.
 * Public methods are its RPC interface.
 */
export class TaskQueueObject<P = unknown, Env = unknown> {
  constructor(ctx: any, env: Env);
  readonly ctx: any;
  readonly env: Env;
  /** The queue's options (all but `handler` and `store`). */
  options?: Omit<TaskQueueOptions<P>, 'handler' | 'store'>;
  /** The work of one task (resolve = processed, reject = retried, PermanentError = error at once). */
  handler(task: TaskRecord<P>, context: TaskContext): Promise<unknown> | unknown;
  readonly store: DurableObjectStore;
  readonly queue: TaskQueue<P>;
  /** RPC: adds a task; resolves with its id. */
  enqueue(payload: P, options?: EnqueueOptions): Promise<string>;
  /** RPC: the record of task `id`. */
  get(id: string): Promise<TaskRecord<P> | undefined>;
  /** RPC: {@link TaskQueue.purge}. */
  purge(options?: PurgeOptions): Promise<number>;
  /** RPC: one TaskStore method of the object's store (for DurableObjectStore.remote). */
  taskStore(op: 'add' | 'get' | 'active' | 'earliest' | 'swap' | 'purge' | 'list', args: unknown[]): Promise<unknown>;
  /** Drains the queue, then sets the alarm to the next due time. */
  alarm(): Promise<void>;
}

/**
 * From a Worker: enqueues `payload` in the TaskQueueObject named `name`
 * (default 'default') of `namespace`; resolves with the id once the object
 * stored it (the `workerd` build only). Throws at once (TypeError or
 * RangeError) for a namespace that is no binding, a bad `name` or `id`.
 */
export function enqueueTo<P = unknown>(namespace: DurableObjectNamespaceLike, payload: P, options?: EnqueueOptions & { name?: string }): Promise<string>;

/** What the handler gets besides the task. */
export interface TaskContext {
  /** Aborts (reason: a `TimeoutError` DOMException) when `completeBy` passes; the result no longer counts then. */
  signal: AbortSignal;
  /** When the lease ends (`Date.now()` ms). */
  completeBy: number;
}

export interface TaskQueueOptions<P = unknown> {
  /**
   * Does the work; resolve = processed, reject = a retryable failure, reject
   * with a {@link PermanentError} (or any error with `permanent: true`) =
   * `error` at once. A failure whose error names a wait (`retryAfterMs`, a
   * number of ms: a server's `Retry-After`, as the fetch driver's errors
   * carry it) is retried no sooner than that, whatever the backoff says.
   * A rejection with an error that has `network: true` (the network failed,
   * not the task; the outbox's replays with no answer) is no failure:
   * `failureCount` stays, `networkWaits` grows, and the task is retried
   * after the backoff's delay for that many waits (up to its `maxDelayMs`),
   * or at once on `online` and Background Sync ({@link TaskQueue.retryNow};
   * a run under way when it came is due again at once).
   * Must be idempotent: a task whose lease expired mid-run runs again.
   */
  handler: (task: TaskRecord<P>, context: TaskContext) => Promise<unknown> | unknown;
  /** Where the records live. @default new MemoryStore() */
  store?: TaskStore;
  /** How long a claim lasts (ms, in (0, 2^31 − 1]): the handler's deadline, after which the sweep takes the task back. @default 30000 */
  leaseMs?: number;
  /** The failure that makes a task `error` (1 = never retry); integer >= 1, or `Infinity`. @default 5 */
  maxFailures?: number;
  /**
   * How long a task may live, in ms from its `createdAt` (> 0, or `Infinity`):
   * it is not claimed after that and ends in `error` (event `reason`
   * 'maxRetention', `error` a `TimeoutError` DOMException), at once when a
   * failure's retry would come later than that (the event's `error` is then
   * the failure). A task in flight finishes its lease.
   * @default Infinity
   */
  maxRetentionMs?: number;
  /**
   * The retry delays (the calculator's options; `maxAttempts` and `maxElapsedMs`
   * play no part, `maxFailures` is the limit). With a `seed`, each task's delays
   * are a function of it and the task id; without one, random per task.
   * @default {} (the Backoff defaults)
   */
  backoff?: BackoffOptions;
  /** Handlers running at once in this instance; integer >= 1. @default 4 */
  concurrency?: number;
  /**
   * The longest time between two passes (claim due tasks, sweep expired leases), in ms, in [1, 2^31 − 1].
   * While the store keeps failing, the wait doubles per failed pass from `pollMs` up to max(`pollMs`, 30 s).
   * @default 1000
   */
  pollMs?: number;
  /**
   * Runs when a task ends in `error` (permanent failure or `maxFailures`), in
   * the instance that recorded it, beside the queue's passes (a slow one holds
   * nothing up). The `error` event follows once it settled, or after `leaseMs`
   * with a `TimeoutError` DOMException as `compensationError` if it had not.
   * @default undefined
   */
  onCompensate?: (task: TaskRecord<P>, error: unknown) => Promise<unknown> | unknown;
  /** This instance's lock owner id (`lockedBy`); a non-empty string. @default a random id (16 hex digits), drawn at its first use */
  instanceId?: string;
  /**
   * A Background Sync tag (browsers with a Service Worker): after an enqueue
   * and after a failure the queue asks the browser for a sync with this tag,
   * and a started queue in the Service Worker answers the `sync` event by
   * retrying every pending task at once and draining (the event fails, so the
   * browser retries it later, while tasks are left). Pages and the worker
   * must share the store (same IndexedDB name). Non-empty string.
   * @default undefined (no Background Sync)
   */
  syncTag?: string;
}

export interface EnqueueOptions {
  /**
   * The task's id (idempotency key): a non-empty, well-formed string (one
   * with a lone surrogate is refused with a RangeError naming `id`: a UTF-8
   * store would keep it as U+FFFD). @default a time-ordered random id
   */
  id?: string;
  /** Not claimed before this time (`Date.now()` ms, or a Date); a past time means now. @default now */
  notBefore?: number | Date;
}

export interface PurgeOptions {
  /** Only records created at least this long ago (ms, >= 0). @default 0 (every finished record) */
  olderThan?: number;
  /** Which final states to delete. @default ['processed', 'error'] */
  states?: ('processed' | 'error')[];
}

/** Thrown by a handler when the task can never succeed: `error` at once, no retry. */
export class PermanentError extends Error {
  constructor(message?: string, options?: { cause?: unknown });
  readonly permanent: true;
}

/** The event of `processed`, `retry`, `error` and `storeerror`. */
export class TaskEvent<P = unknown> extends Event {
  /** The record after the transition; for `storeerror`, the task being written, or undefined when a pass failed. */
  readonly task: TaskRecord<P> | undefined;
  /** `retry`/`error`: what the handler threw, or a `TimeoutError` DOMException for an expired lease; `storeerror`: the store's error. */
  readonly error: unknown;
  /** `retry`: ms until the next attempt. */
  readonly delayMs: number | undefined;
  /** `error`: what `onCompensate` threw, if it did (a `TimeoutError` DOMException if it ran past `leaseMs`). */
  readonly compensationError: unknown;
  /**
   * `error`: the rule that ended the task: a {@link PermanentError} (or `permanent: true`),
   * the `maxFailures`-th failure, or `maxRetentionMs`. Undefined for the other events.
   */
  readonly reason: 'permanent' | 'maxFailures' | 'maxRetention' | undefined;
}

/** A `processed`, `retry` or `error` event: it always has the task. */
export type TaskOutcomeEvent<P = unknown> = TaskEvent<P> & { readonly task: TaskRecord<P> };

/** A listener as EventTarget takes it (spelled out: projects without the DOM lib lack the DOM's names for it). */
export type TaskListener = ((event: Event) => void) | { handleEvent(event: Event): void };
/** addEventListener's options (idem). */
export type TaskListenerOptions = boolean | { capture?: boolean; once?: boolean; passive?: boolean; signal?: AbortSignal };

export interface TaskQueueEventMap<P = unknown> {
  /** The handler resolved within the lease and the record is `processed`. */
  processed: TaskOutcomeEvent<P>;
  /** A failure (rejection or expired lease), or a network wait (`network: true`, no failure counted), sent the task back to `pending` for `delayMs`. */
  retry: TaskOutcomeEvent<P>;
  /** The task ended in `error` (permanent failure, or its `maxFailures`-th failure). */
  error: TaskOutcomeEvent<P>;
  /**
   * The store failed (the queue carries on at the next pass, later each time
   * while it keeps failing), or handed back a malformed record (a TypeError
   * "malformed task record <id>@<version>: ..."; reported once per id and
   * version, left as it is and stepped past: it holds no slot and sets no
   * wake-up or alarm). For an index entry of a DurableObjectStore with no
   * record, `task` is `{ id, state, missing: true }`.
   */
  storeerror: TaskEvent<P>;
}

/**
 * A durable task queue: records in `store`, claimed atomically by one
 * instance at a time, run by `handler` within a lease, swept back when a
 * lease expires, retried with the backoff schedule, given up after
 * `maxFailures`. Every enqueued id ends `processed` or `error`.
 */
export class TaskQueue<P = unknown> extends EventTarget {
  constructor(options: TaskQueueOptions<P>);
  /** This instance's lock owner id. */
  readonly instanceId: string;
  readonly store: TaskStore;
  /** Whether start() was called and stop() was not. */
  readonly running: boolean;
  /**
   * Adds a pending task, due now or at `notBefore`; resolves with its id. An
   * id that exists already is left as it is (idempotent). Rejects with a
   * RangeError when `notBefore` is past the task's `maxRetentionMs`.
   */
  enqueue(payload: P, options?: EnqueueOptions): Promise<string>;
  /**
   * Deletes finished records (`processed` and `error`) created at least
   * `olderThan` ms ago; resolves with how many. Their ids can be enqueued
   * again afterwards (the idempotency of `enqueue` lasts as long as the
   * record). The store must have `purge` (MemoryStore and IndexedDBStore do).
   */
  purge(options?: PurgeOptions): Promise<number>;
  /**
   * Pending tasks waiting out a retry delay after a failure or a network wait become due now;
   * resolves with how many. The queue does it itself on the browser's
   * `online` event and on Background Sync's `sync` event. Reads every active
   * record (unlike a pass).
   */
  retryNow(): Promise<number>;
  /** The record of task `id`. */
  get(id: string): Promise<TaskRecord<P> | undefined>;
  /**
   * Starts claiming and sweeping: at once, then every `pollMs` and whenever a
   * task falls due. In browsers also on `online` (with {@link retryNow}), when
   * the page becomes visible, and in a Service Worker on `sync` (see `syncTag`).
   */
  start(): this;
  /**
   * Runs passes (started or not) until no task is due now and no handler or
   * compensation of this instance is in flight; resolves with the time the
   * next task falls due or a lease ends (`Date.now()` ms; `Infinity` when no
   * task is pending or processing); rejects with the store's error, or with
   * an `AbortError` DOMException when stop() is called first. Sets no timer
   * for later tasks: for a Durable Object alarm, a Service Worker event's
   * `waitUntil`, or a Worker's `ctx.waitUntil`.
   */
  drain(): Promise<number>;
  /**
   * Stops claiming and sweeping; resolves once the handlers in flight settled
   * (by their `completeBy` at the latest) and so did the `onCompensate` calls
   * (or `leaseMs` passed). A task claimed while stop() was called is given
   * back (pending, no failure counted) without running. No timer or listener is left.
   */
  stop(): Promise<void>;
  addEventListener<K extends keyof TaskQueueEventMap<P>>(type: K, listener: (event: TaskQueueEventMap<P>[K]) => void, options?: TaskListenerOptions): void;
  addEventListener(type: string, listener: TaskListener | null, options?: TaskListenerOptions): void;
  removeEventListener<K extends keyof TaskQueueEventMap<P>>(type: K, listener: (event: TaskQueueEventMap<P>[K]) => void, options?: boolean | { capture?: boolean }): void;
  removeEventListener(type: string, listener: TaskListener | null, options?: boolean | { capture?: boolean }): void;
}
