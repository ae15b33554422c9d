// @ts-check
// One attempt at undici's dispatcher, as the handler undici calls (its
// "legacy" interface: onConnect, onHeaders, onData, onComplete, onError,
// onUpgrade…), and its answer. A plain success (a status below 400 and not
// in retryOn, with no shouldRetry to ask) is passed to the caller's handler
// at its headers and streams on; any other answer is held, paused, at its
// headers while the loop judges it (what comes after them meanwhile is
// kept): then committed (the caller's handler gets it whole) or drained
// (retried: read and dropped, the connection kept). A failure before any
// answer is the attempt's error.
import { advice } from '../policy.js';
import { serverWait } from '../retry-after.js';
import { paceMs } from '../fetch/request.js';
import { answered } from './headers.js';

/**
 * What an attempt resolves with: the loop's Outcome, and the answer itself.
 * @typedef {import('../engine/loop.js').Outcome & { answer?: Answer }} Settled
 */

export class Answer {
  /** undici's abort of this attempt (at onConnect). @type {((why: unknown) => void) | undefined} */
  abort;
  /** The attempt has its outcome. */
  settled = false;
  /** '' before an answer; 'hold' held for the verdict; 'pass' handed to the caller; 'drain' retried, read and dropped; 'gone' aborted, nothing more told. */
  mode = '';
  status = 0;
  /** The answer's raw headers, resume, status text (undici's onHeaders arguments). @type {any[]} */
  raw = [];
  resume = () => {};
  text = '';
  /** What came after the headers while held. @type {Uint8Array[]} */
  chunks = [];
  /** How it ended while held: 'complete' (the trailers) or 'error' (the error). @type {[string, unknown] | undefined} */
  ended;

  /**
   * @param {import('./job.js').DispatchJob} job
   * @param {AbortSignal | undefined} sig the attempt's signal (the caller's, the deadline, timeoutMs)
   * @param {() => void} release lets go of its timers and listeners
   * @param {(o: Settled) => void} resolve
   */
  constructor(job, sig, release, resolve) {
    this.job = job;
    this.sig = sig;
    this.release = release;
    this.resolve = resolve;
    // (an attempt still queued in undici has no abort yet: it fails now, and is aborted when it connects)
    this.onAbort = () => (this.abort ? this.abort(sig?.reason) : this.settled || this.settle({ failed: true, error: sig?.reason }));
    sig?.addEventListener('abort', this.onAbort);
  }

  /** @param {Settled} o */
  settle(o) {
    this.settled = true;
    this.sig?.removeEventListener('abort', this.onAbort);
    this.release();
    this.resolve(o);
  }

  /** This attempt is over for undici: it is no longer aborted when the call ends. */
  done() {
    if (this.abort) this.job.open.delete(this.abort);
  }

  /** Ends the answer the caller has: its end told to the caller's handler. @param {[string, any]} end */
  end([how, v]) {
    this.done();
    how === 'complete' ? this.job.handler.onComplete(v) : this.job.handler.onError(v);
  }

  /** The caller's handler threw (or the call was aborted): this attempt is aborted, the caller told once. @param {unknown} e */
  fail(e) {
    this.mode = 'gone';
    this.abort?.(e);
    this.done();
    this.job.handler.onError(e);
  }

  /** The answer of a 101 (an upgrade) or a plain success: the caller's from its headers on. @param {number} status @param {number} [pace] */
  pass(status, pace) {
    this.mode = 'pass';
    this.status = status;
    this.settle({ failed: false, status, pace, answer: this });
  }

  /** Hands the held answer to the caller's handler: its headers, what came after, then the rest as it comes. */
  commit() {
    if (this.mode !== 'hold') return;
    const signal = this.job.signal;
    // (aborted between the verdict and now: nothing is handed over)
    if (signal.aborted) return this.fail(signal.reason);
    this.mode = 'pass';
    const handler = this.job.handler;
    try {
      const go = handler.onHeaders(this.status, this.raw, this.resume, this.text) !== false;
      for (const chunk of this.chunks) handler.onData(chunk);
      if (this.ended) return this.end(this.ended);
      if (go) this.resume();
    } catch (e) {
      this.fail(e);
    }
  }

  /** A retried answer: its body read and dropped (the connection kept; aborted if the call ends first). */
  drain() {
    if (this.mode !== 'hold') return;
    this.mode = 'drain';
    this.chunks = [];
    if (!this.ended) this.resume();
  }

  /** @param {(why: unknown) => void} abort */
  onConnect(abort) {
    this.abort = abort;
    this.job.open.add(abort);
    if (this.sig?.aborted) abort(this.sig.reason);
  }

  /** @param {number} status @param {any[]} raw @param {() => void} resume @param {string} text */
  onHeaders(status, raw, resume, text) {
    const c = this.job.c;
    const failure = status >= 400;
    const pace = !failure && c.pace ? paceMs(c, answered(raw)) : undefined;
    // (a plain success needs no verdict: it streams to the caller now)
    if (!failure && !c.retryOn.has(status) && !c.shouldRetry) {
      this.pass(status, pace);
      return this.job.handler.onHeaders(status, raw, resume, text);
    }
    const h = failure ? answered(raw) : undefined;
    Object.assign(this, { mode: 'hold', status, raw, resume, text });
    this.settle({ failed: false, status, hintMs: h && serverWait(h), advice: h && advice(h), pace, answer: this });
    return false;
  }

  /** @param {Uint8Array} chunk */
  onData(chunk) {
    if (this.mode === 'pass') return this.job.handler.onData(chunk);
    if (this.mode === 'hold') this.chunks.push(chunk);
    return true;
  }

  /** @param {unknown} trailers */
  onComplete(trailers) {
    this.over(['complete', trailers]);
  }

  /** @param {unknown} err */
  onError(err) {
    if (this.settled) return this.over(['error', err]);
    this.done();
    this.settle({ failed: true, error: err });
  }

  /** The answer ended (its trailers, or an error): told to the caller if it has it, kept if held. @param {[string, unknown]} end */
  over(end) {
    if (this.mode === 'pass') this.end(end);
    else if (this.mode === 'hold') this.ended = end;
    else this.done();
  }

  /** A 101: the answer, handed over as it is (never retried nor timed out); the loop ends with it. @param {any[]} a */
  onUpgrade(...a) {
    if (!this.settled) this.pass(101);
    this.done();
    return this.job.handler.onUpgrade?.(...a);
  }

  /** @param {any[]} a */
  onBodySent(...a) {
    return this.job.handler.onBodySent?.(...a);
  }

  onRequestSent() {
    return this.job.handler.onRequestSent?.();
  }

  /** (fetch's timing: the last attempt's start is the one that stays) */
  onResponseStarted() {
    return this.job.handler.onResponseStarted?.();
  }
}
