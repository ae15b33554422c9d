// @ts-check
// auth()'s error (js/auth/index.js, js/auth/refresh.js), in a module of its
// own: the refresh throws it, and the entry exports it.

/** The refresh failed: `cause` is what it threw (or the TimeoutError of `timeoutMs`). */
export class AuthRefreshError extends Error {
  /**
   * @param {unknown} cause
   */
  constructor(cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`auth: refresh() failed: ${why}`, { cause });
    this.name = /** @type {const} */ ('AuthRefreshError');
  }
}
