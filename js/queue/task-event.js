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
