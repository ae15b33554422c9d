// @ts-check
// The task queue on Durable Objects, the object's side and a Worker's:
// TaskQueueObject (the object class that keeps a queue in its storage and
// runs it on its alarm) and enqueueTo (a Worker's enqueue through it).
// workerd build only, as durable-store.js.
import { own } from '../options.js';
import { DurableObject } from 'cloudflare:workers';
import { STORE_OPS, DurableObjectStore, objectOf } from './durable-store.js';
import { PermanentError } from './errors.js';
import { checkId } from './record.js';
import { TaskQueue } from './task-queue.js';

/**
 * Enqueues `payload` in the TaskQueueObject named `options.name` (default
 * 'default') of `namespace`; resolves with the task id once the object
 * stored it. The other options are enqueue's (`id`, `notBefore`).
 * @param {any} namespace
 * @param {unknown} payload
 * @param {{ id?: string, notBefore?: number | Date, name?: string }} [options]
 * @returns {Promise<string>}
 */
export function enqueueTo(namespace, payload, options) {
  const { name, ...rest } = own(options);
  // (checked here too: the object would see the id after the RPC's encoding)
  if (rest.id !== undefined) checkId(rest.id);
  return objectOf(namespace, name).enqueue(payload, rest);
}

/**
 * A Durable Object that keeps a task queue in its storage and runs it on its
 * alarm: extend it with `handler(task, context)` (and an `options` property
 * with the queue's options: leaseMs, maxFailures, backoff, maxRetentionMs,
 * concurrency, onCompensate…), export the subclass and bind it. Workers
 * enqueue through `enqueueTo` (or `enqueue` on its stub); Workers that also
 * process use `DurableObjectStore.remote`. Nothing polls: the alarm is
 * always at the next due time (a retry, a delayed task, a lease to sweep).
 */
export class TaskQueueObject extends DurableObject {
  /** @type {DurableObjectStore | undefined} */
  #store;
  /** @type {TaskQueue | undefined} */
  #queue;

  /**
   * @param {any} ctx
   * @param {any} env
   */
  constructor(ctx, env) {
    super(ctx, env);
    // An alarm lost while the object was down (or never set) is set again.
    ctx.blockConcurrencyWhile(() => this.store.rearm(true));
  }

  /** The object's store. */
  get store() {
    return (this.#store ??= new DurableObjectStore(this.ctx.storage, { alarms: true }));
  }

  /** The object's queue (made on first use from `options`; never started: alarm() drains it). */
  get queue() {
    if (!this.#queue) {
      // (`options`: a field or a getter of the subclass)
      const options = /** @type {any} */ (this).options;
      this.#queue = new TaskQueue({ ...options, store: this.store, handler: (task, context) => this.handler(task, context) });
      // A store error or a malformed record (reported once, stepped past) goes to the object's log.
      this.#queue.addEventListener('storeerror', (e) => console.error('TaskQueueObject storeerror:', /** @type {any} */ (e).error));
    }
    return this.#queue;
  }

  /**
   * The work of one task: override it (resolve = processed, reject = retried,
   * PermanentError = error at once). This one refuses every task.
   * @param {any} _task
   * @param {any} _context
   * @returns {unknown}
   */
  handler(_task, _context) {
    throw new PermanentError('TaskQueueObject has no handler: extend it with handler(task, context)');
  }

  /**
   * RPC: enqueue's (`id`, `notBefore`); resolves with the id.
   * @param {unknown} payload
   * @param {{ id?: string, notBefore?: number | Date }} [options]
   */
  enqueue(payload, options) {
    return this.queue.enqueue(payload, options);
  }

  /**
   * RPC: the record of task `id`.
   * @param {string} id
   */
  get(id) {
    return this.store.get(id);
  }

  /**
   * RPC: purge's (`olderThan`, `states`); resolves with how many records were deleted.
   * @param {{ olderThan?: number, states?: ('processed' | 'error')[] }} [options]
   */
  purge(options) {
    return this.queue.purge(options);
  }

  /**
   * RPC: one TaskStore method on the object's store (DurableObjectStore.remote calls it).
   * @param {string} op
   * @param {unknown[]} args
   */
  taskStore(op, args) {
    if (!STORE_OPS.includes(op)) throw new TypeError(`op must be one of ${STORE_OPS.join(', ')}`);
    return /** @type {any} */ (this.store)[op](...args); // (an op of STORE_OPS, its arguments as sent)
  }

  /** Runs every task due now (and those that fall due meanwhile), then sets the alarm to the next due time. */
  async alarm() {
    await this.queue.drain();
    await this.store.rearm();
  }
}
