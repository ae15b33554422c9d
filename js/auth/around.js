// @ts-check
// A job around a job (js/engine/loop.js `Job`): what a feature that wraps
// the fetch job (auth's, js/auth/job.js; the stale cache's,
// js/cache/stale.js) passes on unchanged. Each method and field the loop, a
// hedge's race (js/fetch/hedge.js) or another feature reads of a job is the
// inner job's: a feature overrides only what it changes (`attempt`,
// `about`). Nothing is copied: the inner job's state stays its own (a
// beforeRetry that swaps the request changes the inner job).

export class Around {
  /**
   * @param {any} job the job inside (the fetch job, or one around it)
   */
  constructor(job) {
    this.job = job;
    // (only when the inner job has one: the loop skips a job without `before`)
    this.before = job.before && ((/** @type {any} */ call, /** @type {any} */ o) => job.before(call, o));
    this.result = job.result?.bind(job);
    this.failure = job.failure?.bind(job);
  }

  /** The request as the caller passed it (or as beforeRetry swapped it). */
  get input() {
    return this.job.input;
  }

  /** Whether the request's body can be sent again. @returns {boolean} */
  get body() {
    return this.job.body;
  }

  /** Whether the request as it stands may be sent again. @returns {boolean} */
  idempotent() {
    return this.job.idempotent();
  }

  /**
   * Adds a request stage to the fetch job inside.
   * @param {import('../fetch/request.js').Stage} stage
   */
  use(stage) {
    this.job.use(stage);
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<import('../engine/loop.js').Outcome>}
   */
  attempt(call, n, signal) {
    return this.job.attempt(call, n, signal);
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   */
  judge(call, o) {
    return this.job.judge(call, o);
  }

  /** @returns {object | undefined} */
  about() {
    return this.job.about?.();
  }
}
