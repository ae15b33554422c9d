// @ts-check
// The job of retry(fn) (js/engine/loop.js): one attempt is one call of the
// caller's function with its attempt number and the attempt's signal; any
// rejection is worth another attempt unless shouldRetry says no.
import { abortable } from '../hooks.js';
import { attemptSignal } from './signal.js';
import { judge } from './judge.js';

/**
 * @param {(ctx: { attempt: number, signal?: AbortSignal }) => unknown} fn
 * @returns {import('./loop.js').Job}
 */
export const task = (fn) => ({
  async attempt(call) {
    const [sig, release] = attemptSignal(call, false);
    try {
      return { failed: false, value: await (sig ? abortable(fn({ attempt: call.n, signal: sig }), sig) : fn({ attempt: call.n })) };
    } catch (error) {
      call.alive();
      return { failed: true, error, network: true };
    } finally {
      release();
    }
  },
  judge: (call, o) => judge(call, o, false, true, true),
});
