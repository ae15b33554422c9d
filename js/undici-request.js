// @ts-check
// One request through `wasm-backoff/undici`'s interceptor (js/undici.js):
// its attempts, each dispatched with a handler of its own that hides a
// failed answer (drained, then the next attempt after the delay) and hands
// the first answer that is not retried to the caller's handler whole. The
// caller's abort reaches the attempt in flight or the wait between two.
import { replayable } from './policy.js';
import { REFUSED_REQUEST } from './gen/policy.js';
import { MAX_TIMER } from './gen/boundary.js';

/** undici's codes of a request that did not fail on the network: aborted by its caller, or refused (the core's list). */
const NOT_NETWORK = /^(?:UND_ERR_ABORTED|ABORT_ERR|UND_ERR_REQ_CONTENT_LENGTH_MISMATCH)$/;

/** @param {any} err */
const network = (err) => err?.name !== 'AbortError' && !NOT_NETWORK.test(err?.code) && !REFUSED_REQUEST.test(err?.code);

/**
 * The request's headers as undici takes them (a record, a flat array of
 * names and values, or an iterable of pairs), one lower-case name's value.
 * @param {any} h
 * @param {string} name
 */
function header(h, name) {
  if (h == null) return null;
  const pairs =
    Array.isArray(h) && !Array.isArray(h[0])
      ? h.flatMap((v, i) => (i % 2 ? [] : [[v, h[i + 1]]]))
      : Symbol.iterator in h
        ? [...h]
        : Object.entries(h);
  for (const [k, v] of pairs) if (String(k).toLowerCase() === name) return String(v);
  return null;
}

/**
 * The answer's raw headers (name, value, name, value… as Buffers or strings) as `get(name)`.
 * @param {any[]} raw
 */
const answered = (raw) => ({
  /** @param {string} name */
  get(name) {
    for (let i = 0; i < raw.length; i += 2) if (String(raw[i]).toLowerCase() === name) return String(raw[i + 1]);
    return null;
  },
});

/**
 * A body that is read once (a stream, an async iterable, fetch's own
 * generator), read up to `bound` bytes: the bytes when it ended by then
 * (sent again on every attempt), else the same body unread (sent once).
 * @param {AsyncIterable<any>} body
 * @param {number} bound
 * @returns {Promise<Uint8Array | AsyncIterable<any>>}
 */
async function buffered(body, bound) {
  const it = body[Symbol.asyncIterator]();
  /** @type {Uint8Array[]} */
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await it.next();
    if (done) break;
    const b =
      typeof value === 'string' ? new TextEncoder().encode(value) : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
    chunks.push(b);
    size += b.byteLength;
    if (size > bound)
      return (async function* () {
        yield* chunks;
        for (let x = await it.next(); !x.done; x = await it.next()) yield x.value;
      })();
  }
  const all = new Uint8Array(size);
  for (let i = 0, at = 0; i < chunks.length; at += chunks[i++].byteLength) all.set(chunks[i], at);
  return all;
}

/**
 * Runs one request: `handler` (the caller's, undici's legacy interface)
 * sees one connection (`onConnect` once, at the start) and one answer.
 * @param {import('./undici.js').Options} c
 * @param {import('./undici.js').Dispatch} dispatch
 * @param {any} opts
 * @param {any} handler
 * @param {typeof import('./undici.js').next} next
 */
export function request(c, dispatch, opts, handler, next) {
  const method = String(opts.method ?? 'GET').toUpperCase();
  const keyed = header(opts.headers, 'idempotency-key') !== null;
  const key = c.idempotencyKey && !keyed && !c.methods.has(method) ? crypto.randomUUID() : undefined;
  const o = key ? { ...opts, headers: withKey(opts.headers, key) } : opts;
  const idempotent = c.methods.has(method) || c.retryNonIdempotent || keyed || !!key;
  const run = new Run(c, dispatch, o, handler, next, idempotent);
  // A body read once is read first (up to the bound), so that a retry can send it again.
  if (!run.r.replayable && idempotent && o.body != null && Symbol.asyncIterator in o.body) {
    buffered(o.body, c.maxBufferBytes).then(
      (body) => {
        run.o = { ...o, body };
        run.r.replayable = body instanceof Uint8Array;
        run.send();
      },
      (err) => handler.onError(run.aborted ? run.reason : err),
    );
  } else run.send();
}

