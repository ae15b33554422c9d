// @ts-check
// The job of gate.run (js/engine/loop.js runs it): the caller's task, and
// whether its rejection counts against the target.
import { abortable } from '../hooks.js';

/**
 * The job of gate.run: one attempt is one call of `task`; a rejection is
 * retried (and counts against the target) unless `retryable` says false.
 * @param {(ctx: { signal?: AbortSignal }) => unknown} task
 * @param {((error: unknown) => unknown) | undefined} retryable
 * @returns {import('../engine/loop.js').Job}
 */
export const job = (task, retryable) => ({
  async attempt(call) {
    try {
      return { failed: false, value: await abortable(task({ signal: call.signal }), call.signal) };
    } catch (error) {
      call.alive();
      return { failed: true, error };
    }
  },
  judge(_call, o) {
    if (!o.failed) return 'success';
    try {
      o.hurt = retryable?.(o.error) !== false;
    } catch (thrown) {
      // (the target is told of the failure whatever `retryable` does; the call rejects with what it threw)
      [o.hurt, o.error] = [true, thrown];
      return 'hook-error';
    }
    return o.hurt ? '' : 'not-retryable';
  },
});
