// @ts-check
// The engine's job (js/engine/loop.js) of an event stream's connection: one
// attempt is one fetch of the stream's request (its `Last-Event-ID` the
// last event ID at that moment), judged by the policy (js/policy.js): a 200
// whose type is text/event-stream opens the stream; a network failure, a
// status of `retryOn`, a 429 or 503 naming a wait (the headers
// js/retry-after.js reads) is tried again; a 204 ends the stream for good
// (the server's "stop reconnecting"), and so does any other answer (a 200
// of another type, a 404, a 401…), as the standard fails the connection.
import { attemptSignal } from '../engine/signal.js';
import { serverWait } from '../retry-after.js';
import { advice, isNetworkError, verdict } from '../policy.js';

/** Opened. */
const OPENED = Object.freeze({ why: 'success', hurt: false });

/**
 * Whether an answer is an event stream (its type's essence).
 * @param {Response} res
 */
const eventStream = (res) => (res.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase() === 'text/event-stream';

/**
 * What the job needs of its stream.
 * @typedef {object} Source
 * @property {string} url
 * @property {Record<string, any>} c the options (`send`: the fetch function, or undefined for the global one)
 * @property {string} lastId the last event ID string
 */

export class StreamJob {
  /** @param {Source} src */
  constructor(src) {
    this.src = src;
  }

  /** fetch's init for the next attempt (its signal apart). */
  init() {
    const { c, lastId } = this.src;
    const headers = new Headers(c.headers);
    if (!headers.has('accept')) headers.set('accept', 'text/event-stream');
    if (lastId !== '') headers.set('last-event-id', lastId);
    /** @type {RequestInit} */
    const init = { method: c.method, headers, body: c.body };
    // (only when asked: workerd implements no `credentials`; fetch's default is the standard's own, same-origin)
    if (c.credentials) init.credentials = 'include';
    return init;
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {number} _n
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<import('../engine/loop.js').Outcome>}
   */
  async attempt(call, _n, signal) {
    const [sig, release] = attemptSignal(call, signal, true);
    try {
      const send = this.src.c.send ?? globalThis.fetch;
      const res = await send(this.src.url, { ...this.init(), signal: sig });
      const s = res.status;
      const h = res.headers;
      return s >= 400 ? { failed: false, res, status: s, hintMs: serverWait(h), advice: advice(h) } : { failed: false, res, status: s };
    } catch (error) {
      call.alive();
      return { failed: true, error, network: isNetworkError(error) };
    } finally {
      release();
    }
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   * @returns {import('../engine/loop.js').Verdict}
   */
  judge(call, o) {
    const s = o.status;
    if (!o.failed && s === 200 && eventStream(/** @type {Response} */ (o.res))) return OPENED;
    if (s === 204) return { why: 'no-content', hurt: false };
    const why = verdict({
      failed: o.failed,
      network: !!o.network,
      status: s,
      hintMs: o.hintMs,
      retryOn: /** @type {any} */ (call.c).retryOn,
      idempotent: true,
      replayable: true,
      advice: o.advice,
    });
    // (a 2xx or 3xx that is not an event stream is a success to the policy: to a stream, the end)
    return { why: why === 'success' ? 'not-retryable' : why, hurt: !why };
  }

  /**
   * What the call resolves with: why it ended and the last answer.
   * @param {import('../engine/loop.js').Outcome} o
   * @param {string} why
   */
  result(o, why) {
    return { why, res: o.res };
  }
}

/**
 * The message of a stream that ended for good on answer `res` (`why`: the
 * verdict's).
 * @param {string} why
 * @param {Response} res
 */
export function refusal(why, res) {
  const s = res.status;
  if (why === 'no-content') return 'the server answered 204 No Content: the stream is over';
  if (s === 200) return `the answer is not an event stream (Content-Type: ${res.headers.get('content-type') ?? 'none'})`;
  const retried = why === 'not-retryable' ? '' : ` (${why})`;
  return `the server answered ${s}${res.statusText ? ` ${res.statusText}` : ''}${retried}`;
}
