// @ts-check
// `wasm-backoff/ws`: a reconnecting WebSocket with the standard interface
// (`new WebSocket(url, protocols?, options?)`, send, close(code, reason),
// readyState, binaryType, open/message/close/error). When its connection
// drops it reconnects on the engine's schedule (js/ws/life.js): jittered, a
// gate's if given; a close with a code of `stopCodes` (1008, policy
// violation, by default) ends it. What is sent while it is not open waits in
// a bounded queue (`maxQueued`) and goes, in order, when it opens; past the
// bound, send() throws (or, with `overflow: 'error'`, an `error` event says
// which message was dropped): never silently.
import { readAll, fn, int, list, nullable, oneOf, own, ms, abortSignal } from '../options.js';
import { RECONNECT_OPTIONS, reconnectOptions, gateOption, errorEvent, messageEvent } from '../sse/reconnect.js';
import { Handlers, handler, setHandler } from '../sse/handlers.js';
import { life } from './life.js';

const BASE_MS = 1000;

/** The reconnect options a WebSocket reads (a handshake's answer names no wait: no maxRetryAfterMs). */
export const WS_RECONNECT_OPTIONS = { maxElapsedMs: RECONNECT_OPTIONS.maxElapsedMs, retryOn: RECONNECT_OPTIONS.retryOn };

/** WebSocket's own options over the reconnect options (WebSocketOptions), in the order they are checked. */
export const WS_OPTIONS = {
  WebSocket: fn(),
  // (null: the default, as undefined)
  overflow: nullable(oneOf(['throw', 'error'], 'throw')),
  stopCodes: nullable(
    list('close codes (integers in [1000, 4999])', (x) => Number.isInteger(x) && x >= 1000 && x <= 4999, new Set([1008])),
  ),
  gate: gateOption(),
  maxQueued: int(0, 2 ** 32, 16),
  timeoutMs: ms(10_000, true),
  signal: abortSignal(),
};

/**
 * The options, checked now.
 * @param {Record<string, any>} o from `own`
 */
function read(o) {
  const c = readAll(o, WS_OPTIONS);
  const WS = c.WebSocket ?? globalThis.WebSocket;
  if (typeof WS !== 'function')
    throw new TypeError("WebSocket: this runtime has none: pass options.WebSocket (in Node 20, the 'ws' package's)");
  return { ...reconnectOptions(o, BASE_MS, WS_RECONNECT_OPTIONS), ...c, WebSocket: WS };
}

/** A close event (CloseEvent where the runtime has one). @param {{ code: number, reason: string, wasClean: boolean }} e */
const closeEvent = (e) =>
  typeof CloseEvent === 'function'
    ? new CloseEvent('close', e)
    : Object.assign(new Event('close'), { code: e.code, reason: e.reason, wasClean: e.wasClean });

/** Bytes of a message, as bufferedAmount counts them. @param {any} d */
const size = (d) => (typeof d === 'string' ? new TextEncoder().encode(d).length : (d.byteLength ?? d.size ?? 0));

export class WebSocket extends Handlers {
  static CONNECTING = /** @type {const} */ (0);
  static OPEN = /** @type {const} */ (1);
  static CLOSING = /** @type {const} */ (2);
  static CLOSED = /** @type {const} */ (3);
  #url;
  /** @type {0 | 1 | 2 | 3} */
  #state = 0;
  #ac = new AbortController();
  /** @type {any} the open socket */
  #ws;
  /** @type {any[]} sent while not open */
  #queue = [];
  #queued = 0;
  #c;
  /** @type {'blob' | 'arraybuffer'} */
  #binaryType = 'blob';

