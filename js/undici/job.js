// @ts-check
// The job of one request at undici's dispatcher (js/engine/loop.js's Job),
// and its lane: the plain schedule's (js/engine/schedule.js), which also
// lets go of an answer it retries (the loop's own drop cancels a Response
// body, not a dispatch's). An attempt is one dispatch with a handler of its
// own (js/undici/answer.js). The request is the drivers' model
// (js/request-model.js): the fetch job's request stages (the attempt
// header, the generated key) and idempotency rule are this job's too.
import { REFUSED_REQUEST } from '../gen/policy.js';
import { keyFor, attemptOf } from '../request-model.js';
import { idempotent } from '../policy.js';
import { judge } from '../engine/judge.js';
import { attemptSignal } from '../engine/signal.js';
import { Answer } from './answer.js';

/**
 * undici's codes of a request that did not fail on the network: aborted by
 * its caller, or refused (the core's list; and a body undici cannot send,
 * `ERR_INVALID_ARG_TYPE`, which fails the same on every try).
 */
const NOT_NETWORK = /^(?:UND_ERR_ABORTED|ABORT_ERR|UND_ERR_REQ_CONTENT_LENGTH_MISMATCH|ERR_INVALID_ARG_TYPE)$/;

/** @param {any} err */
const network = (err) => err?.name !== 'AbortError' && !NOT_NETWORK.test(err?.code) && !REFUSED_REQUEST.test(err?.code);

export class DispatchJob {
  /** The last attempt's answer (drained when the lane retries it). @type {Answer | undefined} */
  last;
  /** The last answer's status (for onDone). @type {number | undefined} */
  status;
  /** undici's aborts of the attempts not ended yet (one in flight, held, handed over, or draining). @type {Set<(why: unknown) => void>} */
  open = new Set();

  /**
   * @param {import('./index.js').Options} c
   * @param {import('./index.js').Dispatch} dispatch
   * @param {any} opts the request's options, as the caller dispatched them
   * @param {import('./headers.js').DispatchRequest} req the request (its headers flattened)
   * @param {any} handler the caller's
   * @param {AbortSignal} signal the call's (the caller's abort)
   * @param {import('../engine/loop.js').Lane} lane the plain schedule (paced by origin)
   */
  constructor(c, dispatch, opts, req, handler, signal, lane) {
    this.c = c;
    this.dispatch = dispatch;
    this.opts = opts;
    this.req = req;
    this.handler = handler;
    this.signal = signal;
    this.lane = lane;
    /** The generated idempotency key, the same on every attempt (the policy's rule, as the fetch job's). */
    this.key = keyFor(c, req);
    /** Whether it may be sent again (the policy's rule: its method, a key, or retryNonIdempotent). */
    this.idempotent = idempotent(req.facts(c, this.key));
  }

  /** @param {import('../engine/call.js').Call} call @param {number} delayMs */
  pass(call, delayMs) {
    return this.lane.pass(call, delayMs);
  }

  /**
   * The plain lane's decision; an answer retried is drained.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Verdict} v
   * @param {import('../engine/loop.js').Outcome} o
   */
  after(call, v, o) {
    const d = this.lane.after(call, v, o);
    if (!d.why) this.last?.drain();
    return d;
  }

  /** The last answer's status, for onDone. */
  about() {
    return this.status === undefined ? undefined : { status: this.status };
  }

  /**
   * Aborts the attempts still open with `why` (the caller's abort, the
   * call's error), all but `keep` (the answer handed over).
   * @param {unknown} why
   * @param {unknown} [keep]
   */
  end(why, keep) {
    for (const abort of this.open) if (abort !== keep) abort(why ?? new DOMException('the request ended', 'AbortError'));
  }

  /**
   * undici's options for attempt `k`: the request as the request stages
   * send it (the attempt header, the key), its body.
   * @param {number} k
   */
  options(k) {
    const m = attemptOf(this.c, this.key, this.req, k);
    return { ...this.opts, headers: m.headers, body: m.body };
  }

  /**
   * One dispatch: its outcome at the answer's headers, or its failure.
   * @param {import('../engine/call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<import('./answer.js').Settled>}
   */
  async attempt(call, n, signal) {
    const [sig, release, timeout] = attemptSignal(call, signal, false);
    /** @type {import('./answer.js').Settled} */
    const o = await new Promise((resolve) => {
      const a = (this.last = new Answer(this, sig, release, resolve));
      try {
        this.dispatch(this.options(n), a);
      } catch (error) {
        // (thrown before anything was sent: the request cannot be dispatched, trying again would not help)
        if (!a.settled) a.settle({ failed: true, error, network: false });
      }
    });
    this.status = o.status;
    if (!o.failed) return o;
    call.alive(); // (the caller's abort or the deadline: the call ends with its reason)
    return { ...o, network: o.network ?? (network(o.error) && (!timeout?.signal.aborted || this.c.retryOnTimeout)) };
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   */
  judge(call, o) {
    return judge(call, o, true, () => this.idempotent, this.req.replayable());
  }

  /** The outcome the call ends with: its answer is handed over (js/undici/request.js commits it). @param {any} o */
  result(o) {
    return o;
  }
}
