// @ts-check
// The fetch driver's job (js/engine/loop.js): one attempt is one fetch of
// the request as it stands (its headers changed by beforeRetry, the
// idempotency key and the attempt header set), judged by the policy
// (js/policy.js) and the caller's shouldRetry. Whether the request may be
// retried at all (its method, its key, its body) is judged on the request
// actually sent, attempt by attempt: a beforeRetry that turns a GET into a
// POST, or drops the caller's key, makes it non-idempotent from then on.
// The request is the drivers' one model (js/request-model.js): its facts,
// its key and its request stages are the undici job's too.
import { abortable } from '../hooks.js';
import { serverWait, spentWait } from '../retry-after.js';
import { advice, isNetworkError, honoured, idempotent } from '../policy.js';
import { RequestModel, keyFor, attemptOf } from '../request-model.js';
import { judge } from '../engine/judge.js';
import { attemptSignal } from '../engine/signal.js';

/**
 * How long a success's headers ask the target's next calls to hold (`pace`):
 * the wait until the reset when no request remains, as a server-named wait
 * is honoured: over `maxRetryAfterMs` it is not waited (the next call goes,
 * and the server's answer decides), unless `retryAfterOverMax: 'clamp'`
 * (then `maxRetryAfterMs`). The fetch driver's and the undici entry's.
 * @param {{ maxRetryAfterMs: number, clamp: boolean }} c
 * @param {{ get(name: string): string | null }} h
 */
export function paceMs(c, h) {
  const ms = honoured(spentWait(h), c.maxRetryAfterMs, c.clamp);
  // (undefined, no wait named, is not <= anything)
  return /** @type {number} */ (ms) <= c.maxRetryAfterMs ? ms : undefined;
}

/**
 * A request stage: fetch's arguments for attempt `n`, as a feature sends
 * them instead (failover's endpoint; a hedge's cache mode).
 * @typedef {(input: any, init: RequestInit | undefined, n: number) => [any, RequestInit | undefined]} Stage
 */

/**
 * The job of one fetch call (the engine's Job: attempt, judge, before).
 * The request as it stands: `input`/`init` (replaced when beforeRetry
 * returns a Request) and the headers beforeRetry set over them, read as the
 * drivers' model (`model()`); each attempt sends it through the model's
 * request stages (the attempt header, the key), then through the stages of
 * the features in use (`use`), in order.
 */
export class FetchJob {
  /** Headers changed by beforeRetry (over the request's). @type {Headers | undefined} */
  changed;
  /** The request stages, in order (`use`). @type {Stage[]} */
  stages = [];

  /**
   * @param {import('./options.js').Config} c
   * @param {typeof fetch} send
   * @param {any} input
   * @param {RequestInit | undefined} init
   * @param {boolean} [paces] a success's pacing is read (a client or a gate paces the target)
   */
  constructor(c, send, input, init, paces = false) {
    this.c = c;
    this.send = send;
    /** @type {any} */
    this.input = input;
    this.init = init;
    this.paces = paces;
    this.isReq = input instanceof Request;
    this.headers = init?.headers ?? (this.isReq ? input.headers : undefined);
    // (a bad header throws here fetch's own TypeError, and nothing is sent)
    /** The generated idempotency key, the same on every attempt (the policy's rule: a request not retryable by its method, without a key of its own). */
    this.key = keyFor(c, this.model());
    this.body = this.model().replayable();
    // Only when there is a hook: a call without one builds no Request per retry.
    if (!c.beforeRetry) /** @type {any} */ (this).before = undefined;
  }

  /**
   * Adds a request stage (a feature's: failover's endpoint), after those
   * already there.
   * @param {Stage} stage
   */
  use(stage) {
    this.stages.push(stage);
  }

  /** The request as it stands (beforeRetry's headers over its own), as the drivers' model. */
  model() {
    const o = this.init;
    return new RequestModel(o?.method ?? (this.isReq ? this.input.method : undefined), this.changed ?? this.headers, o?.body);
  }

  /** Whether the request as it stands may be sent again (the policy's rule on its facts: its method, a key, or retryNonIdempotent). */
  idempotent() {
    return idempotent(this.model().facts(this.c, this.key));
  }

  /**
   * fetch's arguments for attempt `k` (its headers, and `sig` unless it is `signal`, the one the request carries).
   * @param {number} k
   * @param {AbortSignal | undefined} sig
   * @param {AbortSignal | undefined} signal
   * @returns {[any, RequestInit | undefined]}
   */
  args(k, sig, signal) {
    const { c, key } = this;
    let o = this.init;
    // (the request stages: the attempt header, the key; headers beforeRetry changed)
    if (key || c.attemptHeader || this.changed) o = { ...o, headers: attemptOf(c, key, this.model(), k).headers };
    if (sig !== signal) o = { ...o, signal: sig };
    o = this.fed(o);
    let input = this.target();
    for (const stage of this.stages) [input, o] = stage(input, o, k);
    return [input, o];
  }

  /**
   * The attempt's init with a body of the job's own (the stream entry's), before the request stages.
   * @param {RequestInit | undefined} o
   */
  fed(o) {
    return o;
  }

  /** The input of one attempt: a Request is cloned (its body tee'd; the stream entry bounds it, js/stream/job.js). */
  target() {
    return this.isReq ? this.input.clone() : this.input;
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal the attempt's (the caller's; a hedge racer's own)
   * @returns {Promise<import('../engine/loop.js').Outcome>}
   */
  async attempt(call, n, signal) {
    const [sig, release, timeout] = attemptSignal(call, signal, true);
    try {
      // (called as a plain function: workerd's fetch refuses another `this`)
      const send = this.send;
      // (compared with the signal the request carries: a hedge's racer has its own, js/fetch/hedge.js)
      const own = this.init?.signal ?? (this.isReq ? this.input.signal : undefined);
      const p = send(...this.args(n, sig, own));
      const res = await (sig === own ? p : abortable(p, sig));
      const s = res.status;
      // (the headers are read when needed only: a getter of fetch's, not free)
      return s < 400
        ? { failed: false, res, status: s, pace: this.paces ? paceMs(this.c, res.headers) : undefined }
        : { failed: false, res, status: s, hintMs: serverWait(res.headers), advice: advice(res.headers) };
    } catch (error) {
      call.alive();
      return { failed: true, error, network: timeout?.signal.aborted ? this.c.retryOnTimeout : isNetworkError(error) };
    } finally {
      release();
    }
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   */
  judge(call, o) {
    return judge(call, o, true, () => this.idempotent(), this.body);
  }

  /**
   * beforeRetry: may swap the request, or change its headers for this and later attempts.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   * @returns {Promise<void>}
   */
  async before(call, o) {
    const signal = call.signal;
    const request = new Request(...this.args(call.n + 1, undefined, signal));
    const info = { attempt: call.n + 1, request, status: o.status, error: o.error, response: o.res, signal: signal ?? call.ds };
    const r = await abortable(/** @type {Function} */ (this.c.beforeRetry)(info), signal, call.ds);
    if (r instanceof Request) {
      [this.input, this.init, this.isReq, this.headers, this.changed] = [r, signal && { signal }, true, r.headers, undefined];
    } else if (r !== undefined) {
      if (typeof r !== 'object' || r === null) throw new TypeError('beforeRetry must return a Request, headers or undefined');
      const changed = (this.changed = new Headers(this.changed ?? this.headers));
      new Headers(/** @type {HeadersInit} */ (r)).forEach((v, k) => {
        changed.set(k, v);
      });
    }
  }
}
