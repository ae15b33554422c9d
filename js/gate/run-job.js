// @ts-check
// The job of gate.run (js/engine/loop.js runs it): the caller's task, and
// whether its rejection counts against the target.
import { abortable } from '../hooks.js';

/**
 * The job of gate.run: one attempt is one call of `task`; a rejection is
 * retried (and counts against the target) unless `retryable` says false.
 * A class, so that its methods are made once, not per call.
 */
class RunJob {
  /**
   * @param {(ctx: { signal?: AbortSignal }) => unknown} task
   * @param {((error: unknown) => unknown) | undefined} retryable
   */
  constructor(task, retryable) {
    this.task = task;
    this.retryable = retryable;
  }

  /** @param {import('../engine/call.js').Call} call */
  async attempt(call) {
    try {
      return { failed: false, value: await abortable(this.task({ signal: call.signal }), call.signal) };
    } catch (error) {
      call.alive();
      return { failed: true, error };
    }
  }

  /**
   * @param {import('../engine/call.js').Call} _call
   * @param {import('../engine/loop.js').Outcome} o
   */
  judge(_call, o) {
    if (!o.failed) return 'success';
    try {
      o.hurt = this.retryable?.(o.error) !== false;
    } catch (thrown) {
      // (the target is told of the failure whatever `retryable` does; the call rejects with what it threw)
      [o.hurt, o.error] = [true, thrown];
      return 'hook-error';
    }
    return o.hurt ? '' : 'not-retryable';
  }
}

/**
 * @param {(ctx: { signal?: AbortSignal }) => unknown} task
 * @param {((error: unknown) => unknown) | undefined} retryable
 * @returns {import('../engine/loop.js').Job}
 */
export const job = (task, retryable) => new RunJob(task, retryable);
