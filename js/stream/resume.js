// @ts-check
// Resuming a download whose body broke (resume: true): the rest is asked
// for with `Range: bytes=N-` and `If-Range` (the first answer's strong
// validator: its ETag, else a Last-Modified that is strong). A resume is
// attempts of the call itself (js/engine/loop.js, started from the break):
// the break is a failed attempt its lane decides on (its wait, told to
// onRetry; the schedule's end; the budget; the gate), and its deadline
// holds from its start, across resumes. Only a 206 whose Content-Range
// starts at N and ends at the first answer's length, with the same
// validator, is spliced in; any other end (another status, another range,
// another validator, the attempts or the deadline spent) errors the body
// with a ResumeError, so bytes of two versions, or an error page, never
// meet the body.
import { drive } from '../engine/loop.js';
import { scheduled } from '../engine/schedule.js';
import { isNetworkError } from '../policy.js';
import { FetchJob } from '../fetch/request.js';

const RANGE = /^bytes (\d+)-(\d+)\/(\d+)$/;

/**
 * Whether a Last-Modified is a strong validator (RFC 9110 §8.8.2.2): at
 * least a second before the answer's Date (a resource changed within the
 * second it was sent may have two versions under one date).
 * @param {Headers} h
 */
function strongDate(h) {
  const lm = Date.parse(h.get('last-modified') ?? '');
  const date = Date.parse(h.get('date') ?? '');
  return date - lm >= 1000;
}

/**
 * Whether `res` (the call's answer to `job`'s request) can be resumed: a
 * GET answered 200, its body not re-encoded, with a strong validator
 * (RFC 9110 §13.1.5: an If-Range never carries a weak ETag, and a date
 * only when there is no ETag and the date is strong).
 * @param {Response} res
 * @param {FetchJob} job
 * @returns {string | undefined} the If-Range validator
 */
export function validator(res, job) {
  const method = String(job.init?.method ?? (job.isReq ? job.input.method : 'GET')).toUpperCase();
  const h = res.headers;
  const etag = h.get('etag');
  const enc = h.get('content-encoding');
  if (method !== 'GET' || res.status !== 200 || (enc && enc !== 'identity')) return;
  if (etag) return etag.startsWith('W/') ? undefined : etag;
  return strongDate(h) ? /** @type {string} */ (h.get('last-modified')) : undefined;
}

/** Why the body could not be resumed, with the failure that broke it as its cause. */
class ResumeError extends Error {
  name = 'ResumeError';
}

/** The request for the rest of the body, judged as a resume: only a matching 206 is its result. */
class RangeJob extends FetchJob {
  /**
   * @param {FetchJob} job the call's
   * @param {number} from
   * @param {string} tag the If-Range validator
   * @param {number} total the body's length (NaN: unknown)
   */
  constructor(job, from, tag, total) {
    super(job.c, job.send, job.input, job.init);
    const h = (this.changed = new Headers(job.changed ?? job.headers));
    h.set('range', `bytes=${from}-`);
    h.set('if-range', tag);
    this.key = job.key;
    // (the call's request stages: failover's, to the endpoint that served the body)
    this.stages = job.stages;
    this.from = from;
    this.tag = tag;
    this.total = total;
  }

  /** Why a 206 may not be spliced in ('' when it may). @param {Response} res */
  mismatch(res) {
    const h = res.headers;
    const m = RANGE.exec(h.get('content-range') ?? '');
    const total = m ? +m[3] : NaN;
    if (!m || +m[1] !== this.from || +m[2] !== total - 1 || (!Number.isNaN(this.total) && total !== this.total)) {
      return `Content-Range ${h.get('content-range')} is not bytes ${this.from}-/${this.total}`;
    }
    const same = this.tag.startsWith('"') ? h.get('etag') === this.tag : h.get('last-modified') === this.tag;
    return same ? '' : 'the validator changed';
  }

  /**
   * A failure, or a status worth a retry, as any attempt of the call; a 206
   * ends it (spliced if it matches); any other answer ends it too.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   */
  judge(call, o) {
    const s = /** @type {number} */ (o.status);
    if (o.failed || (s !== 206 && this.c.retryOn.has(s))) return super.judge(call, o);
    return { why: s === 206 ? 'success' : 'not-retryable', hurt: false };
  }

  /**
   * The 206 to splice in, or a ResumeError (its body let go): why the
   * answer the resume ended on is not the rest of the body.
   * @param {import('../engine/loop.js').Outcome} o
   * @param {string} why
   */
  result(o, why) {
    const res = /** @type {Response} */ (o.res);
    const wrong =
      res.status === 206 ? this.mismatch(res) : `the server answered ${res.status}, not 206${why === 'not-retryable' ? '' : ` (${why})`}`;
    if (!wrong) return res;
    res.body?.cancel().catch(() => {});
    throw new ResumeError(`cannot resume at byte ${this.from}: ${wrong}`);
  }

  /**
   * The caller's abort as it is; any other failure (the attempts, the
   * deadline, the budget spent; a network failure) as a ResumeError.
   * @param {import('../engine/loop.js').Outcome} o
   * @param {string} why
   */
  failure(o, why) {
    return why === 'aborted' ? o.error : new ResumeError(`cannot resume at byte ${this.from}: ${why}`, { cause: o.error });
  }
}

/**
 * The check of a resumed body's clean end (js/stream/body.js `finish`): a
 * 206 may name the rest of the body in its Content-Range and end, cleanly,
 * before it; the body is then not whole, and errors.
 * @param {Response} res the first answer
 * @returns {(offset: number) => void}
 */
export function finisher(res) {
  const total = +(res.headers.get('content-length') ?? NaN);
  return (offset) => {
    if (!Number.isNaN(total) && offset !== total) {
      throw new ResumeError(`the resumed body ended at byte ${offset} of ${total}: an answer was shorter than its Content-Range`);
    }
  };
}

/**
 * The resume function of a body (js/stream/body.js): the rest of the body
 * from `offset`, after a failure `error`, by attempts of the call that
 * answered; or a rejection: `error` itself when it was not a network
 * failure or a stall, `signal`'s reason once it aborted (the body was
 * cancelled), else a ResumeError.
 * @param {import('../engine/call.js').Call} call the call that answered
 * @param {FetchJob} job its job
 * @param {string} tag
 * @param {Response} res the first answer
 * @returns {(offset: number, error: unknown, signal: AbortSignal) => Promise<ReadableStreamDefaultReader<Uint8Array>>}
 */
export function resumer(call, job, tag, res) {
  const total = +(res.headers.get('content-length') ?? NaN);
  const c = job.c;
  return async (offset, error, signal) => {
    if (!(isNetworkError(error) || (error instanceof DOMException && error.name === 'TimeoutError'))) throw error;
    call.reopen(signal);
    const lane = c.gate ? c.gate.lane(call, job.input, job.init) : scheduled;
    // (the break is a failed attempt of the call: worth another, as a network failure is)
    const broke = Object.freeze({ failed: true, error, network: true });
    const r = /** @type {Response} */ (await drive(call, new RangeJob(job, offset, tag, total), lane, broke));
    return /** @type {ReadableStream<Uint8Array>} */ (r.body).getReader();
  };
}
