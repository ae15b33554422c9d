// @ts-check
// The fetch driver's job (js/engine/loop.js): one attempt is one fetch of
// the request as it stands (its headers changed by beforeRetry, the
// idempotency key and the attempt header set), judged by the policy
// (js/policy.js) and the caller's shouldRetry. Whether the request may be
// retried at all (its method, its key, its body) is judged on the request
// actually sent, attempt by attempt: a beforeRetry that turns a GET into a
// POST, or drops the caller's key, makes it non-idempotent from then on.
import { abortable } from '../hooks.js';
import { serverWait } from '../retry-after.js';
import { isNetworkError, replayable } from '../policy.js';
import { judge } from '../engine/judge.js';
import { attemptSignal } from '../engine/signal.js';

/**
 * The job of one fetch call.
 * @param {import('./options.js').Config} c
 * @param {typeof fetch} send
 * @param {any} input
 * @param {RequestInit | undefined} init
 */
export function request(c, send, input, init) {
  let isReq = input instanceof Request;
  /** Headers changed by beforeRetry (over the request's). @type {Headers | undefined} */
  let changed;
  let headers = init?.headers ?? (isReq ? input.headers : undefined);
  // (a bad header throws here fetch's own TypeError, and nothing is sent)
  const keyed = () => new Headers(changed ?? headers).has('idempotency-key');
  const key = c.idempotencyKey && !keyed() ? crypto.randomUUID() : undefined;
  const body = replayable(init?.body);
  /** Whether the request as it stands may be sent again. */
  const idempotent = () =>
    c.methods.has(String(init?.method ?? (isReq ? input.method : 'GET')).toUpperCase()) || c.retryNonIdempotent || !!key || keyed();

  /**
   * fetch's arguments for attempt `k` (its headers, and `sig`).
   * @param {number} k
   * @param {AbortSignal | undefined} sig
   * @param {AbortSignal | undefined} signal the caller's
   * @returns {[any, RequestInit | undefined]}
   */
  const args = (k, sig, signal) => {
    let o = init;
    if (key || c.attemptHeader || changed) {
      const hh = new Headers(changed ?? headers);
      if (c.attemptHeader) hh.set(c.attemptHeader, `attempt=${k}${c.max < Infinity ? `; max=${c.max}` : ''}`);
      if (key) hh.set('idempotency-key', key);
      o = { ...o, headers: hh };
    }
    if (sig !== signal) o = { ...o, signal: sig };
    return [isReq ? input.clone() : input, o];
  };

  /** @type {import('../engine/loop.js').Job} */
  return {
    async attempt(call) {
      const [sig, release, timeout] = attemptSignal(call, true);
      try {
        const p = send(...args(call.n, sig, call.signal));
        const res = await (sig === call.signal ? p : abortable(p, sig));
        return { failed: false, res, status: res.status, hintMs: res.status >= 400 ? serverWait(res.headers) : undefined };
      } catch (error) {
        call.alive();
        return { failed: true, error, network: !!timeout?.signal.aborted || isNetworkError(error) };
      } finally {
        release();
      }
    },

    judge: (call, o) => judge(call, o, true, idempotent(), body),

    /** beforeRetry: may swap the request, or change its headers for this and later attempts. */
    before:
      c.beforeRetry &&
      (async (call, o) => {
        const signal = call.signal;
        const request = new Request(...args(call.n + 1, undefined, signal));
        const info = { attempt: call.n + 1, request, status: o.status, error: o.error, response: o.res, signal: signal ?? call.ds };
        const r = await abortable(/** @type {Function} */ (c.beforeRetry)(info), signal, call.ds);
        if (r instanceof Request) {
          [input, init, isReq, headers] = [r, signal && { signal }, true, r.headers];
          changed = undefined;
        } else if (r !== undefined) {
          if (typeof r !== 'object' || r === null) throw new TypeError('beforeRetry must return a Request, headers or undefined');
          changed = new Headers(changed ?? headers);
          new Headers(/** @type {HeadersInit} */ (r)).forEach((v, k) => {
            changed?.set(k, v);
          });
        }
      }),
  };
}
