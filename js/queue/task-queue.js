// The durable task queue (`wasm-backoff/queue`): the Scheduler–Agent–
// Supervisor pattern over a pluggable state store.
//
// The state machine — when a task may be claimed, what a failure does, the
// retry delay, the failure threshold — is the Rust core's (core/src/queue.rs,
// exported by src/queue.rs, asked through transitions.js); JavaScript holds
// the rest, one part a file: when passes run (passes.js), what one pass does,
// the supervisor's sweep and the scheduler's claims (scheduler.js), a claimed
// task's run within its lease (agent.js), a failure written with its event
// and compensation (failures.js), the wake-ups besides timers (wakeups.js,
// background-sync.js) and the events (task-event.js). This file is the
// public API and wires them. The stores are beside it (memory-store.js,
// indexeddb-store.js, durable-store.js). Every write goes through the
// store's compare-and-set (`swap`), so two instances (tabs, workers,
// processes sharing a store) that decide the same transition at once cannot
// both win: one claims the task, the other moves on.
import { own, readAll } from '../options.js';
import { MemoryStore } from './memory-store.js';
import { QUEUE_OPTIONS, PURGE_OPTIONS } from './options.js';
import { Transitions } from './transitions.js';
import { backgroundSync } from './background-sync.js';
import { randomId } from './record.js';
import { emitter } from './task-event.js';
import { Passes } from './passes.js';
import { Scheduler } from './scheduler.js';
import { Agent } from './agent.js';
import { Failures } from './failures.js';
import { retryDue, wakeups } from './wakeups.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

/**
 * A durable task queue: tasks are records in `store`, claimed atomically by
 * one instance at a time, run by `handler` within a lease, retried with the
 * backoff schedule, and given up after `maxFailures`. See queue/index.d.ts.
 */
export class TaskQueue extends EventTarget {
  /** The core's transitions of a record, and a new task's record (transitions.js). */
  #t;
  #store;
  #instance;
  /** @type {ReturnType<typeof backgroundSync> | undefined} with a syncTag */
  #sync;
  /** @type {Passes} */
  #passes;
  /** @type {Agent} */
  #agent;
  /** @type {Failures} */
  #failures;
  /** @type {ReturnType<typeof wakeups>} */
  #listen;

  /** @param {import('../../types/queue/index.js').TaskQueueOptions} options */
  constructor(options) {
    super();
    if (options == null || typeof options !== 'object') throw new TypeError('options must be an object');
    const o = own(options);
    const {
      handler,
      onCompensate: compensate,
      store = new MemoryStore(),
      instanceId,
      syncTag,
      concurrency,
      pollMs,
    } = readAll(o, QUEUE_OPTIONS);
    this.#store = store;
    this.#instance = instanceId;
    if (syncTag !== undefined) this.#sync = backgroundSync(this, syncTag);
    const t = (this.#t = new Transitions(o));
    // The waits for the network (a rejection marked `network: true`): the
    // same schedule with no threshold, counted apart (`networkWaits`), so a
    // task offline waits ever longer, up to the backoff's maxDelayMs, and
    // spends no failure.
    const net = new Transitions({ ...o, maxFailures: Infinity });
    const events = emitter(this);
    const sync = this.#sync;
    this.#failures = new Failures({ store, t, compensate, leaseMs: o.leaseMs ?? 30000, events, sync });
    const wake = () => this.#passes.wake();
    this.#agent = new Agent({ store, t, net, handler, failures: this.#failures, events, done: wake });
    const scheduler = new Scheduler({
      store,
      t,
      concurrency,
      agent: this.#agent,
      failures: this.#failures,
      on: () => this.#passes.on,
      instanceId: () => this.instanceId,
      storeError: events.storeError,
    });
    this.#passes = new Passes({ pass: () => scheduler.pass(), busy: () => this.#agent.size, pollMs, storeError: events.storeError });
    // Connectivity is back: tasks that failed meanwhile are retried now, and a store that failed is tried at once.
    const online = () => {
      this.#passes.retryStore();
      this.retryNow().catch((error) => events.storeError(error));
      wake();
    };
    this.#listen = wakeups({ online, wake, sync });
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
    return this.#passes.started;
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
    this.#passes.wake();
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
    const { olderThan, states } = readAll(own(options), PURGE_OPTIONS);
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
    this.#agent.retried();
    const n = await retryDue(this.#store, this.#t, Date.now());
    if (n) this.#passes.wake();
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
    if (!this.#passes.started) {
      this.#listen('addEventListener');
      this.#passes.start();
    }
    return this;
  }

  /**
   * Stops claiming and sweeping, and resolves once the handlers in flight
   * have settled (each by its completeBy at the latest); no timer or
   * listener is left. A drain() in progress rejects with an AbortError.
   */
  async stop() {
    this.#listen('removeEventListener');
    await this.#passes.stop();
    await this.#agent.settled();
    // Runs that settled just now may have started a compensation.
    await this.#failures.settled();
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
    const next = await this.#passes.drain();
    await this.#failures.settled();
    return next;
  }
}
