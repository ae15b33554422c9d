// @ts-check
// The quota's error (js/quota/lane.js throws it; wasm-backoff/quota exports it).

/** A call that could not have its budget before its deadline: nothing was sent. */
export class QuotaError extends Error {
  /**
   * @param {string} key
   * @param {number} waitMs
   */
  constructor(key, waitMs) {
    const w = waitMs === Infinity ? 'never' : `in ${Math.ceil(waitMs)} ms`;
    super(`quota: no budget for ${JSON.stringify(key)} before the call's deadline (maxElapsedMs): it frees ${w}`);
    this.name = /** @type {const} */ ('QuotaError');
    /** The key whose budget was short. */
    this.key = key;
    /** How long the call would have waited for it (Infinity: a limit of 0). */
    this.retryAfterMs = waitMs;
  }
}
