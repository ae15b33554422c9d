// @ts-check
// One request through `wasm-backoff/undici`'s interceptor (js/undici.js),
// run by the one retry loop (js/engine/loop.js) as every driver's call is:
// this is its job. An attempt is one dispatch with a handler of its own. A
// plain success (a status below 400 and not in retryOn, with no
// shouldRetry to ask) is handed to the caller's handler at its headers and
// streams on; any other answer is held, paused, at its headers while the
// loop judges it: retried, it is drained and hidden (by its lane);
// final, the caller's handler gets it whole. A failure before any answer
// is the attempt's error. The caller's abort reaches the attempt in flight,
// the answer it was handed, or the wait between two (the loop's signal).
import { replayable, advice } from './policy.js';
import { serverWait } from './retry-after.js';
import { REFUSED_REQUEST } from './gen/policy.js';
import { Call, drive } from './engine/loop.js';
import { scheduled, paced } from './engine/schedule.js';
import { judge } from './engine/judge.js';
import { attemptSignal } from './engine/signal.js';
import { attemptValue, paceMs } from './fetch/request.js';

/**
 * undici's codes of a request that did not fail on the network: aborted by
 * its caller, or refused (the core's list; and a body undici cannot send,
 * `ERR_INVALID_ARG_TYPE`, which fails the same on every try).
 */
const NOT_NETWORK = /^(?:UND_ERR_ABORTED|ABORT_ERR|UND_ERR_REQ_CONTENT_LENGTH_MISMATCH|ERR_INVALID_ARG_TYPE)$/;

/** @param {any} err */
const network = (err) => err?.name !== 'AbortError' && !NOT_NETWORK.test(err?.code) && !REFUSED_REQUEST.test(err?.code);

/**
 * The request's headers in one of undici's two forms, read once: a record
 * as it is; a flat array of names and values as it is (an odd one too,
 * for undici to refuse); fetch-style pairs, or another iterable of pairs
 * (a Map, Headers, a generator, read here once), as a flat array.
 * @param {any} h
 */
function flatten(h) {
  if (h == null || typeof h !== 'object') return h;
  if (Array.isArray(h)) return Array.isArray(h[0]) ? h.flat() : h;
  return Symbol.iterator in h ? [...h].flat() : h;
}

/**
 * The (flattened) headers' pairs, a value undici would skip (undefined)
 * left out.
 * @param {any} h
 * @returns {[unknown, unknown][]}
 */
function pairs(h) {
  if (h == null) return [];
  /** @type {[unknown, unknown][]} */
  const all = Array.isArray(h) ? h.flatMap((v, i) => (i % 2 ? [] : [[v, h[i + 1]]])) : Object.entries(h);
  return all.filter(([, v]) => v !== undefined);
}

/**
 * One lower-case name's value in the (flattened) headers, or null.
 * @param {any} h
 * @param {string} name
 */
function header(h, name) {
  for (const [k, v] of pairs(h)) if (String(k).toLowerCase() === name) return String(v);
  return null;
}

/**
 * The (flattened) headers with `name` set to `value` (any of the request's
 * own under that name replaced, as Headers.set does), in their form.
 * @param {any} h
 * @param {string} name
 * @param {string} value
 */
function withHeader(h, name, value) {
  // (an odd flat array is left for undici to refuse, not mended)
  if (Array.isArray(h) && h.length % 2) return h;
  const other = (/** @type {[unknown, unknown]} */ [k]) => String(k).toLowerCase() !== name.toLowerCase();
  const kept = pairs(h).filter(other);
  return Array.isArray(h) ? [...kept.flat(), name, value] : { ...Object.fromEntries(kept), [name]: value };
}

/**
 * The origin a request is paced by: `opts.origin` (a string or a URL) as
 * URL's origin, so that 'http://a:80/' and 'http://A' are one.
 * @param {unknown} origin
 */
function originOf(origin) {
  try {
    return new URL(String(origin)).origin;
  } catch {
    return String(origin);
  }
}

/**
 * The answer's raw headers (name, value, name, value… as Buffers or strings) as `get(name)`.
 * @param {any[]} raw
 */
const answered = (raw) => ({ get: (/** @type {string} */ name) => header(raw, name) });

const utf8 = new TextEncoder();

