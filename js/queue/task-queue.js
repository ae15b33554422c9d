// The durable task queue (`wasm-backoff/queue`): the Scheduler–Agent–
// Supervisor pattern over a pluggable state store.
//
// The state machine — when a task may be claimed, what a failure does, the
// retry delay, the failure threshold — is the Rust core's (core/src/queue.rs,
// exported by src/queue.rs); this file holds what is JavaScript's: the
// passes, promises, timers, the abort signal and the events. The stores are
// beside it (memory-store.js, indexeddb-store.js, durable-store.js). Every
// write goes through the store's compare-and-set (`swap`), so two instances
// (tabs, workers, processes sharing a store) that decide the same transition
// at once cannot both win: one claims the task, the other moves on.
import { own, number, fn } from '../options.js';
import { w } from '../wasm.js';
import { DUE_CLAIM, DUE_EXPIRE, DUE_SWEEP, MAX_TIMER } from '../gen/boundary.js';
import { within } from './deadline.js';
import { readTasks, reporter } from './read.js';
import { bounded, finalStates, storeOf } from './options.js';
import { Transitions } from './transitions.js';
import { backgroundSync } from './background-sync.js';
import {
  COMPENSATE_LATE,
  LEASE_EXPIRED,
  RETENTION,
  describe,
  isNetworkWait,
  isPermanent,
  networkWaitsOf,
  timeout,
  waitOf,
} from './errors.js';
import { clone, isTask, nonEmpty, randomId } from './record.js';
import { TaskEvent } from './task-event.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */
/** @typedef {import('../../types/queue/index.js').TaskEvent['reason']} Reason */

/** The longest wait between passes while the store keeps failing (unless pollMs is longer). */
const STORE_ERROR_CAP = 30000;

/** Runs `f` on the next macrotask (not a microtask: the event loop runs between passes); `cancel(handle)` undoes it. */
const G = /** @type {any} */ (globalThis);
/** @type {(f: () => void) => any} */
const soon = typeof G.setImmediate === 'function' ? (f) => G.setImmediate(f) : (f) => setTimeout(f, 0);
/** @type {(h: any) => void} */
const cancel = typeof G.clearImmediate === 'function' ? (h) => G.clearImmediate(h) : (h) => clearTimeout(h);

/**
 * A durable task queue: tasks are records in `store`, claimed atomically by
 * one instance at a time, run by `handler` within a lease, retried with the
 * backoff schedule, and given up after `maxFailures`. See queue/index.d.ts.
 */
export class TaskQueue extends EventTarget {
  /** The core's transitions of a record, and a new task's record (transitions.js). */
  #t;
  /**
   * The waits for the network (a rejection marked `network: true`): the same
   * schedule with no threshold, counted apart (`networkWaits`), so a task
   * offline waits ever longer, up to the backoff's maxDelayMs, and spends no
   * failure.
   */
  #net;
  #store;
  #handler;
  #compensate;
  #instance;
  #concurrency;
  #pollMs;
  #leaseMs;
  #running = new Map(); // id -> promise of the run (settles by completeBy at the latest)
  #compensating = new Set(); // promises of onCompensate runs (each settles within leaseMs)
  #storeErrors = 0; // consecutive passes the store failed
  #retried = 0; // retryNow() calls so far: a run begun before the last one that meets the network is due again at once
  #started = false;
  /** @type {any} */
  #timer;
  /** @type {Promise<void> | undefined} the promise of the tick in progress */
  #ticking;
  /** @type {any} the macrotask that starts the next pass */
  #soon;
  #again = false;
  /** @type {{ resolve: (next: number) => void, reject: (e: unknown) => void }[]} drain() calls waiting for the queue to be idle */
  #drains = [];
  /** @type {ReturnType<typeof backgroundSync> | undefined} with a syncTag */
  #sync;
  /** Reports a record that is no task's (once per id and version), which the passes then leave alone and step past. */
  #malformed = reporter((error, r) => this.#storeError(error, r));

