// @ts-check
// Hedging (the `hedge` option): one attempt of the engine (js/engine/loop.js)
// becomes a race. The request goes out; when it has not answered within
// `delayMs`, the same request goes out again (up to `maxHedges` more), and
// the first answer that ends the call (one the judge would not retry) wins.
// The others are aborted and their bodies cancelled. An answer worth a
// retry does not start a hedge: it waits for the racers still out, and
// when none is left the race ends with it, so retries stay the lane's
// (the gate's accounting, the backoff, maxAttempts); a quota hears it at
// once (a 429's wait holds its key, and the next hedge). The race is a Job
// around the fetch job, so the loop's lane (the gate, the schedule), the
// budget, the deadline and the caller's signal act on it as on any attempt:
// when every racer has failed, the loop backs off and races again.
//
// A hedge is sent only while the request may be sent twice (its method, an
// idempotency key, or retryNonIdempotent) and its body can be (not a
// ReadableStream, nor a body the stream entry feeds), the budget grants a retry,
// the gate (if any) has the target's circuit closed, and a quota (`limit`,
// if any) has the request and tokens at once, which the hedge then spends:
// extra load only while the target looks healthy, bounded by the budget and
// counted in the quota.
import { own, readAll, required, ms, int } from '../options.js';
import { Race } from './race.js';

/** hedge()'s options (HedgeOptions; each message begins `hedge: `). */
export const HEDGE_OPTIONS = { delayMs: required(ms(undefined, false, true)), maxHedges: int(1, 10, 1) };

/**
 * The `hedge` option of the fetch driver (what `hedge(options)` of
 * `wasm-backoff/hedge` makes): its settings, checked now, and how a call's
 * job becomes a race (the fetch driver calls `wrap`).
 * @param {{ delayMs: number, maxHedges?: number }} options
 */
export function hedge(options) {
  const h = readAll(own(options, 'hedge options'), HEDGE_OPTIONS, 'hedge: ');
  const made = Object.freeze({
    ...h,
    feature: 'hedge',
    /**
     * The call's job, raced (a hedge goes only when the call's lane, as wired in the end, lets it).
     * @param {import('./options.js').Wiring} x
     */
    job: (x) => new Hedged(x.job, h, x),
  });
  // (the .d.ts's Hedge carries a type-only mark of what hedge() made)
  return /** @type {typeof made & import('../../types/hedge/index.js').Hedge} */ (made);
}

/** A browser's window or worker (navigator.onLine: neither Node, Deno, Bun nor workerd has it). */
const BROWSER = 'onLine' in (globalThis.navigator ?? {});

/**
 * The fetch job with each attempt raced against its hedges.
 */
export class Hedged {
  /** Hedges sent so far, over the call's rounds. */
  sent = 0;
  /** The winner of the last race: its number. */
  won = 0;
  /** The attempts that are hedges (their numbers). @type {Set<number>} */
  #hedges = new Set();
  /** The last race's answer and the verdict it was reached on (each answer is judged once). @type {[unknown, import('../engine/loop.js').Verdict] | undefined} */
  #judged;
  /** The call's wiring: its lane (read at each hedge: the features after this one may wrap it). @type {{ lane: import('../engine/loop.js').Lane }} */
  #x;

  /**
   * @param {import('./request.js').FetchJob} job
   * @param {{ delayMs: number, maxHedges: number }} h
   * @param {{ lane: import('../engine/loop.js').Lane }} x the call's wiring (its lane)
   */
  constructor(job, h, x) {
    this.job = job;
    this.h = h;
    this.#x = x;
    this.before = job.before && ((/** @type {any} */ call, /** @type {any} */ o) => job.before(call, o));
    // (the stream entry's: the body's idleTimeoutMs)
    this.result = /** @type {any} */ (job).result?.bind(job);
    this.failure = /** @type {any} */ (job).failure?.bind(job);
    // In a browser, concurrent requests for one URL wait on its HTTP cache
    // entry (Chromium's cache lock: the hedge would leave only once the
    // first answered), so a hedge there skips the cache (`cache:
    // 'no-store'`). Elsewhere (Node, Deno, Bun, workerd: no such lock;
    // workerd refuses the option before compatibility date 2024-11-11) it
    // is sent as the first was.
    if (BROWSER) job.use((input, init, n) => [input, this.#hedges.has(n) ? { ...init, cache: 'no-store' } : init]);
  }

  /** A racer's answer worth a retry, as it comes, told the call's lane (a quota follows its headers). @param {import('../engine/call.js').Call} call @param {import('../engine/loop.js').Outcome} o */
  heard(call, o) {
    this.#x.lane.heard?.(call, o);
  }

  /** The inner job's (auth's `refreshed`), with which attempt won the race and how many hedges went, for onDone. */
  about() {
    const more = /** @type {any} */ (this.job).about?.();
    return this.won ? { ...more, won: this.won, hedges: this.sent } : more;
  }

  /**
   * The verdict the race reached on its answer (each answer is judged once:
   * shouldRetry is asked once per answer).
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   */
  judge(call, o) {
    const j = this.#judged;
    return j && j[0] === o ? j[1] : this.job.judge(call, o);
  }

  /**
   * Attempt `n` and its hedges (each numbered: the call's count grows by
   * one per hedge sent). Resolves with the winner, or with the last answer
   * when none ends the call; rejects as the loop expects (the caller's
   * abort, the deadline, a hook that threw).
   * @param {import('../engine/call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<import('../engine/loop.js').Outcome>}
   */
  attempt(call, n, signal) {
    const { job } = this;
    // (a body sent once, a ReadableStream, is not raced: a copy could not send it)
    if (!job.idempotent() || !job.body) return job.attempt(call, n, signal);
    return new Promise((resolve, reject) => {
      /** The race ended with answer `o`, as judged (`last`): the loop's judge is told that verdict. */
      const won = (/** @type {any} */ o, /** @type {any} */ last) => {
        this.#judged = last;
        resolve(o);
      };
      new Race(this, call, n, signal, won, reject).launch(n);
    });
  }

  /**
   * The number of a hedge of `call` that may go now, counted as sent (0:
   * none may: the call is aborted or past its deadline, the lane's target
   * does not look healthy, a quota has not the hedge's units at once, or
   * the budget grants no retry).
   * @param {import('../engine/call.js').Call} call
   */
  hedge(call) {
    const lane = this.#x.lane;
    if (call.signal?.aborted || call.ds?.aborted || !(lane.healthy?.() ?? true)) return 0;
    if (lane.spare && !lane.spare()) return 0;
    const c = call.c;
    if (c.budget && !c.budget.withdraw(Date.now())) return 0;
    lane.spend?.(); // (the quota's units: checked first, spent once nothing else refuses)
    this.sent++;
    const k = call.count();
    this.#hedges.add(k);
    return k;
  }
}
