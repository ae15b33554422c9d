/**
 * `Outbox`: HTTP requests that failed or were made offline, stored and sent later (the job of Workbox's BackgroundSyncPlugin).
 *
 * On the durable task queue of `wasm-backoff/queue`: a request is stored
 * (method, URL, headers, a bounded body, an idempotency key) and replayed
 * through `withBackoff` at start, on `online` and on Background Sync.
 * @module wasm-backoff/outbox
 */
import type { RetryOptions } from '../index.js';
import type { TaskQueue, TaskQueueOptions } from '../queue/index.js';
export { PermanentError, MemoryStore } from '../queue/index.js';
export type { TaskRecord, TaskStore, TaskQueueOptions } from '../queue/index.js';

/** What a task of an outbox holds: the request as a replay sends it. */
export interface StoredRequest {
  method: string;
  url: string;
  /** Its headers, `idempotency-key` among them. */
  headers: [string, string][];
  /** Its body, read when it was stored; null for none. */
  body: ArrayBuffer | null;
}

/**
 * Options of {@link Outbox}, checked by its constructor (a `TypeError` or
 * `RangeError` whose message starts with the option's name).
 */
export interface OutboxOptions {
  /**
   * The IndexedDB database and the Background Sync tag: a page and its
   * Service Worker name the same outbox to share it. @default 'outbox'
   */
  name?: string;
  /**
   * The largest body stored, in bytes (an integer >= 0): a longer one is
   * refused with a `RangeError` (`maxBodyBytes: …`), never truncated; a
   * streamed body is cancelled as soon as it passes the bound.
   * @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number;
  /**
   * The tries of one replay (`withBackoff`'s options); the stored
   * `Idempotency-Key` makes a POST retryable. Its retry policy also
   * decides a task's end: an answer it would try again is replayed later
   * (and so is a 429, a 503 or a 529 without `x-should-retry: false`, and one whose wait `delay` gave up on), one
   * it would not (a status outside `retryOn`, `x-should-retry: false`,
   * `shouldRetry`'s `false`) ends the task in `error`. A later replay is not
   * due before the wait the last answer named (its `Retry-After`, …), and a
   * replay's tries end before the queue's lease (`maxElapsedMs` is at most
   * what is left of it): a longer wait is the queue's. A replay with no
   * answer because of the network (a network failure, or anything while
   * `navigator.onLine` is false) is never a failure of the task: it waits
   * for the network (see `queue`). @default { maxAttempts: 3 }
   */
  retry?: RetryOptions;
  /**
   * The task queue's options (its backoff between replays, `maxFailures`,
   * `maxRetentionMs`, …). What counts toward `maxFailures`: a replay that
   * ended on an answer to try again (after its tries), or on its deadline
   * while online; one the policy never retries ends the task at once. What
   * never counts: no answer because of the network (the task's
   * `networkWaits` grows; it is replayed after the backoff's delay for that
   * many waits, up to its `maxDelayMs`, and at once on `online` and
   * Background Sync). A stored request is therefore given up only by
   * `maxFailures`, a permanent answer or `maxRetentionMs` (none by default),
   * each with the queue's `error` event. Delivery is at least once: a
   * replay cut by the lease may have reached the server, so give the queue
   * a `leaseMs` well above the slowest answer (with room for the replay's
   * tries). Not `handler` nor `syncTag`, which the outbox sets
   * (a `TypeError`). Where there is no IndexedDB (Node, Deno, workerd),
   * `store` is required (a `TypeError` naming `queue.store`). @default { store: new IndexedDBStore({ name }) } and the queue's defaults
   */
  queue?: Omit<TaskQueueOptions<StoredRequest>, 'handler' | 'syncTag'>;
}

/**
 * Requests stored and sent later. In a page and in its Service Worker
 * (module worker: import `wasm-backoff/outbox/sync`), each with
 * `new Outbox(options).start()`: the one that runs replays.
 */
export class Outbox {
  constructor(options?: OutboxOptions);
  /** The task queue under it (its events, `get`, `purge`, `drain`). */
  readonly queue: TaskQueue<StoredRequest>;
  /** Starts replaying: now, on `online`, on Background Sync's `sync` event with its name. */
  start(): this;
  /** Stops replaying (a replay in flight finishes). */
  stop(): Promise<void>;
  /**
   * Stores `request` (its body is read) and resolves with its task id,
   * which is its `Idempotency-Key` (the request's own, else a new UUID):
   * adding one request twice stores it once. Rejects with a `RangeError`
   * when its body is over `maxBodyBytes`.
   */
  add(request: Request): Promise<string>;
  /**
   * `fetch(request)` now, once; on a network failure the request is stored
   * and the answer is `202 Accepted` with its id in the `Outbox-Id` header
   * (for a Service Worker's `event.respondWith`). A request whose method is
   * not idempotent goes out with the `Idempotency-Key` it would be replayed
   * under (its own, else a new UUID), so a server that took it before the
   * connection broke can drop the replay. A request fetch refused (not a
   * network failure) rejects with that error, and one that cannot be stored
   * (its body over the bound) with the network failure: neither is stored.
   * Not a `Request`: a `TypeError`.
   */
  fetch(request: Request): Promise<Response>;
}