  /** @param {import('../../types/queue/index.js').TaskQueueOptions} options */
  constructor(options) {
    super();
    if (options == null || typeof options !== 'object') throw new TypeError('options must be an object');
    const o = own(options);
    this.#handler = fn(o, 'handler', true);
    this.#compensate = fn(o, 'onCompensate', false);
    this.#store = storeOf(o);
    if (o.instanceId !== undefined) nonEmpty(o.instanceId, 'instanceId');
    this.#instance = o.instanceId;
    if (o.syncTag !== undefined) {
      nonEmpty(o.syncTag, 'syncTag');
      this.#sync = backgroundSync(this, o.syncTag);
    }
    this.#concurrency = bounded(o, 'concurrency', 4, 1, true);
    this.#pollMs = bounded(o, 'pollMs', 1000, 1, false, MAX_TIMER);
    this.#t = new Transitions(o);
    this.#net = new Transitions({ ...o, maxFailures: Infinity });
    this.#leaseMs = o.leaseMs ?? 30000;
  }

  /** This instance's lock owner id (`lockedBy` of the records it claims). */
  get instanceId() {
    // Drawn on first use, not in the constructor: workerd forbids random
    // values at module scope, where a queue may well be made.
    return (this.#instance ??= randomId());
  }

  /** The state store. */
  get store() {
    return this.#store;
  }

  /** Whether start() was called and stop() was not. */
  get running() {
    return this.#started;
  }

  /**
   * Adds a task (pending, due now or at `notBefore`) and resolves with its id
   * once the store has it. Enqueueing an id that exists already changes
   * nothing (so a retried enqueue is idempotent) and resolves with that id too.
   * @param {unknown} payload
   * @param {import('../../types/queue/index.js').EnqueueOptions} [options]
   */
  async enqueue(payload, options) {
    const rec = this.#t.newTask(payload, own(options));
    await this.#store.add(rec);
    this.#wake();
    this.#sync?.register();
    return rec.id;
  }

  /**
   * Deletes finished records (`processed` and `error`, or the `states`
   * named) created at least `olderThan` ms ago; resolves with how many. Their
   * ids can be enqueued again afterwards. The store must have `purge`.
   * @param {import('../../types/queue/index.js').PurgeOptions} [options]
   */
  async purge(options) {
    const o = own(options);
    const olderThan = number(o, 'olderThan', 0, (v) => v >= 0, 'a number >= 0');
    const states = finalStates(o.states);
    if (typeof this.#store.purge !== 'function') throw new TypeError('store must have a purge() method (see the TaskStore interface)');
    return this.#store.purge(Date.now() - olderThan, [...new Set(states)]);
  }

  /**
   * Every pending task waiting for a retry after a failure or a network
   * wait becomes due now (what the browser's `online` event and Background
   * Sync do: failures while offline should not wait out their backoff).
   * Tasks never tried keep their `notBefore`. Reads every active record;
   * resolves with how many tasks it brought forward.
   */
  async retryNow() {
    this.#retried++;
    const now = Date.now();
    let n = 0;
    for (const r of await this.#store.active()) {
      if (!isTask(r)) continue; // (a pass reports it)
      // (to the core, a network wait is a try that failed too; the record keeps its own count)
      const tried = { ...r, failureCount: r.failureCount + networkWaitsOf(r) };
      const h = /** @type {TaskRecord | undefined} */ (this.#t.step(w.queue_retry_now, tried, now));
      if (h) h.failureCount = r.failureCount;
      if (h && (await this.#store.swap(r, h))) n++;
    }
    if (n) this.#wake();
    return n;
  }

  /**
   * The record of task `id`, or undefined.
   * @param {string} id
   * @returns {Promise<TaskRecord | undefined>}
   */
  async get(id) {
    return this.#store.get(id);
  }

  /**
   * Starts claiming and sweeping (at once, then every pollMs and whenever a
   * task is due). In browsers it also wakes on `online` (tasks that failed
   * are retried at once), when the page becomes visible, and, in a Service
   * Worker with a `syncTag`, on Background Sync's `sync` event.
   */
  start() {
    if (!this.#started) {
      this.#started = true;
      this.#listen('addEventListener');
      this.#wake();
    }
    return this;
  }

  /**
   * Stops claiming and sweeping, and resolves once the handlers in flight
   * have settled (each by its completeBy at the latest); no timer or
   * listener is left. A drain() in progress rejects with an AbortError.
   */
  async stop() {
    this.#started = false;
    this.#listen('removeEventListener');
    for (const d of this.#drains.splice(0)) d.reject(new DOMException('stop() was called before the drain ended', 'AbortError'));
    clearTimeout(this.#timer);
    this.#timer = undefined;
    cancel(this.#soon);
    this.#soon = undefined;
    await this.#ticking;
    await Promise.all(this.#running.values());
    // Runs that settled just now may have started a compensation.
    await Promise.all(this.#compensating);
  }

  /**
   * Runs passes (started or not) until no task is due now and none of this
   * instance's handlers or compensations is in flight; resolves with the
   * time the next task falls due or a lease ends (Infinity when no task is
   * pending or processing), or rejects with the store's error. No timer is
   * set for what comes later: what a Durable Object's alarm or a Service
   * Worker's `sync` event needs.
   * @returns {Promise<number>}
   */
  async drain() {
    const next = await new Promise((resolve, reject) => {
      this.#drains.push({ resolve, reject });
      this.#wake();
    });
    await Promise.all(this.#compensating);
    return next;
  }

  /** Whether passes run: started, or a drain() waits. */
  get #on() {
    return this.#started || this.#drains.length > 0;
  }

  /**
   * Adds or removes the browser's wake-up listeners.
   * @param {'addEventListener' | 'removeEventListener'} method
   */
  #listen(method) {
    const g = globalThis;
    if (typeof g.addEventListener !== 'function') return;
    g[method]('online', this.#onOnline);
    if (typeof document === 'object') document[method]('visibilitychange', this.#onVisible);
    this.#sync?.listen(method);
  }

  /** Connectivity is back: tasks that failed meanwhile are retried now, and a store that failed is tried at once. */
  #onOnline = () => {
    this.#storeErrors = 0;
    this.retryNow().catch((error) => this.#storeError(error));
    this.#wake();
  };

  #onVisible = () => {
    if (document.visibilityState === 'visible') this.#wake();
  };

  /**
   * Asks for a pass: on the next macrotask (never straight from the last
   * one's promise: a pass that claims a task whose handler fails at once,
   * with a zero backoff, would otherwise chain passes on microtasks and
   * starve the event loop), or after the pass in progress.
   */
  #wake() {
    if (!this.#on) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#soon ??= soon(() => {
      this.#soon = undefined;
      this.#pass();
    });
  }

  #pass() {
    if (!this.#on || this.#ticking) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#ticking = this.#tick()
      .then(
        (next) => {
          this.#storeErrors = 0;
          const wait = Math.min(this.#pollMs, next - Date.now());
          // A custom store may hand back a NaN time: poll as usual then.
          return { next, wait: Number.isNaN(wait) ? this.#pollMs : wait, error: undefined };
        },
        (error) => {
          this.#storeError(error);
          // A store that is down is not hammered: the wait doubles from
          // pollMs per consecutive failed pass, up to max(pollMs, 30 s).
          const n = Math.min(this.#storeErrors++, 31);
          return { next: NaN, wait: Math.min(this.#pollMs * 2 ** n, Math.max(this.#pollMs, STORE_ERROR_CAP)), error };
        },
      )
      .then(({ next, wait, error }) => {
        this.#ticking = undefined;
        // A drain ends with a pass that found nothing to do now while no handler runs, or with a store error.
        if (error || (!this.#running.size && !this.#again && wait > 0)) {
          for (const d of this.#drains.splice(0)) error ? d.reject(error) : d.resolve(next);
        }
        if (!this.#on) return;
        // Draining without start(): the next pass comes when a run ends, or now.
        if (this.#again || (!this.#started && !this.#running.size)) {
          this.#again = false;
          return this.#wake();
        }
        if (this.#started) this.#timer = setTimeout(() => this.#pass(), Math.max(1, Math.min(wait, MAX_TIMER)));
      });
  }

  /**
   * One pass: sweep expired leases, claim due tasks while slots are free;
   * resolves with the time the next record falls due. It reads only the records it can act on:
   * the `concurrency + 1` earliest tasks of each state (a full list means more
   * may wait behind its last record), and the malformed records before them.
   */
  async #tick() {
    const limit = this.#concurrency + 1;
    const { records, last } = await readTasks(this.#store, limit, this.#malformed);
    const store = this.#store;
    let next = Infinity;
    for (const r of records) {
      if (!this.#on) break;
      const now = Date.now();
      const due = this.#t.step(w.queue_due, r, now);
      if (due === DUE_SWEEP) {
        // The supervisor: the instance holding the lease crashed, hung or was closed.
        // (sweep, expire and claim answer a record whenever queue_due says so)
        const n = await this.#fail(
          r,
          /** @type {TaskRecord} */ (this.#t.step(w.queue_sweep, r, now)),
          timeout(LEASE_EXPIRED),
          now,
          'maxFailures',
        );
        if (n?.state === 'pending') next = Math.min(next, n.nextAttemptAt);
      } else if (due === DUE_EXPIRE) {
        await this.#fail(r, /** @type {TaskRecord} */ (this.#t.step(w.queue_expire, r, now)), timeout(RETENTION), now, 'maxRetention');
      } else if (due === DUE_CLAIM) {
        if (this.#running.size >= this.#concurrency || this.#running.has(r.id)) continue;
        const c = /** @type {TaskRecord} */ (this.#t.step(w.queue_claim, r, now));
        c.lockedBy = this.instanceId;
        if (await store.swap(r, c)) {
          if (!this.#on) {
            // stop() came while the claim was being written: no handler may
            // start now, so the task is given back as it was (no failure
            // counted). If this write fails, the sweep takes it back once
            // the lease is over (that counts as a failure).
            await store.swap(c, { ...r, version: c.version + 1 });
            break;
          }
          this.#run(c);
          next = Math.min(next, c.completeBy + 1);
        }
      } else if (r.state === 'pending') {
        next = Math.min(next, r.nextAttemptAt);
      } else if (r.state === 'processing') {
        next = Math.min(next, r.completeBy + 1); // sweep it as soon as its lease is over
      }
    }
    // More records may wait behind a full list: leases to sweep at once, or
    // due tasks for the slots still free (a full slot set waits for a run to end).
    if (last.processing) next = Math.min(next, last.processing.completeBy + 1);
    if (last.pending && this.#running.size < this.#concurrency) next = Math.min(next, last.pending.nextAttemptAt);
    return next;
  }

  /** @param {TaskRecord} rec */
  #run(rec) {
    const ac = new AbortController();
    const task = clone(rec);
    const retried = this.#retried;
    const run = within(
      Math.max(0, rec.completeBy - Date.now()),
      () => this.#handler(task, { signal: ac.signal, completeBy: rec.completeBy }),
      () => {
        ac.abort(timeout(LEASE_EXPIRED));
        return { expired: true };
      },
      async (outcome) => {
        // Past completeBy the agent gives up silently: the sweep takes the task back.
        if (outcome.expired) return;
        const now = Date.now();
        const { error } = outcome;
        // Whatever the handler rejected with (even a value that throws when
        // read) is a failure of the task, never one of the store.
        if (!outcome.ok) {
          const permanent = isPermanent(error);
          const network = !permanent && isNetworkWait(error);
          const n = /** @type {TaskRecord | undefined} */ (
            network ? this.#networkWait(rec, now) : this.#t.step(permanent ? w.queue_fail_permanently : w.queue_fail, rec, now)
          );
          // (connectivity came back while it ran, `online` or `sync`: its retryNow missed this task, so it is due now)
          if (n && network && retried !== this.#retried) n.nextAttemptAt = now;
          // (a wait the failure names, e.g. a server's Retry-After: the retry is not due before it)
          const wait = waitOf(error);
          if (n?.state === 'pending' && wait > n.nextAttemptAt - now) n.nextAttemptAt = now + wait;
          if (n) await this.#fail(rec, n, error, now, permanent ? 'permanent' : 'maxFailures');
          return;
        }
        const n = /** @type {TaskRecord | undefined} */ (this.#t.step(w.queue_complete, rec, now));
        if (!n) return;
        n.lockedBy = null;
        // The events carry the record as written.
        if (await this.#store.swap(rec, n)) this.#emit('processed', { task: n });
      },
    )
      .catch((e) => this.#storeError(e, task))
      .finally(() => {
        this.#running.delete(rec.id);
        this.#wake();
      });
    this.#running.set(rec.id, run);
  }

  /**
   * processing → pending, no failure counted: the handler met the network's
   * failure (`network: true`). The wait is the backoff's delay after
   * `networkWaits + 1` (the core's, with no threshold), so it grows up to
   * the schedule's cap: a browser that is wrong about being online still
   * retries, and `online` or Background Sync bring it forward (retryNow).
   * @param {TaskRecord} rec
   * @param {number} now
   * @returns {TaskRecord | undefined}
   */
  #networkWait(rec, now) {
    const k = networkWaitsOf(rec);
    const d = /** @type {TaskRecord | undefined} */ (this.#net.step(w.queue_fail, { ...rec, failureCount: k }, now));
    return d && { ...d, failureCount: rec.failureCount, networkWaits: k + 1 };
  }

  /**
   * Writes `n`, the failure (or expiry) of `r` the core computed, and raises
   * its event; resolves with the record written, or undefined when another
   * instance wrote first. A retry that would come after the task's retention
   * is its expiry instead. `reason` is the rule that ends the task if `n` is
   * `error`.
   * @param {TaskRecord} r
   * @param {TaskRecord} n
   * @param {unknown} error
   * @param {number} now
   * @param {Reason} reason
   */
  async #fail(r, n, error, now, reason) {
    if (n.state === 'pending' && this.#t.step(w.queue_due, n, now) === DUE_EXPIRE) {
      n = { .../** @type {TaskRecord} */ (this.#t.step(w.queue_expire, n, now)), version: n.version };
      reason = 'maxRetention';
    }
    n.lockedBy = null;
    n.lastError = describe(error);
    if (!(await this.#store.swap(r, n))) return;
    this.#failed(n, error, now, reason);
    return n;
  }

  /**
   * After a failure was written: `retry`, or `error` once `onCompensate`
   * settled. The compensation runs beside the passes and the handler slots
   * (user code that hangs must not stop the queue) and is bounded by leaseMs:
   * past it the `error` event comes with a TimeoutError as
   * `compensationError`, and stop() no longer waits for it.
   * @param {TaskRecord} n
   * @param {unknown} error
   * @param {number} now
   * @param {Reason} reason
   */
  #failed(n, error, now, reason) {
    if (n.state !== 'error') {
      this.#sync?.register();
      return this.#emit('retry', { task: n, error, delayMs: n.nextAttemptAt - now });
    }
    if (!this.#compensate) return this.#emit('error', { task: n, error, reason });
    const task = clone(n);
    const done = within(
      this.#leaseMs,
      () => this.#compensate(task, error),
      () => ({ error: timeout(COMPENSATE_LATE) }),
      ({ error: compensationError }) => {
        this.#compensating.delete(done);
        this.#emit('error', { task: n, error, compensationError, reason });
      },
    );
    this.#compensating.add(done);
  }

  /**
   * A `storeerror` event: `error`, and the record it concerns if any.
   * @param {unknown} error
   * @param {unknown} [task] a task, or a malformed record
   */
  #storeError(error, task) {
    this.dispatchEvent(new TaskEvent('storeerror', { task, error }));
  }

  /**
   * @param {string} type
   * @param {{ task: TaskRecord, error?: unknown, delayMs?: number, compensationError?: unknown, reason?: Reason }} init
   */
  #emit(type, init) {
    this.dispatchEvent(new TaskEvent(type, { ...init, task: clone(init.task) }));
  }
}
