// @ts-check
// The holder's side of a shared stream (js/sse/shared.js): the Host the
// stream runs on in the tab that holds the lock. It tells its own tab
// (`host`) what the stream tells it, and every other tab too, over the
// channel; it keeps whether the connection is open, for a tab that joins.

/** @typedef {import('./life.js').Host} Host */

/** @implements {Host} */
export class Relay {
  /** The holder's connection is open now (told a tab that says hello). */
  open = false;
  /** This tab's. @type {Host} */
  #host;
  /** Tells the other tabs. @type {(m: object) => void} */
  #post;

  /**
   * @param {Host} host this tab's
   * @param {(m: object) => void} post tells the other tabs (nothing once closed)
   */
  constructor(host, post) {
    this.#host = host;
    this.#post = post;
    this.url = host.url;
    this.c = host.c;
  }

  get lastId() {
    return this.#host.lastId;
  }

  set lastId(id) {
    if (id !== this.#host.lastId) this.#post({ k: 'id', id });
    this.#host.lastId = id;
  }

  get retryMs() {
    return this.#host.retryMs;
  }

  set retryMs(ms) {
    this.#post({ k: 'retry', ms });
    this.#host.retryMs = ms;
  }

  opened() {
    this.open = true;
    this.#post({ k: 'open' });
    this.#host.opened();
  }

  /**
   * @param {string} type
   * @param {string} data
   * @param {string} id
   */
  message(type, data, id) {
    this.#post({ k: 'event', type, data, id });
    this.#host.message(type, data, id);
  }

  /** @param {{ message: string, error?: unknown, status?: number, delayMs?: number }} info */
  failed(info) {
    this.open = false;
    this.#post({ k: 'failed', info: { message: info.message, status: info.status, delayMs: info.delayMs } });
    this.#host.failed(info);
  }
}
