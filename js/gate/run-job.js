// @ts-check
// The job of gate.run (js/engine/loop.js runs it): the caller's task, and
// whether its rejection counts against the target.
import { abortable } from '../hooks.js';

/** A success: the call ends with its value. */
const SUCCESS = Object.freeze({ why: 'success', hurt: false });

/**
 * The job of gate.run: one attempt is one call of `task`; a rejection is
 * retried (and counts against the target) unless `retryable` says false.
 * @param {(ctx: { signal?: AbortSignal }) => unknown} task
 * @param {((error: unknown) => unknown) | undefined} retryable
 * @returns {import('../engine/loop.js').Job}
 */
export const job = (task, retryable) => ({
  async attempt(call, _n, signal) {
    try {
      return { failed: false, value: await abortable(task({ signal }), signal) };
    } catch (error) {
      call.alive();
      return { failed: true, error };
    }
  },
  judge(_call, o) {
    if (!o.failed) return SUCCESS;
    let hurt;
    try {
      hurt = retryable?.(o.error) !== false;
    } catch (thrown) {
      // (the target is told of the failure whatever `retryable` does; the call rejects with what it threw)
      return { why: 'hook-error', hurt: true, error: thrown };
    }
    return { why: hurt ? '' : 'not-retryable', hurt };
  },
});