/** One request's attempts and the waits between them. */
class Run {
  aborted = false;
  /** @type {unknown} the caller's abort reason */
  reason;
  /** @type {((why: unknown) => void) | null} the attempt in flight's abort */
  abortAttempt = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} the wait before the next attempt */
  timer;

  /**
   * @param {import('./undici.js').Options} c
   * @param {import('./undici.js').Dispatch} dispatch
   * @param {any} o the request's options, as dispatched
   * @param {any} handler
   * @param {typeof import('./undici.js').next} next
   * @param {boolean} idempotent
   */
  constructor(c, dispatch, o, handler, next, idempotent) {
    this.c = c;
    this.dispatch = dispatch;
    this.o = o;
    this.handler = handler;
    this.next = next;
    this.r = { n: 0, started: Date.now(), idempotent, replayable: replayable(o.body) };
    handler.onConnect((/** @type {unknown} */ why) => this.abort(why));
  }

  /** The caller's abort: the attempt in flight, or the wait (the handler told at once). */
  abort(/** @type {unknown} */ why) {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = why;
    if (this.timer === undefined) return this.abortAttempt?.(why);
    clearTimeout(this.timer);
    this.timer = undefined;
    this.handler.onError(why);
  }

  /** After a failed attempt: the next one in `ms` (true), or the failure is the answer (false). */
  wait(/** @type {number | string} */ ms) {
    if (typeof ms !== 'number' || this.aborted) return false;
    // (clamped as every wait of the package is: a longer one would fire at once)
    this.timer = setTimeout(() => this.send(), Math.min(ms, MAX_TIMER));
    return true;
  }

  send() {
    this.timer = undefined;
    if (this.aborted) return this.handler.onError(this.reason);
    this.r.n++;
    try {
      this.dispatch(this.o, this.attempt());
    } catch (err) {
      this.handler.onError(err);
    }
  }

  /** The handler of one attempt: a failed answer to retry is drained here, any other passed on. */
  attempt() {
    const { c, r, handler, next } = this;
    /** @type {number | undefined} the delay after a failed answer being drained */
    let drained;
    let committed = false;
    return {
      onConnect: (/** @type {(why: unknown) => void} */ abort) => (this.aborted ? abort(this.reason) : (this.abortAttempt = abort)),
      /** @param {number} status @param {any[]} raw @param {() => void} resume @param {string} text */
      onHeaders(status, raw, resume, text) {
        const d = status >= 400 || c.retryOn.has(status) ? next(c, r, status, answered(raw)) : 'success';
        if (typeof d === 'number') return ((drained = d), true);
        committed = true;
        return handler.onHeaders(status, raw, resume, text);
      },
      onData: (/** @type {Uint8Array} */ chunk) => drained !== undefined || handler.onData(chunk),
      onComplete: (/** @type {any} */ trailers) => {
        this.abortAttempt = null;
        if (drained === undefined) handler.onComplete(trailers);
        else if (!this.wait(drained)) handler.onError(this.reason);
      },
      onError: (/** @type {any} */ err) => {
        this.abortAttempt = null;
        if (drained !== undefined && this.wait(drained)) return;
        const retried = !committed && !this.aborted && drained === undefined && network(err) && this.wait(next(c, r, undefined, undefined));
        if (!retried) handler.onError(err);
      },
      onUpgrade: (/** @type {any[]} */ ...a) => handler.onUpgrade?.(...a),
      onBodySent: (/** @type {any[]} */ ...a) => handler.onBodySent?.(...a),
      onRequestSent: () => handler.onRequestSent?.(),
      // (fetch's timing: the last attempt's start is the one that stays)
      onResponseStarted: () => handler.onResponseStarted?.(),
    };
  }
}

/**
 * The headers with an `idempotency-key`, in the form they came in.
 * @param {any} h
 * @param {string} key
 */
function withKey(h, key) {
  if (h == null) return { 'idempotency-key': key };
  if (Array.isArray(h)) return Array.isArray(h[0]) ? [...h, ['idempotency-key', key]] : [...h, 'idempotency-key', key];
  if (Symbol.iterator in h) return [...h, ['idempotency-key', key]];
  return { ...h, 'idempotency-key': key };
}