/**
 * A chunk of a body read once as the bytes undici sends for it: a string's
 * UTF-8, an ArrayBuffer view's bytes (a Buffer, a Uint8Array, any typed
 * array, a DataView), nothing for an empty ArrayBuffer (undici skips it).
 * Anything else (an ArrayBuffer, a number, an object) throws a TypeError
 * with undici's code, as undici refuses it: never sent as other bytes.
 * @param {unknown} v
 * @returns {Uint8Array}
 */
function bytes(v) {
  if (typeof v === 'string') return utf8.encode(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if ((v instanceof ArrayBuffer || v instanceof SharedArrayBuffer) && v.byteLength === 0) return new Uint8Array(0);
  const what = Object.prototype.toString.call(v).slice(8, -1);
  const err = new TypeError(`body: a chunk must be a string or an ArrayBuffer view (Buffer, Uint8Array, DataView…), not ${what}`);
  throw Object.assign(err, { code: 'ERR_INVALID_ARG_TYPE' });
}

/**
 * A body that is read once (a stream, an async iterable, fetch's own
 * generator), read up to `bound` bytes: the bytes when it ended by then
 * (sent again on every attempt), else the same body (sent once: never
 * again, as what was read of it is gone). Each chunk is `bytes`'s, those
 * read later too: a chunk undici refuses, or the body's own error, fails
 * the call (before anything is sent when it comes within the bound).
 * @param {AsyncIterable<any>} body
 * @param {number} bound
 * @returns {Promise<Uint8Array | AsyncIterable<Uint8Array>>}
 */
async function buffered(body, bound) {
  const it = body[Symbol.asyncIterator]();
  /** @type {Uint8Array[]} */
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await it.next();
    if (done) break;
    const b = bytes(value);
    chunks.push(b);
    size += b.byteLength;
    if (size > bound)
      return (async function* () {
        yield* chunks;
        for (let x = await it.next(); !x.done; x = await it.next()) yield bytes(x.value);
      })();
  }
  return new Uint8Array(await new Blob(/** @type {BlobPart[]} */ (chunks)).arrayBuffer());
}

/**
 * Runs one request: `handler` (the caller's, undici's legacy interface)
 * sees one connection (`onConnect` once, at the start) and one answer.
 * `at` (the interceptor's): until when each origin said no request
 * remains (epoch ms), as a withBackoff client's.
 * @param {import('./undici.js').Options} c
 * @param {import('./undici.js').Dispatch} dispatch
 * @param {any} opts
 * @param {any} handler
 * @param {Map<string, number>} at
 */
export function request(c, dispatch, opts, handler, at) {
  const method = String(opts.method ?? 'GET').toUpperCase();
  const headers = flatten(opts.headers);
  const keyed = header(headers, 'idempotency-key') !== null;
  const key = c.idempotencyKey && !keyed && !c.methods.has(method) ? crypto.randomUUID() : undefined;
  const o = { ...opts, headers: key ? withHeader(headers, 'idempotency-key', key) : headers };
  const idempotent = c.methods.has(method) || c.retryNonIdempotent || keyed || !!key;
  const ac = new AbortController();
  // A success saying no request remains holds the origin's next requests until the reset (`pace`).
  const lane = c.pace ? paced(at, originOf(opts.origin)) : scheduled;
  const job = new DispatchJob(c, dispatch, o, handler, idempotent, ac.signal, lane);
  // The caller's abort: the loop's signal (a wait, an attempt in flight), and
  // every attempt still open (the answer handed over, one held or drained).
  handler.onConnect((/** @type {unknown} */ why) => {
    ac.abort(why);
    job.end(why);
  });
  // (the call, its deadline's timer with it, starts once the body is read: a body that fails leaves nothing behind)
  const start = () => {
    const call = new Call(c, ac.signal);
    return drive(call, job, job).then(
      (/** @type {any} */ a) => {
        a.commit?.();
        job.end(undefined, a.abort); // (a retried answer still draining: let go)
      },
      (err) => {
        job.end(err); // (an answer held when the call ended otherwise: an abort, the deadline, a hook that threw)
        handler.onError(err);
      },
    );
  };
  // A body read once is read first (up to the bound), so that a retry can send it again.
  if (!job.replayable && idempotent && o.body != null && Symbol.asyncIterator in o.body) {
    buffered(o.body, c.maxBufferBytes).then(
      (body) => {
        job.o = { ...o, body };
        job.replayable = body instanceof Uint8Array;
        start();
      },
      (err) => handler.onError(ac.signal.aborted ? ac.signal.reason : err),
    );
  } else start();
}

