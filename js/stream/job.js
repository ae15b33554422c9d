// @ts-check
// The stream entry's fetch job: the fetch job (js/fetch/request.js) with
// bodies that stream.
//   - The request's body may be a function (a fresh body per attempt), a
//     ReadableStream (sent again from a bounded buffer, js/stream/replay.js)
//     or a Request's body (read first up to the buffer's size: a body
//     within it is sent as bytes every time, a larger one streams from the
//     buffer): never an unbounded tee.
//   - An answer is held until its first chunk (firstChunkTimeoutMs: a
//     stall before it is a failed attempt, retried as a timeout), and the
//     body handed back has an idle timeout and resumes (js/stream/body.js).
import { FetchJob } from '../fetch/request.js';
import { judge } from '../engine/judge.js';
import { abortable } from '../hooks.js';
import { readAll, ms, flag, int } from '../options.js';
import { Replay, REPLAY_BYTES, prime } from './replay.js';
import { firstChunk, wrap } from './body.js';
import { resumer, validator, finisher } from './resume.js';

/** The stream entry's options over the fetch driver's (its RetryOptions), in the order they are checked. */
export const STREAM_OPTIONS = {
  idleTimeoutMs: ms(undefined, true),
  firstChunkTimeoutMs: ms(undefined, true),
  resume: flag(),
  replayBufferBytes: int(0, 2 ** 31, REPLAY_BYTES),
};

/**
 * The stream options over the fetch driver's.
 * @param {Record<string, any>} o
 * @param {import('../fetch/options.js').Config} c
 */
export function read(o, c) {
  const { idleTimeoutMs, firstChunkTimeoutMs, resume, replayBufferBytes } = readAll(o, STREAM_OPTIONS);
  const s = Object.assign(c, {
    idleMs: finite(idleTimeoutMs),
    firstMs: finite(firstChunkTimeoutMs),
    resume,
    replayBytes: replayBufferBytes,
  });
  // The answer read ahead (firstChunkTimeoutMs) and the call resumed are
  // the job's, one per call: racers would share them (idleTimeoutMs is per answer).
  if (c.hedge && (s.firstMs !== undefined || s.resume)) {
    throw new TypeError(`hedge and ${s.resume ? 'resume' : 'firstChunkTimeoutMs'} cannot be used together`);
  }
  return s;
}

/** @typedef {ReturnType<typeof read>} StreamConfig */

/** A timeout of Infinity is none (a timer would fire at once). @param {number | undefined} v */
const finite = (v) => (v === Infinity ? undefined : v);

/** A BodyInit a factory may return (else the call rejects, nothing sent). */
const isBody = (/** @type {unknown} */ b) =>
  b == null ||
  typeof b === 'string' ||
  b instanceof ReadableStream ||
  b instanceof ArrayBuffer ||
  ArrayBuffer.isView(b) ||
  b instanceof Blob ||
  b instanceof URLSearchParams ||
  (typeof FormData !== 'undefined' && b instanceof FormData);

export class StreamJob extends FetchJob {
  /** The body of the next attempt (set by `attempt`, taken by `args`). @type {any} */
  next;
  /** A streamed body's replay buffer. @type {Replay | undefined} */
  replay;
  /** A Request's body still to be read (by the first attempt). @type {ReadableStream<Uint8Array> | undefined} */
  pending;
  /** The body is the caller's function. @type {(() => unknown) | undefined} */
  factory;
  /** The call's answer, kept to resume its body. @type {import('../engine/call.js').Call | undefined} */
  call;
  /** A Request's body within the buffer, sent on every attempt. @type {Uint8Array | undefined} */
  bytes;
  /** The answer's reader and first chunk, read ahead (firstChunkTimeoutMs). @type {[ReadableStreamDefaultReader<Uint8Array>, Uint8Array | undefined] | undefined} */
  first;
  /** What a body function's stream failed with (its source's error). @type {[unknown] | undefined} */
  failed;

  /**
   * @param {StreamConfig} c
   * @param {typeof fetch} send
   * @param {any} input
   * @param {RequestInit | undefined} init
   * @param {boolean} [paces]
   */
  constructor(c, send, input, init, paces) {
    super(c, send, input, init, paces);
    this.c = c;
    const b = init?.body;
    if (typeof b === 'function') this.factory = /** @type {() => unknown} */ (b);
    else if (b instanceof ReadableStream) this.replay = new Replay(b.getReader(), c.replayBytes);
    else if (b == null && this.isReq && input.body) this.pending = input.body;
    // (the body is ours to send: no clone, no tee of the caller's)
    this.feeds = !!(this.factory || this.replay || this.pending);
    // (a body fed by us is not hedged, js/fetch/hedge.js: its racers would share one source)
    this.body &&= !this.feeds;
  }

  /** A Request whose body we send is passed as it is (its body replaced by ours). */
  target() {
    return this.feeds ? this.input : super.target();
  }

  /**
   * The attempt's init with the body we feed (before the request stages,
   * which then see it: failover moves a Request without copying its body).
   * @param {RequestInit | undefined} o
   * @returns {RequestInit | undefined}
   */
  fed(o) {
    if (!this.feeds) return o;
    const body = this.next;
    this.next = undefined;
    // (Node's fetch, Chromium and Deno refuse a stream body without it)
    return { ...o, body, ...(body instanceof ReadableStream && { duplex: 'half' }) };
  }

