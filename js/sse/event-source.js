// @ts-check
// `wasm-backoff/sse`: EventSource, the WHATWG interface (readyState, url,
// withCredentials, open/message/error and named events, the on… handlers,
// close()) on fetch, so it runs in pages, workers, workerd, Deno, Bun and
// Node 20, with what the native one cannot take: headers, a method and a
// body, a custom fetch, a signal, a gate, and the package's backoff options.
// Its reconnects are the engine's (js/sse/life.js): jittered, on the
// server's `retry:` as the base, server-named waits honoured; `shared: true`
// holds one connection for every tab of the origin (js/sse/shared.js).
import { readAll, spec, nullable, fn, flag, abortSignal } from '../options.js';
import { replayable } from '../policy.js';
import { reconnectOptions, gateOption, optionsOf, errorEvent, messageEvent } from './reconnect.js';
import { Handlers } from './handlers.js';
import { life } from './life.js';
import { share } from './shared.js';

/** The reconnection time the standard leaves to the user agent (3 s in Chromium and Firefox): the default base. */
const BASE_MS = 3000;
const TOKEN = /^[!#$%&'*+.^_`|~\w-]+$/;

/** EventSource's own options over the reconnect options (EventSourceOptions), in the order they are checked. */
export const SSE_OPTIONS = {
  // (null: GET, as undefined)
  method: nullable(
    spec(
      (v) => typeof v === 'string' && TOKEN.test(v),
      'an HTTP method name',
      undefined,
      'GET',
      (v) => v.toUpperCase(),
    ),
  ),
  headers: spec(
    () => true,
    'a HeadersInit',
    undefined,
    undefined,
    (v) => {
      try {
        new Headers(v);
      } catch (e) {
        throw new TypeError(`headers must be a HeadersInit (${/** @type {Error} */ (e).message})`);
      }
      return v;
    },
  ),
  body: spec(
    (v) => replayable(v) && typeof v !== 'function',
    'sent again at each reconnect: a string, bytes, Blob, FormData or URLSearchParams',
    undefined,
    undefined,
    (v) => v ?? undefined,
  ),
  gate: gateOption(),
  withCredentials: flag(),
  fetch: fn(),
  signal: abortSignal(),
  shared: flag(),
};

/**
 * The options, checked now.
 * @param {Record<string, any>} o from `own`
 */
function read(o) {
  const { withCredentials, fetch, ...c } = readAll(o, SSE_OPTIONS);
  return { ...reconnectOptions(o, BASE_MS), ...c, credentials: withCredentials, send: fetch };
}

/** @typedef {import('../../types/sse/index.js').EventSourceOptions} EventSourceOptions */

export class EventSource extends Handlers {
  static CONNECTING = /** @type {const} */ (0);
  static OPEN = /** @type {const} */ (1);
  static CLOSED = /** @type {const} */ (2);
  #url;
  #credentials;
  /** @type {0 | 1 | 2} */
  #state = 0;
  #ac = new AbortController();

  /**
   * @param {string | URL} url
   * @param {EventSourceOptions} [options]
   */
  constructor(url, options) {
    super();
    const c = read(optionsOf(options));
    try {
      this.#url = new URL(String(url), globalThis.location?.href).href;
    } catch {
      throw new DOMException(`${String(url)} is not a valid URL`, 'SyntaxError');
    }
    this.#credentials = c.credentials;
    const stop = () => this.close();
    if (c.signal?.aborted) {
      this.#state = 2;
      return;
    }
    c.signal?.addEventListener('abort', stop, { once: true });
    this.#ac.signal.addEventListener('abort', () => c.signal?.removeEventListener('abort', stop), { once: true });
    /** @type {import('./life.js').Host} */
    const host = {
      url: this.#url,
      c,
      lastId: '',
      opened: () => this.#opened(),
      message: (type, data, lastEventId) => {
        host.lastId = lastEventId;
        this.#message(type, data, lastEventId);
      },
      failed: (info) => this.#failed(info),
    };
    if (c.shared && share(host, this.#ac.signal, (h) => life(h, this.#ac.signal))) return;
    life(host, this.#ac.signal);
  }

  get url() {
    return this.#url;
  }
  get withCredentials() {
    return this.#credentials;
  }
  get readyState() {
    return this.#state;
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
  get CLOSED() {
    return 2;
  }

  /** Closes the stream: no event, no timer, no request after it. */
  close() {
    this.#state = 2;
    this.#ac.abort();
  }

  #opened() {
    if (this.#state === 2) return;
    const was = this.#state;
    this.#state = 1;
    if (was !== 1) this.dispatchEvent(new Event('open'));
  }

  /** @param {string} type @param {string} data @param {string} lastEventId */
  #message(type, data, lastEventId) {
    if (this.#state === 2) return;
    this.dispatchEvent(messageEvent(type, { data, lastEventId, origin: new URL(this.#url).origin }));
  }

  /** @param {{ message: string, error?: unknown, status?: number, delayMs?: number }} info */
  #failed(info) {
    if (this.#state === 2) return;
    const last = info.delayMs === undefined;
    this.#state = last ? 2 : 0;
    if (last) this.#ac.abort();
    this.dispatchEvent(errorEvent(info));
  }
}
