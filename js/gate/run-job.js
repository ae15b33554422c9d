// @ts-check
// The job of gate.run (js/engine/loop.js runs it): the caller's task, and
// whether its rejection counts against the target.
import { abortable } from '../hooks.js';
import { REFUSED_REQUEST } from '../gen/policy.js';

/** A success: the call ends with its value. */
const SUCCESS = Object.freeze({ why: 'success', hurt: false });

/** Not sent: a request fetch refused (its cause's code is one of the core's REFUSED_REQUEST_CODES). */
const NOT_SENT = Object.freeze({ why: 'not-retryable', hurt: false });

/**
 * The job of gate.run: one attempt is one call of `task`; a rejection is
 * retried (and counts against the target) unless `retryable` says false,
 * or it is a request fetch refused to send (`Expect: 100-continue` in
 * Node, say): it never reached the target, and would be refused again.
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
    if (REFUSED_REQUEST.test(/** @type {any} */ (o.error)?.cause?.code)) return NOT_SENT;
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
