import { clone } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

/**
 * The event of `processed`, `retry` and `error`: the task record after the
 * transition, and what caused it (for `error`, the rule that ended the task:
 * `reason` 'permanent', 'maxFailures' or 'maxRetention').
 */
export class TaskEvent extends Event {
  /**
   * @param {string} type
   * @param {any} init `{ task, error, delayMs, compensationError, reason }` (any: types/queue gives the class Event's constructor)
   */
  constructor(type, init) {
    super(type);
    this.task = init.task;
    this.error = init.error;
    this.delayMs = init.delayMs;
    this.compensationError = init.compensationError;
    this.reason = init.reason;
  }
}

/**
 * The events a queue raises, on `target` (the TaskQueue): `emit` a task's
 * (a copy of its record as written), `storeError` a `storeerror` (the
 * store's error, and the record it concerns if any: a task, or a malformed record).
 * @param {EventTarget} target
 */
export const emitter = (target) => ({
  /**
   * @param {string} type
   * @param {{ task: TaskRecord, error?: unknown, delayMs?: number, compensationError?: unknown, reason?: string }} init
   */
  emit: (type, init) => void target.dispatchEvent(new TaskEvent(type, { ...init, task: clone(init.task) })),
  /**
   * @param {unknown} error
   * @param {unknown} [task]
   */
  storeError: (error, task) => void target.dispatchEvent(new TaskEvent('storeerror', { task, error })),
});
