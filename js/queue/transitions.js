// A task's transitions, which the Rust core computes (core/src/queue.rs, its
// wasm exports in src/queue.rs): when a task may be claimed, what a failure
// does, the retry delay, the failure threshold, the retention.
import { own, readAll } from '../options.js';
import { ENQUEUE_OPTIONS } from './options.js';
import { w, mem, write, record, check, entropy, OPTS, OUT } from '../wasm.js';
import {
  ALL_MESSAGES,
  DUE_EXPIRE,
  E_MAX_RETENTION_MS,
  QUEUE,
  SCHEDULE,
  TASK_COMPLETE_BY,
  TASK_FAILURE_COUNT,
  TASK_NEXT_ATTEMPT_AT,
  TASK_STATE,
  TASK_STATES,
} from '../gen/boundary.js';
import { randomId, taskSeed } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

/**
 * The transitions of one queue's tasks, from its options. The policy (the
 * retry schedule, leaseMs, maxFailures, maxRetentionMs) is checked at
 * construction and kept as the record every transition is computed from.
 * Each task carries its own seed: a given one makes each task's a hash of it
 * and the task id.
 */
export class Transitions {
  /** @param {any} o the queue's options */
  constructor(o) {
    const b = own(o.backoff, 'backoff');
    write(b, SCHEDULE, () => 0);
    write(o, QUEUE);
    this.rec = record(QUEUE);
    // (not a field of the record, which the small module shares: an argument of every call)
    const retention = o.maxRetentionMs ?? Infinity;
    if (typeof retention !== 'number') throw new TypeError(ALL_MESSAGES[E_MAX_RETENTION_MS]);
    check(w.queue_check(retention), ALL_MESSAGES);
    this.retention = retention;
    /** @type {number | undefined} */
    this.seed = b.seed;
  }

  /**
   * The core's transition `f` of record `r` at `now` (w.queue_due answers a
   * number: DUE_WAIT, DUE_CLAIM, DUE_SWEEP, DUE_EXPIRE); the new record, or
   * undefined when the transition is not allowed from its state.
   * @param {(state: number, failures: number, next: number, completeBy: number, seed: number, createdAt: number, retention: number, now: number) => number} f
   * @param {TaskRecord} r
   * @param {number} now
   * @returns {number | TaskRecord | undefined}
   */
  step(f, r, now) {
    mem().set(this.rec, OPTS);
    const code = f(TASK_STATES.indexOf(r.state), r.failureCount, r.nextAttemptAt, r.completeBy, r.seed, r.createdAt, this.retention, now);
    if (f === w.queue_due || !code) return f === w.queue_due ? code : undefined;
    const m = mem();
    return {
      ...r,
      state: /** @type {TaskRecord['state']} */ (TASK_STATES[m[OUT + TASK_STATE]]),
      failureCount: m[OUT + TASK_FAILURE_COUNT],
      nextAttemptAt: m[OUT + TASK_NEXT_ATTEMPT_AT],
      completeBy: m[OUT + TASK_COMPLETE_BY],
      version: r.version + 1,
    };
  }

  /**
   * The record of a new task from enqueue's options (`id`, `notBefore`):
   * pending, due now or at `notBefore` (a time in the past is now: the task
   * keeps its place among those due). A task that would expire before it is
   * due is refused.
   * @param {unknown} payload
   * @param {Record<string, any>} o from `own`
   */
  newTask(payload, o) {
    const { id = `${Date.now().toString(36)}-${randomId()}`, notBefore: at } = readAll(o, ENQUEUE_OPTIONS);
    const now = Date.now();
    /** @type {TaskRecord} */
    const r = {
      id,
      payload,
      state: 'pending',
      lockedBy: null,
      completeBy: 0,
      failureCount: 0,
      nextAttemptAt: Math.max(now, at ?? now),
      createdAt: now,
      seed: this.seed === undefined ? entropy() : taskSeed(this.seed, id),
      version: 0,
      lastError: null,
    };
    if (this.step(w.queue_due, r, now) === DUE_EXPIRE) throw new RangeError('notBefore must be within maxRetentionMs of now');
    return r;
  }
}