/**
 * An answer at its headers, held (paused) until the loop judges it:
 * what came after them meanwhile is kept, and handed on with them.
 * @typedef {object} Held
 * @property {number} status
 * @property {any[]} raw
 * @property {() => void} resume
 * @property {string} text
 * @property {Uint8Array[]} chunks
 * @property {[string, unknown] | undefined} end 'complete' (trailers) or 'error' (the error), when it ended while held
 * @property {'hold' | 'pass' | 'drain' | 'gone'} mode held; handed to the caller; drained (retried); aborted, nothing more told
 */

/**
 * The job of one request at a dispatcher (js/engine/loop.js's Job), and
 * its lane: the plain schedule's (js/engine/schedule.js), which also lets go
 * of an answer it retries (the loop's own drop cancels a Response body).
 */
class DispatchJob {
  /** @type {(() => void) | undefined} drains the last answer, if it is held */
  drop;
  /** The last answer's status (for onDone). @type {number | undefined} */
  status;
  /** undici's aborts of the attempts not ended yet (one in flight, held, handed over, or draining). */
  open = new Set();

  /**
   * @param {import('./undici.js').Options} c
   * @param {import('./undici.js').Dispatch} dispatch
   * @param {any} o the request's options, as dispatched
   * @param {any} handler the caller's
   * @param {boolean} idempotent
   * @param {AbortSignal} signal the call's (the caller's abort)
   * @param {import('./engine/loop.js').Lane} lane the plain schedule (paced by origin)
   */
  constructor(c, dispatch, o, handler, idempotent, signal, lane) {
    this.c = c;
    this.dispatch = dispatch;
    this.o = o;
    this.handler = handler;
    this.idempotent = idempotent;
    this.signal = signal;
    this.lane = lane;
    this.replayable = replayable(o.body);
  }

  /** @param {Call} call @param {number} delayMs */
  pass(call, delayMs) {
    return this.lane.pass(call, delayMs);
  }

