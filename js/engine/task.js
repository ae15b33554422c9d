// @ts-check
// The job of retry(fn) (js/engine/loop.js): one attempt is one call of the
// caller's function with its attempt number and the attempt's signal; any
// rejection is worth another attempt unless shouldRetry says no (or the
// server's advice the error carries, or retryOnTimeout: false for a timeout
// of timeoutMs). A wait the error carries (`retryAfterMs`, or its headers:
// the OpenAI, Anthropic and Discord SDKs' errors) is honoured like a
// server's; its `status` is told to the hooks and picks the throttling base.
import { abortable } from '../hooks.js';
import { carried } from '../retry-after.js';
import { advice } from '../policy.js';
import { attemptSignal } from './signal.js';
import { judge } from './judge.js';

/** A task is always idempotent to retry (judge asks: one function for every call, not one per attempt). */
const always = () => true;

/**
 * The job of one retry(fn) call. A class, not an object of closures: its
 * methods are made once, not per call (measured: retry(fn) of a function
 * that resolves at once, ns per call).
 */
class Task {
  /** @param {(ctx: { attempt: number, signal?: AbortSignal }) => unknown} fn */
  constructor(fn) {
    this.fn = fn;
  }

  /**
   * @param {import('./call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   */
  async attempt(call, n, signal) {
    const [sig, release, timeout] = attemptSignal(call, signal, false);
    const fn = this.fn;
    try {
      return { failed: false, value: await (sig ? abortable(fn({ attempt: n, signal: sig }), sig) : fn({ attempt: n })) };
    } catch (error) {
      call.alive();
      const [hintMs, h] = carried(error);
      const status = /** @type {any} */ (error)?.status;
      const network = !timeout?.signal.aborted || /** @type {any} */ (call.c).retryOnTimeout;
      return { failed: true, error, network, hintMs, advice: h && advice(h), status: Number.isInteger(status) ? status : undefined };
    } finally {
      release();
    }
  }

  /**
   * @param {import('./call.js').Call} call
   * @param {import('./loop.js').Outcome} o
   */
  judge(call, o) {
    return judge(call, o, false, always, true);
  }
}

/**
 * @param {(ctx: { attempt: number, signal?: AbortSignal }) => unknown} fn
 * @returns {import('./loop.js').Job}
 */
export const task = (fn) => new Task(fn);
