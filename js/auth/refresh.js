// @ts-check
// The refresh state of one auth() value (js/auth/index.js), shared by every
// call given it, and the single flight of `refresh()`:
//   gen      refreshes that succeeded so far: a header read at an older
//            generation is stale (a 401 for it is sent again with the new
//            header, without another refresh);
//   running  the refresh in flight, joined by every call that meets a 401
//            for a header of the current generation; cleared when it
//            settles, so a later 401 starts the next one.
// A refresh that rejects, or does not settle within `timeoutMs`, rejects
// every call waiting on it with an AuthRefreshError.
import { abortable, deadline } from '../hooks.js';
import { AuthRefreshError } from './error.js';

export class Refresh {
  /** Refreshes that succeeded so far. */
  gen = 0;
  /** Refreshes started so far (each shared by the calls that waited on it). */
  started = 0;
  /** The refresh in flight. @type {Promise<void> | undefined} */
  #running;
  /** The caller's refresh. @type {(info: { signal: AbortSignal }) => unknown} */
  #refresh;
  /** @type {number} */
  #timeoutMs;

  /**
   * @param {(info: { signal: AbortSignal }) => unknown} refresh the caller's
   * @param {number} timeoutMs
   */
  constructor(refresh, timeoutMs) {
    this.#refresh = refresh;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * The refresh a header of generation `g` waits for: none when a refresh
   * succeeded since it was read (the header is new already); else the one
   * in flight, or a new one.
   * @param {number} g
   * @returns {Promise<void> | undefined}
   */
  after(g) {
    if (this.gen > g) return undefined;
    if (this.#running) return this.#running;
    this.started++;
    const refresh = this.#refresh; // (called as the caller's function, not as a method of ours)
    const [ac, timer] = deadline('auth timeoutMs', this.#timeoutMs);
    const p = abortable(
      Promise.resolve().then(() => refresh({ signal: ac.signal })),
      ac.signal,
    ).then(
      () => {
        this.gen++;
      },
      (e) => {
        throw new AuthRefreshError(e);
      },
    );
    const running = p.finally(() => {
      clearTimeout(timer);
      this.#running = undefined;
    });
    this.#running = running;
    // (every caller may have gone: the refresh's failure is theirs, never unhandled)
    running.catch(() => {});
    return running;
  }
}