  /**
   * The plain lane's decision; an answer retried is drained (the loop's own
   * drop cancels a Response body, not a dispatch's).
   * @param {Call} call
   * @param {import('./engine/loop.js').Verdict} v
   * @param {import('./engine/loop.js').Outcome} o
   */
  after(call, v, o) {
    const d = this.lane.after(call, v, o);
    if (!d.why) this.drop?.();
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
   * One dispatch: its outcome at the answer's headers, or its failure.
   * @param {Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<import('./engine/loop.js').Outcome>}
   */
  async attempt(call, n, signal) {
    const [sig, release, timeout] = attemptSignal(call, signal, false);
    const o = await new Promise((resolve) => this.send(n, sig, release, resolve));
    this.status = o.status;
    if (!o.failed) return o;
    call.alive(); // (the caller's abort or the deadline: the call ends with its reason)
    return { ...o, network: o.network ?? (network(o.error) && (!timeout?.signal.aborted || /** @type {any} */ (this.c).retryOnTimeout)) };
  }

  /**
   * Dispatches the request with a handler of this attempt's.
   * @param {number} k the attempt (1 for the first: its `attemptHeader`)
   * @param {AbortSignal | undefined} sig the attempt's signal (the caller's, the deadline, timeoutMs)
   * @param {() => void} release lets go of its timers and listeners
   * @param {(o: any) => void} resolve
   */
  send(k, sig, release, resolve) {
    const { c, handler, open } = this;
    /** @type {((why: unknown) => void) | undefined} undici's abort of this attempt */
    let abort;
    let settled = false;
    const settle = (/** @type {any} */ o) => {
      settled = true;
      sig?.removeEventListener('abort', onAbort);
      release();
      resolve(o);
    };
    // (an attempt still queued in undici has no abort yet: it fails now, and is aborted when it connects)
    const onAbort = () => (abort ? abort(sig?.reason) : settled || settle({ failed: true, error: sig?.reason }));
    sig?.addEventListener('abort', onAbort);
    /** @type {Held | undefined} */
    let held;
    const done = () => abort && open.delete(abort);
    /** The caller's handler threw: this attempt is aborted, the caller told once. */
    const fail = (/** @type {Held} */ a, /** @type {unknown} */ e) => {
      a.mode = 'gone';
      abort?.(e);
      done();
      handler.onError(e);
    };
    /** Hands the held answer to the caller's handler: its headers, what came after, then the rest as it comes. */
    const commit = () => {
      const a = /** @type {Held} */ (held);
      if (a.mode !== 'hold') return;
      // (aborted between the verdict and now: nothing is handed over)
      if (this.signal.aborted) return fail(a, this.signal.reason);
      a.mode = 'pass';
      try {
        const go = handler.onHeaders(a.status, a.raw, a.resume, a.text) !== false;
        for (const chunk of a.chunks) handler.onData(chunk);
        if (a.end) return end(a.end);
        if (go) a.resume();
      } catch (e) {
        fail(a, e);
      }
    };
    /** A retried answer: its body read and dropped (the connection kept; aborted if the call ends first). */
    const drain = () => {
      const a = /** @type {Held} */ (held);
      if (a.mode !== 'hold') return;
      a.mode = 'drain';
      a.chunks = [];
      if (!a.end) a.resume();
    };
    const end = (/** @type {[string, any]} */ [how, v]) => {
      done();
      how === 'complete' ? handler.onComplete(v) : handler.onError(v);
    };
    /** The answer of a 101 (an upgrade) or a plain success: the caller's from its headers on. */
    const pass = (/** @type {number} */ status, /** @type {number | undefined} */ pace = undefined) => {
      held = { status, raw: [], resume() {}, text: '', chunks: [], end: undefined, mode: 'pass' };
      settle({ failed: false, status, pace, abort });
    };
    const mine = {
      onConnect: (/** @type {(why: unknown) => void} */ a) => {
        abort = a;
        open.add(a);
        if (sig?.aborted) a(sig.reason);
      },
      /** @param {number} status @param {any[]} raw @param {() => void} resume @param {string} text */
      onHeaders: (status, raw, resume, text) => {
        const failure = status >= 400;
        const pace = !failure && c.pace ? paceMs(c, answered(raw)) : undefined;
        // (a plain success needs no verdict: it streams to the caller now)
        if (!failure && !c.retryOn.has(status) && !c.shouldRetry) {
          pass(status, pace);
          return handler.onHeaders(status, raw, resume, text);
        }
        const h = failure ? answered(raw) : undefined;
        held = { status, raw, resume, text, chunks: [], end: undefined, mode: 'hold' };
        this.drop = drain;
        settle({ failed: false, status, hintMs: h && serverWait(h), advice: h && advice(h), pace, abort, commit });
        return false;
      },
      onData: (/** @type {Uint8Array} */ chunk) => {
        const a = /** @type {Held} */ (held);
        if (a.mode === 'pass') return handler.onData(chunk);
        if (a.mode === 'hold') a.chunks.push(chunk);
        return true;
      },
      onComplete: (/** @type {any} */ trailers) => {
        if (held?.mode === 'pass') end(['complete', trailers]);
        else if (held?.mode === 'hold') held.end = ['complete', trailers];
        else done();
      },
      onError: (/** @type {any} */ err) => {
        if (!settled) return (done(), settle({ failed: true, error: err }));
        if (held?.mode === 'pass') end(['error', err]);
        else if (held?.mode === 'hold') held.end = ['error', err];
        else done();
      },
      onUpgrade: (/** @type {any[]} */ ...a) => {
        // (a 101: the answer, handed over as it is; the loop ends with it)
        if (!settled) pass(101);
        done();
        return handler.onUpgrade?.(...a);
      },
      onBodySent: (/** @type {any[]} */ ...a) => handler.onBodySent?.(...a),
      onRequestSent: () => handler.onRequestSent?.(),
      // (fetch's timing: the last attempt's start is the one that stays)
      onResponseStarted: () => handler.onResponseStarted?.(),
    };
    try {
      const name = c.attemptHeader;
      this.dispatch(name ? { ...this.o, headers: withHeader(this.o.headers, name, attemptValue(c, k)) } : this.o, mine);
    } catch (error) {
      // (thrown before anything was sent: the request cannot be dispatched, trying again would not help)
      if (!settled) settle({ failed: true, error, network: false });
    }
  }

  /**
   * @param {Call} call
   * @param {import('./engine/loop.js').Outcome} o
   */
  judge(call, o) {
    return judge(call, o, true, this.idempotent, this.replayable);
  }

  /** The outcome the call ends with: its answer is handed over (request's `commit`). @param {any} o */
  result(o) {
    return o;
  }
}
