// @ts-check
// staleIfError's job (js/cache/index.js), around the call's job: each good
// answer (a 200 that may be stored) is copied as it comes, before anyone
// reads it, and stored (its body up to `maxBodyBytes`, read beside the
// caller's, off the call's path: the call never waits on the store). The
// call's key reaches the fallback through onDone's info (`about`, under a
// symbol of this module's).
import { readUpTo, joined } from '../body.js';
import { Around } from '../auth/around.js';
import { pairs } from './stores.js';

/** Where onDone's info carries the call's key (for the fallback; no one else reads it). */
export const STALE = Symbol('stale');

/**
 * Whether an answer may be stored: a 200 that says nothing against it
 * (`no-store`, `Vary: *`), is not a stream of events, and is not longer
 * than `max` by its own Content-Length.
 * @param {Response} res
 * @param {number} max
 */
function storable(res, max) {
  const h = res.headers;
  return (
    res.status === 200 &&
    !!res.body &&
    !/(?:^|,)\s*no-store\s*(?:,|$)/i.test(h.get('cache-control') ?? '') &&
    h.get('vary')?.trim() !== '*' &&
    !/^text\/event-stream/i.test(h.get('content-type') ?? '') &&
    !(Number(h.get('content-length')) > max)
  );
}

export class Stale extends Around {
  /**
   * @param {any} job
   * @param {import('./stores.js').Store} store
   * @param {string} key the call's
   * @param {number} max maxBodyBytes
   */
  constructor(job, store, key, max) {
    super(job);
    this.store = store;
    this.key = key;
    this.max = max;
  }

  /** The inner job's, and the call's key for the fallback. */
  about() {
    return { ...this.job.about?.(), [STALE]: this.key };
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   */
  async attempt(call, n, signal) {
    const o = await this.job.attempt(call, n, signal);
    const res = o.res;
    if (!o.failed && res && storable(res, this.max)) this.#keep(res.clone());
    return o;
  }

  /**
   * Reads `copy` (up to the bound) and stores it; a body longer than the
   * bound, or one that fails, is not stored. Never rejects.
   * @param {Response} copy
   */
  async #keep(copy) {
    const reader = /** @type {ReadableStream<Uint8Array>} */ (copy.body).getReader();
    try {
      const { chunks, done } = await readUpTo(async () => {
        const r = await reader.read();
        return r.done ? undefined : r.value;
      }, this.max);
      if (!done) return void reader.cancel().catch(() => {});
      const headers = pairs(copy.headers).filter(([k]) => k !== 'set-cookie');
      const at = Date.now();
      await this.store.put(this.key, { status: copy.status, statusText: copy.statusText, headers, body: await joined(chunks), at });
    } catch {
      reader.cancel().catch(() => {});
    }
  }
}
