// A task's failure as a queue writes it, whoever found it (the agent: the
// handler rejected; the supervisor: a lease expired, or the retention
// passed): the record, its event (`retry` or `error`), and for `error`
// the compensation (onCompensate), which runs beside the passes and is
// bounded by leaseMs.
import { w } from '../wasm.js';
import { DUE_EXPIRE } from '../gen/boundary.js';
import { within } from './deadline.js';
import { COMPENSATE_LATE, describe, timeout } from './errors.js';
import { clone } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */
/** @typedef {import('../../types/queue/index.js').TaskEvent['reason']} Reason */

/**
 * @typedef {object} Parts what a failure is written with
 * @property {import('./record.js').TaskStore} store
 * @property {import('./transitions.js').Transitions} t
 * @property {((task: TaskRecord, error: unknown) => unknown) | undefined} compensate onCompensate
 * @property {number} leaseMs the compensation's bound
 * @property {ReturnType<typeof import('./task-event.js').emitter>} events
 * @property {{ register(): void } | undefined} sync Background Sync (with a syncTag): asked for after a retry is written
 */

export class Failures {
  #q;
  #compensating = new Set(); // promises of onCompensate runs (each settles within leaseMs)

  /** @param {Parts} parts */
  constructor(parts) {
    this.#q = parts;
  }

  /** Resolves once the compensations under way settled (or timed out). */
  settled() {
    return Promise.all(this.#compensating);
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
  async fail(r, n, error, now, reason) {
    const { t, store } = this.#q;
    if (n.state === 'pending' && t.step(w.queue_due, n, now) === DUE_EXPIRE) {
      n = { .../** @type {TaskRecord} */ (t.step(w.queue_expire, n, now)), version: n.version };
      reason = 'maxRetention';
    }
    n.lockedBy = null;
    n.lastError = describe(error);
    if (!(await store.swap(r, n))) return;
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
    const { compensate, events } = this.#q;
    if (n.state !== 'error') {
      this.#q.sync?.register();
      return events.emit('retry', { task: n, error, delayMs: n.nextAttemptAt - now });
    }
    if (!compensate) return events.emit('error', { task: n, error, reason });
    const task = clone(n);
    const done = within(
      this.#q.leaseMs,
      () => compensate(task, error),
      () => ({ error: timeout(COMPENSATE_LATE) }),
      ({ error: compensationError }) => {
        this.#compensating.delete(done);
        events.emit('error', { task: n, error, compensationError, reason });
      },
    );
    this.#compensating.add(done);
  }
}
