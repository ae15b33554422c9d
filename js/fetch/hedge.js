// @ts-check
// Hedging (the `hedge` option): one attempt of the engine (js/engine/loop.js)
// becomes a race. The request goes out; when it has not answered within
// `delayMs`, the same request goes out again (up to `maxHedges` more), and
// the first answer that ends the call (one the judge would not retry) wins.
// The others are aborted and their bodies cancelled. An answer worth a
// retry does not start a hedge: it waits for the racers still out, and
// when none is left the race ends with it, so retries stay the lane's
// (the gate's accounting, the backoff, maxAttempts). The race is a Job
// around the fetch job, so the loop's lane (the gate, the schedule), the
// budget, the deadline and the caller's signal act on it as on any attempt:
// when every racer has failed, the loop backs off and races again.
//
// A hedge is sent only while the request may be sent twice (its method, an
// idempotency key, or retryNonIdempotent) and its body can be (not a
// ReadableStream, nor a body the stream entry feeds), the budget grants a retry, and
// the gate (if any) has the target's circuit closed: extra load only while
// the target looks healthy, bounded by the budget.
import { own } from '../options.js';
import { MAX_TIMER } from '../gen/boundary.js';

/**
 * The `hedge` option of the fetch driver (what `hedge(options)` of
 * `wasm-backoff/hedge` makes): its settings, checked now, and how a call's
 * job becomes a race (the fetch driver calls `wrap`).
 * @param {{ delayMs: number, maxHedges?: number }} options
 */
export function hedge(options) {
  const o = own(options, 'hedge options');
  const { delayMs, maxHedges = 1 } = o;
  const bad = (/** @type {unknown} */ v, /** @type {string} */ msg) => {
    throw new (typeof v === 'number' ? RangeError : TypeError)(`hedge: ${msg}`);
  };
  if (!(typeof delayMs === 'number' && delayMs >= 0 && delayMs < Infinity)) bad(delayMs, 'delayMs must be a finite number >= 0');
  if (!(Number.isInteger(maxHedges) && maxHedges >= 1 && maxHedges <= 10)) bad(maxHedges, 'maxHedges must be an integer in [1, 10]');
  const h = { delayMs, maxHedges };
  const made = Object.freeze({
    ...h,
    /**
     * @param {import('./request.js').FetchJob} job
     * @param {() => boolean} healthy
     */
    wrap: (job, healthy) => new Hedged(job, h, healthy),
  });
  // (the .d.ts's Hedge carries a type-only mark of what hedge() made)
  return /** @type {typeof made & import('../../types/hedge/index.js').Hedge} */ (made);
}

/** A browser's window or worker (navigator.onLine: neither Node, Deno, Bun nor workerd has it). */
const BROWSER = 'onLine' in (globalThis.navigator ?? {});

/** Lets go of an outcome's response body. @param {import('../engine/loop.js').Outcome} o */
const drop = (o) => o.res?.body?.cancel().catch(() => {});

/**
 * The fetch job with each attempt raced against its hedges.
 */
export class Hedged {
  /**
   * @param {import('./request.js').FetchJob} job
   * @param {{ delayMs: number, maxHedges: number }} h
   * @param {() => boolean} healthy the gate (if any) has the attempt's target closed
   */
  constructor(job, h, healthy) {
    this.job = job;
    this.h = h;
    this.healthy = healthy;
    this.before = job.before && ((/** @type {any} */ call, /** @type {any} */ o) => job.before(call, o));
    // (the stream entry's: the body's idleTimeoutMs)
    this.result = /** @type {any} */ (job).result?.bind(job);
    /** Hedges sent so far, over the call's rounds. */
    this.sent = 0;
  }

  /**
   * The job a hedge is sent by. In a browser, concurrent requests for one
   * URL wait on its HTTP cache entry (Chromium's cache lock: the hedge
   * would leave only once the first answered), so a hedge there skips the
   * cache (`cache: 'no-store'`). Elsewhere (Node, Deno, Bun, workerd: no
   * such lock; workerd refuses the option before compatibility date
   * 2024-11-11) it is sent as the first was.
   * @returns {import('./request.js').FetchJob}
   */
  fresh() {
    const job = this.job;
    if (!BROWSER) return job;
    const send = job.send;
    return Object.create(job, { send: { value: (/** @type {any} */ i, /** @type {any} */ o) => send(i, { ...o, cache: 'no-store' }) } });
  }

  /**
   * The verdict the race reached on its answer (each answer is judged once:
   * shouldRetry is asked once per answer).
   * @param {import('../engine/call.js').Call} call
   * @param {any} o
   */
  judge(call, o) {
    return o.verdict ?? this.job.judge(call, o);
  }

  /**
   * Attempt `call.n` and its hedges (each numbered: the call's count grows
   * by one per hedge sent). Resolves with the winner, or with the last
   * answer when none ends the call; rejects as the loop expects (the
   * caller's abort, the deadline, a hook that threw).
   * @param {import('../engine/call.js').Call} call
   * @returns {Promise<import('../engine/loop.js').Outcome>}
   */
  attempt(call) {
    const { job, h } = this;
    // (a body sent once, a ReadableStream, is not raced: a copy could not send it)
    if (!job.idempotent() || !job.body) return job.attempt(call);
    return new Promise((resolve, reject) => {
      /** @type {Set<AbortController>} */
      const live = new Set();
      /** @type {any} */
      let timer;
      let hedges = 0;
      let over = false;
      /** @type {any} */
      let last;
      const end = (/** @type {any} */ o, /** @type {unknown} */ e = undefined) => {
        over = true;
        clearTimeout(timer);
        for (const ac of live) ac.abort(new DOMException('another attempt answered first', 'AbortError'));
        if (last && last !== o) drop(last);
        if (o) resolve(o);
        else reject(e);
      };
      const c = call.c;
      const launch = () => {
        clearTimeout(timer);
        const n = hedges ? ++call.n : call.n;
        const ac = new AbortController();
        live.add(ac);
        // The attempt sees the call as its own, but with its own signal (and number).
        const sub = Object.create(call);
        sub.n = n;
        sub.signal = call.signal ? AbortSignal.any([call.signal, ac.signal]) : ac.signal;
        // (a timer's longest: past it, setTimeout would fire at once)
        if (hedges < h.maxHedges) timer = setTimeout(next, Math.min(h.delayMs, MAX_TIMER));
        job.attempt
          .call(hedges ? this.fresh() : job, sub)
          .then(async (o) => {
            const v = over ? '' : await job.judge(sub, o);
            live.delete(ac);
            if (over) return drop(o);
            Object.assign(o, { verdict: v, about: { won: n, hedges: this.sent } });
            if (v) return end(o);
            if (last) drop(last);
            last = o;
            // (worth a retry: the race goes on while a racer is out; then the lane decides)
            if (!live.size) end(o);
          })
          .catch((e) => {
            live.delete(ac);
            if (!over && !ac.signal.aborted) end(undefined, e);
          });
      };
      /** Sends the next hedge, if one may go. */
      const next = () => {
        if (over || call.signal?.aborted || call.ds?.aborted || !this.healthy()) return;
        if (c.budget && !c.budget.withdraw(Date.now())) return;
        hedges++;
        this.sent++;
        launch();
      };
      launch();
    });
  }
}
