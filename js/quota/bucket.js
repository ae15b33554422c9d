// @ts-check
// One budget of a quota key (js/quota/index.js): requests or tokens per
// minute, as a bucket that refills continuously (the model both OpenAI and
// Anthropic describe: capacity replenished up to the limit), kept in step
// with what the server says it has left.
//
// An attempt reserves its units at once (the level may go below zero) and
// goes when the level is back at zero: a queue in order of arrival, with no
// list to keep. An attempt that gives up its wait (aborted) gives its units
// back (to the calls that come after it: those waiting keep their turn).
//
// The server's word, from an answer (`told`):
//   limit      the capacity, when the options name none (learned);
//   remaining  the level is never above it, less the units still waiting
//              to go (the server cannot have counted those). Units already
//              sent and not answered may or may not be counted (requests
//              overtake each other on the way): they are not taken off, so
//              an answer may say a little more than is left; the level only
//              ever comes down to what an answer says, never up, and takes
//              the lowest. What an answer takes off (another client's
//              spending on the same key) is added to `lowered`: the calls
//              already waiting wait that much longer (js/quota/lane.js).
//   reset      when the server's budget is full again: once at most half of
//              the limit remains, the refill pace is the server's own,
//              (limit - remaining) / reset, when slower than the limit per
//              minute (a limit per day refills as slowly as the server says).
//              Above half, the pace is the limit per minute (a reset of a
//              second or so, as Anthropic's timestamps give it, says too little).

/** A minute, in ms: the period of the limits both APIs publish. */
const MINUTE = 60_000;

export class Bucket {
  /** Units reserved and still waiting to be sent. */
  waiting = 0;
  /** Units the answers took off the level so far (never decreases). */
  lowered = 0;

  /**
   * @param {number | undefined} perMinute the options' limit (undefined: learned from the answers)
   * @param {number} now
   */
  constructor(perMinute, now) {
    /** The options' limit. */
    this.own = perMinute;
    /** The capacity in use (undefined: none known yet; nothing waits). @type {number | undefined} */
    this.cap = perMinute;
    /** Units per ms. */
    this.rate = (perMinute ?? 0) / MINUTE;
    /** The level at `at` (may be below zero: units reserved ahead). */
    this.level = perMinute ?? 0;
    this.at = now;
  }

  /** The level at `now`, refilled up to the capacity. @param {number} now */
  #refill(now) {
    const cap = /** @type {number} */ (this.cap);
    if (now > this.at) this.level = Math.min(cap, this.level + (now - this.at) * this.rate);
    this.at = Math.max(this.at, now);
    return this.level;
  }

  /**
   * How long `units` would wait now (0: at once; Infinity: never, the
   * capacity being 0).
   * @param {number} now
   * @param {number} units
   */
  wait(now, units) {
    if (this.cap === undefined || !units) return 0;
    const short = units - this.#refill(now);
    if (short <= 0) return 0;
    return this.rate > 0 ? short / this.rate : Infinity;
  }

  /**
   * Reserves `units` (after `wait` said when they are there): they wait to be sent.
   * @param {number} units
   */
  take(units) {
    if (this.cap !== undefined) this.level -= units;
    this.waiting += units;
  }

  /**
   * The reservation of `units` goes (its wait is over).
   * @param {number} units
   */
  go(units) {
    this.waiting -= units;
  }

  /** Gives back `units` reserved and not sent. @param {number} units */
  give(units) {
    this.waiting -= units;
    if (this.cap !== undefined) this.level = Math.min(this.cap, this.level + units);
  }

  /**
   * What an answer said (each undefined when its header was absent or
   * unreadable).
   * @param {number} now
   * @param {number | undefined} limit
   * @param {number | undefined} remaining
   * @param {number | undefined} resetMs
   */
  told(now, limit, remaining, resetMs) {
    if (limit !== undefined && limit >= 0) {
      const cap = this.own ?? limit;
      if (this.cap === undefined) [this.level, this.at] = [cap, now];
      this.cap = cap;
      let rate = cap / MINUTE;
      if (remaining !== undefined && resetMs !== undefined && resetMs > 0 && limit - remaining >= limit / 2) {
        rate = Math.min(rate, (limit - remaining) / resetMs);
      }
      this.rate = rate;
    }
    if (remaining !== undefined && this.cap !== undefined) {
      const was = this.#refill(now);
      this.level = Math.min(was, remaining - this.waiting);
      this.lowered += was - this.level;
    }
  }

  /**
   * How much longer a reservation made when `lowered` was `from` waits now:
   * what the answers took off since, at the refill pace (Infinity: no pace).
   * @param {number} from
   */
  later(from) {
    const d = this.lowered - from;
    return d <= 0 ? 0 : this.rate > 0 ? d / this.rate : Infinity;
  }

  /** The level now (for `state`). @param {number} now */
  levelAt(now) {
    return this.cap === undefined ? undefined : this.#refill(now);
  }
}
