// @ts-check
// One race of a hedged attempt (js/fetch/hedge.js): the racers still out,
// the timer of the next hedge, the last answer judged. It ends with the
// first answer that ends the call, or, when every racer has answered with
// one worth a retry, with the last of them (the lane then decides); or with
// the error of a racer that rejected (the caller's abort, the deadline, a
// hook that threw). When it ends, the racers still out are aborted and the
// answers it does not end with are dropped.
import { MAX_TIMER } from '../gen/boundary.js';
import { drop } from '../hooks.js';

/** @typedef {import('../engine/loop.js').Outcome} Outcome */
/** @typedef {import('../engine/loop.js').Verdict} Verdict */

export class Race {
  /** The racers still out: their controllers. @type {Set<AbortController>} */
  #live = new Set();
  /** The next hedge's timer. @type {any} */
  #timer;
  /** Hedges sent in this race. */
  #hedges = 0;
  /** The race has ended: what comes after is dropped. */
  #over = false;
  /** The last answer judged, and its verdict. @type {[Outcome, Verdict] | undefined} */
  #last;
  /** The hedged job: the fetch job, the settings, the call's counts. @type {import('./hedge.js').Hedged} */
  #by;
  /** @type {import('../engine/call.js').Call} */
  #call;
  /** The attempt's number (its hedges take the call's next). */
  #n;
  /** The caller's signal. @type {AbortSignal | undefined} */
  #signal;
  /** @type {(o: Outcome, last: [Outcome, Verdict]) => void} */
  #resolve;
  /** @type {(e: unknown) => void} */
  #reject;
  /** Aborts the racers when the caller's signal aborts. */
  #onAbort;

  /**
   * @param {import('./hedge.js').Hedged} by the hedged job: the fetch job, the settings, the call's counts
   * @param {import('../engine/call.js').Call} call
   * @param {number} n the attempt's number (its hedges take the call's next)
   * @param {AbortSignal | undefined} signal the caller's
   * @param {(o: Outcome, last: [Outcome, Verdict]) => void} resolve the race ends with `o` (`last`'s)
   * @param {(e: unknown) => void} reject
   */
  constructor(by, call, n, signal, resolve, reject) {
    this.#by = by;
    this.#call = call;
    this.#n = n;
    this.#signal = signal;
    this.#resolve = resolve;
    this.#reject = reject;
    // Each racer's signal follows the caller's by a listener taken away
    // when the race ends (AbortSignal.any would keep an entry per racer
    // on a long-lived caller's signal).
    this.#onAbort = () => {
      for (const ac of this.#live) ac.abort(signal?.reason);
    };
    signal?.addEventListener('abort', this.#onAbort);
  }

  /**
   * Ends the race with answer `o` (the last judged), or with error `e`.
   * @param {Outcome | undefined} o
   * @param {unknown} [e]
   */
  #end(o, e = undefined) {
    this.#over = true;
    clearTimeout(this.#timer);
    this.#signal?.removeEventListener('abort', this.#onAbort);
    for (const ac of this.#live) ac.abort(new DOMException('another attempt answered first', 'AbortError'));
    const last = this.#last;
    if (last && last[0] !== o) drop(last[0]);
    if (!o) return this.#reject(e);
    this.#resolve(o, /** @type {[Outcome, Verdict]} */ (last));
  }

  /**
   * Sends racer `k` (the attempt, or a hedge), with the next hedge's timer.
   * @param {number} k
   */
  launch(k) {
    const { job, h } = this.#by;
    clearTimeout(this.#timer);
    const ac = new AbortController();
    this.#live.add(ac);
    // (a timer's longest: past it, setTimeout would fire at once)
    if (this.#hedges < h.maxHedges) this.#timer = setTimeout(() => this.#next(), Math.min(h.delayMs, MAX_TIMER));
    if (this.#signal?.aborted) ac.abort(this.#signal.reason);
    // The racer is an attempt of the call, with its own number and signal.
    job
      .attempt(this.#call, k, ac.signal)
      .then((o) => this.#answered(ac, k, o))
      .catch((e) => {
        // (the caller's abort, the deadline, a hook that threw: the race ends with it)
        this.#live.delete(ac);
        if (!this.#over) this.#end(undefined, e);
      });
  }

  /**
   * Racer `k` (signal `ac`'s) answered `o`: judged, it ends the race, or it
   * waits for the racers still out.
   * @param {AbortController} ac
   * @param {number} k
   * @param {Outcome} o
   */
  async #answered(ac, k, o) {
    // A hedge refused before it was sent (not a network failure: a
    // runtime's subrequest cap, "Too many subrequests.") is as if it
    // never went: it never ends the race.
    if (k !== this.#n && o.failed && !o.network) {
      this.#live.delete(ac);
      if (!this.#over && !this.#live.size && this.#last) this.#end(this.#last[0]);
      return;
    }
    const v = this.#over ? undefined : await this.#by.job.judge(this.#call, o);
    this.#live.delete(ac);
    if (this.#over || !v) return drop(o);
    if (this.#last) drop(this.#last[0]);
    this.#last = [o, v];
    this.#by.won = k;
    if (v.why) return this.#end(o);
    // (worth a retry: the race goes on while a racer is out; then the lane decides. A quota hears
    // the answer now: a 429 that names a wait holds its key, and the next hedge with it.)
    this.#by.heard(this.#call, o);
    if (!this.#live.size) this.#end(o);
  }

  /** Sends the next hedge, if one may go. */
  #next() {
    if (this.#over) return;
    const k = this.#by.hedge(this.#call);
    if (!k) return;
    this.#hedges++;
    this.launch(k);
  }
}
