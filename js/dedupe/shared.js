// @ts-check
// One call shared by the callers of one key (js/dedupe/index.js): it runs
// under a signal of its own; each caller waits on it under its own signal,
// and the last one to go aborts it. When it answers, each caller still
// there gets its own Response (a clone, taken before any is handed out),
// whose body follows that caller's signal; when it rejects, each rejects
// with its error. Either way its key is freed.

/**
 * @typedef {object} Waiter
 * @property {(r: Response) => void} resolve
 * @property {(e: unknown) => void} reject
 * @property {AbortSignal | undefined} signal
 * @property {() => void} off takes its abort listener away
 */

/**
 * `res` for a caller whose signal is `signal`: a body that errors with the
 * signal's reason when it aborts (as fetch's does), cancelling only this
 * caller's copy.
 * @param {Response} res
 * @param {AbortSignal | undefined} signal
 */
function following(res, signal) {
  if (!signal || !res.body) return res;
  const ts = new TransformStream();
  res.body.pipeTo(ts.writable, { signal }).catch(() => {});
  const r = new Response(ts.readable, { status: res.status, statusText: res.statusText, headers: res.headers });
  // (a Response made here has no URL of its own: the answer's, as fetch gives it)
  Object.defineProperties(r, { url: { value: res.url }, redirected: { value: res.redirected } });
  return r;
}

export class SharedCall {
  /** Its signal's controller: aborted when every caller has gone. */
  ac = new AbortController();
  /** The callers waiting on it. @type {Set<Waiter>} */
  #waiting = new Set();
  /** It has settled. */
  #done = false;
  /** The shared calls in flight, by key (its own among them until it is freed). @type {Map<string, SharedCall>} */
  #calls;
  /** Its key. @type {string} */
  #k;

  /**
   * The call of key `k`, in flight in `calls` (until it settles, or every
   * caller has gone).
   * @param {Map<string, SharedCall>} calls
   * @param {string} k
   */
  constructor(calls, k) {
    this.#calls = calls;
    this.#k = k;
    calls.set(k, this);
  }

  /** Frees its key: a call made after this sends again. */
  #free() {
    if (this.#calls.get(this.#k) === this) this.#calls.delete(this.#k);
  }

  /**
   * Ends it with `res` or error `e`: every caller still waiting gets its
   * own copy, or the error.
   * @param {Response | undefined} res
   * @param {unknown} [e]
   */
  settle(res, e) {
    this.#done = true;
    this.#free();
    const ws = [...this.#waiting];
    for (const w of ws) w.off();
    if (!res) {
      for (const w of ws) w.reject(e);
      return;
    }
    // (every copy taken before any is handed out: none has been read yet)
    const copies = ws.map((_, i) => (i < ws.length - 1 ? res.clone() : res));
    if (!ws.length) res.body?.cancel().catch(() => {});
    for (const [i, w] of ws.entries()) w.resolve(following(copies[i], w.signal));
  }

  /**
   * Waits on it under `signal`.
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<Response>}
   */
  join(signal) {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#waiting.delete(w);
        w.off();
        reject(signal?.reason);
        // (the last caller gone: the shared call is aborted, and its key freed)
        if (!this.#waiting.size && !this.#done) {
          this.#free();
          this.ac.abort(signal?.reason);
        }
      };
      /** @type {Waiter} */
      const w = { resolve, reject, signal, off: () => signal?.removeEventListener('abort', onAbort) };
      this.#waiting.add(w);
      signal?.addEventListener('abort', onAbort);
    });
  }
}