  /**
   * A body function's stream, read through one that keeps what its source
   * fails with (`failed`): the caller's error, not a network failure.
   * @param {ReadableStream<Uint8Array>} b
   */
  watched(b) {
    const reader = b.getReader();
    return new ReadableStream(
      {
        pull: async (ctl) => {
          try {
            const r = await reader.read();
            r.done ? ctl.close() : ctl.enqueue(r.value);
          } catch (e) {
            this.failed = [e];
            throw e;
          }
        },
        cancel: (why) => reader.cancel(why),
      },
      { highWaterMark: 0 },
    );
  }

  /** The body of the next attempt. */
  async fresh() {
    if (this.pending) {
      const p = await prime(this.pending, /** @type {StreamConfig} */ (this.c).replayBytes);
      this.pending = undefined;
      if (p instanceof Replay) this.replay = p;
      else this.bytes = p;
    }
    if (this.factory) {
      const b = this.factory();
      if (!isBody(b)) throw new TypeError('body() must return a body fetch can send');
      return b instanceof ReadableStream ? this.watched(b) : b;
    }
    return this.replay ? this.replay.stream() : this.bytes;
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   */
  async attempt(call, n, signal) {
    // (what the body factory throws rejects the call: nothing more is sent)
    if (this.feeds) this.next = await this.fresh();
    this.first = undefined;
    const o = await super.attempt(call, n, signal);
    // (the caller's source failed, or gave what fetch cannot send: the
    // caller's error, at once; never a network failure to retry)
    const bad = this.replay?.error !== undefined ? [this.replay.error] : this.failed;
    if (o.failed && bad) return { failed: true, error: bad[0], network: false };
    const c = /** @type {StreamConfig} */ (this.c);
    const res = o.res;
    if (!res?.body || c.firstMs === undefined || c.retryOn.has(o.status ?? 0)) return o;
    try {
      this.first = await firstChunk(res, c.firstMs);
      return o;
    } catch (error) {
      call.alive();
      return { failed: true, error, network: true };
    }
  }

  /**
   * The fetch job's verdict; a retry of a streamed body is decided on all
   * of it: its source is read to its end first (within the buffer, and the
   * call's deadline), so bytes that come during the wait cannot leave the
   * retry a body other than the caller's. A source that fails meanwhile
   * ends the call with its error.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   * @returns {import('../engine/loop.js').Verdict | Promise<import('../engine/loop.js').Verdict>}
   */
  judge(call, o) {
    this.call = call;
    const r = this.replay;
    const v = judge(call, o, true, () => this.idempotent(), r ? r.replayable() : this.feeds || this.body);
    if ('why' in v && !(v.why === '' && r && !r.done)) return this.judged(v, o);
    return this.whole(call, v).then((w) => this.judged(w, o));
  }

  /**
   * A verdict `v` (or the promise of one, from shouldRetry) once a streamed
   * body wanted again is read whole: 'not-replayable' past the buffer; the
   * source's error, when it failed.
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Verdict | Promise<import('../engine/loop.js').Verdict>} v
   * @returns {Promise<import('../engine/loop.js').Verdict>}
   */
  async whole(call, v) {
    const w = await v;
    const r = this.replay;
    if (w.why !== '' || !r || r.done) return w;
    try {
      await abortable(r.drain(), call.signal, call.ds);
    } catch (error) {
      if (r.error === undefined) throw error; // (aborted, or the deadline)
      return { why: 'not-retryable', hurt: w.hurt, error };
    }
    return r.replayable() ? w : { why: 'not-replayable', hurt: w.hurt };
  }

  /**
   * After the verdict: an answer read ahead that is retried after all (a
   * shouldRetry) is let go (its reader is ours: the loop cannot cancel
   * it); a call that ends failed lets go of the caller's stream.
   * @param {import('../engine/loop.js').Verdict} v
   * @param {import('../engine/loop.js').Outcome} o
   */
  judged(v, o) {
    if (!v.why) this.first?.[0].cancel().catch(() => {}), (this.first = undefined);
    else if (o.failed || v.error !== undefined) this.replay?.close();
    return v;
  }

  /** A call that failed lets go of the caller's stream. @param {import('../engine/loop.js').Outcome} o */
  failure(o) {
    this.replay?.close();
    return o.error;
  }

  /** The response handed back, its body wrapped when a stream option asks. @param {import('../engine/loop.js').Outcome} o */
  result(o) {
    this.replay?.close();
    const c = /** @type {StreamConfig} */ (this.c);
    const res = /** @type {Response | undefined} */ (o.res);
    if (!res) return o.value;
    const tag = c.resume ? validator(res, this) : undefined;
    if (c.idleMs === undefined && !this.first && !tag) return res;
    const [reader, first] = this.first ?? [];
    const resume = tag ? resumer(/** @type {import('../engine/call.js').Call} */ (this.call), this, tag, res) : undefined;
    return wrap(res, { idleMs: c.idleMs, first, reader, resume, finish: tag ? finisher(res) : undefined });
  }
}
