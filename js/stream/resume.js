// @ts-check
// Resuming a download whose body broke (resume: true): the rest is asked
// for with `Range: bytes=N-` and `If-Range` (the first answer's strong ETag,
// else its Last-Modified), through the one loop (js/engine/loop.js) with
// the call's own options: its schedule goes on where the call left it (its
// attempts count), its deadline, budget and gate apply. Only a 206 whose
// Content-Range starts at N and ends at the first answer's length, with the
// same validator, is spliced in; anything else (a 200: the resource
// changed; another range; another validator) errors the body, so bytes of
// two versions never meet.
import { drive, Call } from '../engine/loop.js';
import { scheduled } from '../engine/schedule.js';
import { isNetworkError } from '../policy.js';
import { FetchJob } from '../fetch/request.js';

const RANGE = /^bytes (\d+)-(\d+)\/(\d+)$/;

/**
 * Whether `res` (the call's answer to `job`'s request) can be resumed: a
 * GET answered 200 with a strong validator, its body not re-encoded.
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
  return etag && !etag.startsWith('W/') ? etag : (h.get('last-modified') ?? undefined);
}

/** Why the body could not be resumed, with the failure that broke it as its cause. */
class ResumeError extends Error {
  name = 'ResumeError';
}

/** The request for the rest of the body, judged as a resume: only a matching 206 succeeds. */
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
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   */
  judge(call, o) {
    const s = /** @type {number} */ (o.status);
    if (o.failed || (s !== 206 && this.c.retryOn.has(s))) return super.judge(call, o);
    const why = s === 206 ? this.mismatch(/** @type {Response} */ (o.res)) : `the server answered ${s}, not 206`;
    if (!why) return 'success';
    o.res?.body?.cancel().catch(() => {});
    Object.assign(o, { failed: true, res: undefined, error: new ResumeError(`cannot resume at byte ${this.from}: ${why}`) });
    return 'not-retryable';
  }
}

/**
 * A call that goes on from `from`: its attempts, its place in the schedule
 * (the delays it drew are drawn again, then the next), what is left of its
 * deadline.
 * @param {import('../fetch/options.js').Config} c
 * @param {Call} from
 */
function goOn(c, from) {
  const call = new Call({ ...c, maxElapsedMs: c.maxElapsedMs - (Date.now() - from.start) }, from.signal);
  const next = call.next;
  let skip = (call.n = from.n);
  call.next = (hint) => {
    while (skip > 1) next.call(call, NaN), skip--;
    return next.call(call, hint);
  };
  return call;
}

/**
 * The resume function of a body (js/stream/body.js): the rest of the body
 * from `offset`, after a failure `error`, or a rejection: `error` itself
 * when it was not a network failure or a stall, else why not.
 * @param {Call} first the call that answered
 * @param {FetchJob} job its job
 * @param {string} tag
 * @param {Response} res the first answer
 * @returns {(offset: number, error: unknown) => Promise<ReadableStreamDefaultReader<Uint8Array>>}
 */
export function resumer(first, job, tag, res) {
  let prev = first;
  const total = +(res.headers.get('content-length') ?? NaN);
  // (once per call: onDone was told when the first answer came)
  const c = { ...job.c, onDone: undefined };
  return async (offset, error) => {
    if (!(isNetworkError(error) || (error instanceof DOMException && error.name === 'TimeoutError'))) throw error;
    const call = (prev = goOn(c, prev));
    const lane = c.gate
      ? c.gate.enter(c.gate.keyOf(job.input, job.init), call.signal, call.end, (/** @type {number=} */ h) => call.next(h))
      : scheduled;
    try {
      // The failure is a round of its own: the schedule's wait (or its end), the budget.
      const why = c.gate ? '' : scheduled.after(call, '', { failed: true, error, network: true });
      if (why) throw new ResumeError(`cannot resume at byte ${offset}: ${why}`, { cause: error });
    } catch (e) {
      call.close();
      throw e;
    }
    const r = /** @type {Response} */ (await drive(call, new RangeJob(job, offset, tag, total), lane));
    return /** @type {ReadableStream<Uint8Array>} */ (r.body).getReader();
  };
}
