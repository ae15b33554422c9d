// @ts-check
// The reader a wrapped body (js/stream/body.js) reads from now, and its idle
// timeout (idleTimeoutMs): a read errors with a TimeoutError when no chunk
// comes for `idleMs` while the consumer waits for one (a consumer that stops
// reading is not a stalled server).
//
// Cost per chunk: one Date.now() and two assignments. The timer is not
// reset per chunk: it is armed once, and when it fires it re-arms for what
// is left of the wait since the last read began (or stops when the consumer
// is not waiting); so no timer outlives the body by more than one `idleMs`,
// and none outlives its end, cancel or error (`stop`).
import { MAX_TIMER } from '../gen/boundary.js';

/** A timer's wait, clamped to what setTimeout takes. @param {number} ms */
export const clamp = (ms) => Math.min(ms, MAX_TIMER);

export class IdleReader {
  /** undefined: no timeout. @type {number | undefined} */
  #idleMs;
  /** The consumer waits on a read now. */
  #waiting = false;
  /** When that read began (epoch ms). */
  #since = 0;
  /** @type {any} */
  #timer;
  /** The stall that cancelled the reader (its pending read then ends as done). @type {unknown} */
  stalled;

  /**
   * @param {ReadableStreamDefaultReader<Uint8Array>} reader the response's (a resume replaces it)
   * @param {number | undefined} idleMs undefined: no timeout
   */
  constructor(reader, idleMs) {
    this.reader = reader;
    this.#idleMs = idleMs;
  }

  /** The timer fired: a stall, or the rest of the wait since the read began. */
  #tick = () => {
    this.#timer = undefined;
    if (!this.#waiting) return;
    const left = this.#since + /** @type {number} */ (this.#idleMs) - Date.now();
    if (left > 0) return void (this.#timer = setTimeout(this.#tick, clamp(left)));
    this.stalled = new DOMException(`idleTimeoutMs (${this.#idleMs} ms) passed without a chunk`, 'TimeoutError');
    this.reader.cancel(this.stalled).catch(() => {});
  };

  /** No read is waited on any more (the body failed, ended or was cancelled): the timer goes. */
  stop() {
    this.#waiting = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The next chunk, or a failure (a stall is one). */
  async read() {
    if (this.#idleMs !== undefined) {
      this.#waiting = true;
      this.#since = Date.now();
      this.#timer ??= setTimeout(this.#tick, clamp(this.#idleMs));
    }
    const r = await this.reader.read();
    this.#waiting = false;
    if (this.stalled) throw this.stalled;
    return r;
  }
}