  /**
   * @param {string | URL} url
   * @param {string | string[]} [protocols]
   * @param {import('../../types/ws/index.js').WebSocketOptions} [options]
   */
  constructor(url, protocols, options) {
    super();
    const c = (this.#c = read(own(options)));
    const u = new URL(String(url), globalThis.location?.href);
    u.protocol = u.protocol.replace(/^http/, 'ws');
    if (!/^wss?:$/.test(u.protocol) || u.hash)
      throw new DOMException(`${String(url)} is not a ws: or wss: URL without a fragment`, 'SyntaxError');
    if (
      protocols !== undefined &&
      typeof protocols !== 'string' &&
      !(Array.isArray(protocols) && protocols.every((p) => typeof p === 'string'))
    ) {
      throw new TypeError('protocols must be a string or an array of strings');
    }
    this.#url = u.href;
    if (c.signal?.aborted) {
      this.#state = 3;
      return;
    }
    c.signal?.addEventListener('abort', () => this.close(), { once: true, signal: this.#ac.signal });
    const self = this;
    life(
      {
        url: this.#url,
        protocols,
        c,
        get binaryType() {
          return self.#binaryType;
        },
        opened: (ws) => this.#opened(ws),
        closed: (e, last) => this.#closed(e, last),
        failed: (info) => this.#failed(info),
      },
      this.#ac.signal,
    );
  }

  get url() {
    return this.#url;
  }
  get readyState() {
    return this.#state;
  }
  get protocol() {
    return this.#ws?.protocol ?? '';
  }
  get extensions() {
    return this.#ws?.extensions ?? '';
  }
  get bufferedAmount() {
    return (this.#ws?.bufferedAmount ?? 0) + this.#queued;
  }
  get binaryType() {
    return this.#binaryType;
  }
  set binaryType(t) {
    if (t !== 'blob' && t !== 'arraybuffer') return;
    this.#binaryType = t;
    if (this.#ws) this.#ws.binaryType = t;
  }
  /** @returns {0} */
  get CONNECTING() {
    return 0;
  }
  /** @returns {1} */
  get OPEN() {
    return 1;
  }
  /** @returns {2} */
  get CLOSING() {
    return 2;
  }
  /** @returns {3} */
  get CLOSED() {
    return 3;
  }

  /** @returns {((ev: Event) => any) | null} */
  get onclose() {
    return handler(this, 'close');
  }
  set onclose(f) {
    setHandler(this, 'close', f);
  }

  /**
   * Sends `data` now when open, else queues it (up to `maxQueued`) until the next connection opens.
   * @param {string | ArrayBufferLike | Blob | ArrayBufferView} data
   */
  send(data) {
    if (this.#state > 1) throw new DOMException('the WebSocket is closing or closed', 'InvalidStateError');
    if (this.#state === 1 && this.#ws.readyState === 1) return this.#ws.send(data);
    const c = this.#c;
    if (this.#queue.length < c.maxQueued) {
      this.#queue.push(data);
      this.#queued += size(data);
      return;
    }
    const message = `the queue of messages sent while not open is full (maxQueued ${c.maxQueued}): this one was not sent`;
    if (c.overflow === 'throw') throw new RangeError(message);
    this.dispatchEvent(Object.assign(errorEvent({ message }), { dropped: data }));
  }

  /**
   * Closes the connection for good (no reconnect).
   * @param {number} [code]
   * @param {string} [reason]
   */
  close(code, reason) {
    if (code !== undefined && code !== 1000 && !(Number.isInteger(code) && code >= 3000 && code <= 4999)) {
      throw new DOMException('code must be 1000 or in [3000, 4999]', 'InvalidAccessError');
    }
    if (reason !== undefined && new TextEncoder().encode(reason).length > 123)
      throw new DOMException('reason must be at most 123 bytes', 'SyntaxError');
    if (this.#state > 1) return;
    const ws = this.#ws;
    this.#state = 2;
    this.#ac.abort();
    this.#queue = [];
    this.#queued = 0;
    if (ws) ws.close(code, reason);
    else this.#closed({ code: code ?? 1005, reason: reason ?? '', wasClean: false }, true);
  }

  /** @param {any} ws */
  #opened(ws) {
    if (this.#state > 1) return ws.close();
    this.#ws = ws;
    this.#state = 1;
    const origin = new URL(this.#url).origin;
    ws.addEventListener('message', (/** @type {MessageEvent} */ e) => {
      if (this.#ws === ws) this.dispatchEvent(messageEvent('message', { data: e.data, origin }));
    });
    this.dispatchEvent(new Event('open'));
    const q = this.#queue;
    [this.#queue, this.#queued] = [[], 0];
    for (const d of q) this.send(d);
  }

  /** @param {{ code: number, reason: string, wasClean: boolean }} e @param {boolean} last */
  #closed(e, last) {
    this.#ws = undefined;
    if (this.#state === 3) return;
    this.#state = last ? 3 : 0;
    if (last) this.#ac.abort();
    this.dispatchEvent(closeEvent(e));
  }

  /** @param {{ message: string, error?: unknown, status?: number, delayMs?: number }} info */
  #failed(info) {
    if (this.#state > 1) return;
    const last = info.delayMs === undefined;
    this.dispatchEvent(errorEvent(info));
    if (last) this.#closed({ code: 1006, reason: '', wasClean: false }, true);
  }
}
