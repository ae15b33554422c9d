// @ts-check
// The adaptive limiter of a fleet (sharedGate with `limit: 'adaptive'`):
// one limiter per target in its GateObject, its rate handed to the isolates
// as shares that hold for LEASE_MS (leases, as Google's Doorman hands out
// capacity), so that the fleet probes above the server's capacity once, not
// once per isolate, and a throttle cuts the fleet's rate once, not once per
// isolate that saw a 429.
//
// - While no isolate has been throttled, nothing is shared and nothing is
//   asked: calls go straight out (no round trip).
// - An isolate's first throttling answer (429, or a 503 naming a wait) is
//   reported (`lease`, after the macrotask) with its send rate (measured by
//   its own limiter, which every answer feeds, as a single client's is),
//   its successes and what it wanted since its last report. The object's
//   limiter (the Rust core's, fed the fleet's send rate: the sum of its
//   isolates') cuts the fleet's rate once; an isolate whose first throttle
//   comes after that joins the cut with its own rate (`grow`): it was part
//   of the load that was throttled. Throttles of calls sent before the
//   fleet followed the cut (within LEASE_MS of it, or under an older lease)
//   cut nothing more: one decrease per lease period, as TCP makes one per
//   window. Later cuts are from what the server took (the successes
//   reported), if lower than the fleet's rate, as the core's are: where
//   isolates send less than their shares the fleet's rate is loose, and a
//   cut from it stayed above the capacity (bench/overload.mjs's fleet rows:
//   260–400 req/s on a server of 200).
// - Each isolate then sends through a token bucket of its share of the
//   fleet's rate (max-min fair over what the isolates want; what no one
//   wants is split evenly, room to grow; paced evenly, one token saved up
//   at most), and asks again once the lease is LEASE_MS old, in the
//   background, while calls flow: one round trip per isolate per second at
//   most, none for an idle isolate. Above the rate the last cut was from,
//   the shares add up to OK_GAIN × the successes reported at most (the
//   core's cap: a probe of the fleet's curve ran 80 % above the capacity
//   for the second its shares held).
// - An isolate cuts its own share by β at the first throttle of a lease,
//   at once; the fleet's cut comes with its next share.
// - A server-named wait (Retry-After on a 429) delays the retry of the call
//   that got it, and nothing else: not the isolate, not the fleet (a server
//   at capacity takes other calls meanwhile; bench/overload.mjs's matrix:
//   pausing every call to the target cost half the goodput or more; a down
//   origin's waits are the gate's rounds, shared). No named wait is stored.
// - The object unreachable: the isolate falls back to its own limiter
//   (fed every answer all along), as the gate falls back to its local gate.
import { w, check } from '../wasm.js';
import { sleep } from '../hooks.js';
import { GATE_MESSAGES } from '../gen/boundary.js';
import { LIMITER_BETA, LIMITER_BURST, LIMITER_MIN_RATE, LIMITER_OK_GAIN } from '../gen/policy.js';

/** How long a share holds (ms) before its isolate asks again (while its calls flow). */
export const LEASE_MS = 1000;
/**
 * A request to the object unanswered this long (ms) is given up (in workerd,
 * one whose Worker request ended first is never answered): the isolate goes
 * on alone until its next request (js/fleet/shared-gate.js).
 */
export const STALE_MS = 1000;
/** An isolate not heard from for this long no longer counts in the fleet's rate or shares (ms). */
const GONE_MS = 3 * LEASE_MS;
// The core's constants, rendered from core/src/limiter.rs (js/gen/policy.js):
// the least an isolate is taken to want (req/s) is the core's lowest rate;
// an isolate's share saves up one token at most (sends paced evenly, as the
// core's limiter does; a second's worth sent bursts into a server whose own
// bucket is usually far smaller); the fleet's shares add up to OK_GAIN × the
// successes reported at most; an isolate's own cut at a throttle is β.
const MIN_WANT = LIMITER_MIN_RATE;
const BURST = LIMITER_BURST;
const OK_GAIN = LIMITER_OK_GAIN;
const BETA = LIMITER_BETA;

/** A finite number >= 0 from an RPC's report (anything else: 0). */
const count = (/** @type {unknown} */ v) => (typeof v === 'number' && v >= 0 && Number.isFinite(v) ? v : 0);

/**
 * What an isolate reports with each lease request.
 * @typedef {{ id: string, version: number, rate: number, ok: number, spanMs: number, throttled: number, wanted: number, hungry: boolean }} Report
 */
/**
 * The object's answer: this isolate's share (req/s; Infinity = not limited),
 * the fleet's rate and the version (cuts so far).
 * @typedef {{ rate: number, fleet: number, version: number }} Share
 */

/**
 * The object's side of one target's shared limiter (runtime-free).
 */
export class FleetLimiter {
  /** The core's limiter (its rate is the fleet's). */
  h = check(w.limiter_new(Date.now()), GATE_MESSAGES);
  /** Cuts so far: a lease of an older version was sent before the last cut. */
  version = 0;
  cutAt = -Infinity;
  /** The rate the last cut was from (the fleet's throttled rate, CUBIC's W_max). */
  cutFrom = 0;
  /** @type {Map<string, { rate: number, ok: number, want: number, at: number }>} */
  isolates = new Map();

  /**
   * An isolate's report; answers its share.
   * @param {Report} r
   * @param {number} now
   * @returns {Share}
   */
  lease(r, now) {
    const id = String(r?.id);
    const span = Math.max(count(r?.spanMs), 1) / 1000;
    for (const [k, m] of this.isolates) if (now - m.at > GONE_MS) this.isolates.delete(k);
    // An isolate whose calls waited for their tokens wants more than its share: as much as it can get.
    // (at least MIN_WANT: an isolate that asks has a call to send, and a share of 0 would never send it)
    const want = r?.hungry === true ? Infinity : Math.max(count(r?.wanted) / span, MIN_WANT);
    const me = { rate: count(r?.rate), ok: count(r?.ok), want, at: now };
    this.isolates.set(id, me);
    let sending = 0;
    let took = 0;
    for (const m of this.isolates.values()) {
      sending += m.rate;
      took += m.ok;
    }
    let rate = w.limiter_rate(this.h);
    if (count(r?.throttled) > 0) {
      if (rate === Infinity || (r.version === this.version && now - this.cutAt >= LEASE_MS)) {
        // The cut is from the fleet's rate, not from what it was measured to send: isolates paused by
        // a server-named wait send little meanwhile, and a cut from their sum would collapse the fleet.
        // Later cuts are from what the server took (the successes the isolates counted), if
        // lower: the fleet's rate is loose where the isolates send less than their shares.
        const from = rate === Infinity ? sending : Math.max(sending, rate);
        this.cutFrom = rate === Infinity || !(took > 0) ? from : Math.min(from, took);
        rate = w.limiter_record_rate(this.h, 1, this.cutFrom, now);
        this.version++;
        this.cutAt = now;
      } else if (r.version === 0) {
        rate = w.limiter_grow(this.h, me.rate); // (never had a share: it joins)
        this.cutFrom += me.rate;
      }
    } else if (rate !== Infinity) rate = w.limiter_record_rate(this.h, 0, sending, now);
    const share = { rate: Infinity, fleet: rate, version: this.version };
    if (rate === Infinity) return share;
    // Above the rate last cut from, never more than OK_GAIN × what the server took, as the core's
    // limiter (a probe of the fleet's curve ran 80 % above the capacity for the lease period the
    // shares hold; below it, isolates sitting out a Retry-After took little, and a cap from that
    // took the fleet down with it).
    if (took > 0) share.fleet = Math.min(rate, Math.max(OK_GAIN * took, this.cutFrom));
    share.rate = shareOf(share.fleet, this.isolates, id);
    return share;
  }

  /** What the object knows (stats). */
  toJSON() {
    return { rate: w.limiter_rate(this.h), version: this.version, isolates: this.isolates.size };
  }

  free() {
    w.limiter_free(this.h);
  }
}

/**
 * Isolate `id`'s share of `rate`: max-min fair over what the isolates want
 * (in order of want, each gets what it wants up to an equal part of what
 * is left), then what no one wants split evenly.
 * @param {number} rate
 * @param {Map<string, { want: number }>} isolates
 * @param {string} id
 */
export function shareOf(rate, isolates, id) {
  const wants = [...isolates].sort((a, b) => a[1].want - b[1].want);
  let left = rate;
  let n = wants.length;
  let mine = 0;
  for (const [k, m] of wants) {
    const give = Math.min(m.want, left / n--);
    left -= give;
    if (k === id) mine = give;
  }
  return mine + left / wants.length;
}

/** Frees the isolates' own limiters of leases not freed by hand once they are garbage. */
const owned = new FinalizationRegistry((/** @type {number} */ h) => w.limiter_free(h));

/**
 * An isolate's side of one target's shared limiter: its share as a token
 * bucket (reservations: a caller takes its token at once and waits for it,
 * as the core's limiter), what it counts for its next report, and its own
 * limiter (the core's, fed every answer: it measures the send rate, and
 * decides alone while the object cannot be reached).
 */
export class Lease {
  own = check(w.limiter_new(Date.now()), GATE_MESSAGES);
  /** The share (req/s); Infinity: not limited. */
  rate = Infinity;
  fleet = Infinity;
  tokens = 0;
  at = 0;
  version = 0;
  /** When to ask again (ms); Infinity: only at a throttle. */
  renewAt = Infinity;
  throttled = 0;
  wanted = 0;
  /** Answers since the last report. */
  sent = 0;
  /** Successes since the last report. */
  ok = 0;
  /** Calls that waited for their token since the last report: this isolate wants more than it gets. */
  waited = 0;
  since = Date.now();
  /** The object could not be reached at the last report: the isolate's own limiter decides. */
  alone = false;
  /** The report on its way, and when it was sent. @type {Promise<void> | undefined} */
  pending;
  pendingAt = 0;

  #refill(/** @type {number} */ now) {
    if (now > this.at && this.rate < Infinity) {
      this.tokens = Math.min(BURST, this.tokens + ((now - this.at) / 1000) * this.rate);
    }
    this.at = now; // (a clock that went back re-anchors and refills nothing)
  }

  /**
   * A new share (req/s, finite): tokens reserved ahead keep their send
   * times (the core's limiter does the same), at most BURST saved up.
   */
  #setRate(/** @type {number} */ rate) {
    if (this.tokens < 0 && this.rate < Infinity) this.tokens *= rate / this.rate;
    this.rate = rate;
    this.tokens = Math.min(this.tokens, BURST);
  }

  constructor() {
    owned.register(this, this.own, this);
  }

  /**
   * An answer from the target: `throttled`. (`_ms`, the wait it named, delays
   * that call's retry only: it is not stored here.)
   */
  answered(/** @type {boolean} */ throttled, /** @type {number | undefined} */ _ms, /** @type {number} */ now) {
    w.limiter_record(this.own, +throttled, NaN, NaN, now);
    this.sent++;
    if (!throttled) {
      this.ok++;
      return false;
    }
    if (++this.throttled > 1) return false;
    // The first throttle of this lease: this isolate cuts its own share at once, as a limiter of
    // its own would (the fleet's cut comes with the next share, a lease period away at most:
    // meanwhile a probe that overshot went on costing 429s at every isolate).
    if (this.rate < Infinity) {
      this.#refill(now);
      this.#setRate(Math.max(this.rate * BETA, MIN_WANT));
    }
    return true;
  }

  /**
   * Waits for one attempt's token (the share's or, alone, the own
   * limiter's), within `deadline`; false when that is too far.
   * @param {number} deadline
   * @param {AbortSignal | undefined} signal
   * @param {() => void} renew asks for the next share (called while a long wait goes on, so this isolate stays counted)
   */
  async wait(deadline, signal, renew) {
    const now = Date.now();
    this.wanted++;
    const alone = this.alone;
    const d = alone ? w.limiter_acquire(this.own, now) : this.take(now);
    if (d <= 0) return true;
    const back = () => (alone ? w.limiter_cancel(this.own) : this.untake());
    if (now + d > deadline) {
      back();
      return false;
    }
    try {
      for (let end = now + d, left = d; left > 0; left = end - Date.now()) {
        await sleep(Math.min(left, LEASE_MS), signal);
        if (Date.now() >= this.renewAt) renew();
      }
    } catch (e) {
      back();
      throw e;
    }
    return true;
  }

  /** The share of this isolate (req/s; Infinity: not limited), its own limiter's alone. */
  get share() {
    return this.alone ? w.limiter_rate(this.own) : this.rate;
  }

  free() {
    if (!this.own) return;
    owned.unregister(this);
    w.limiter_free(this.own);
    this.own = 0;
  }

  /** Whether a throttle is reported now: no share yet (the fleet must learn), or the share is LEASE_MS old. */
  due(/** @type {number} */ now) {
    return now >= this.renewAt || (this.rate === Infinity && !this.alone);
  }

  /** Takes a token: how long to wait for it (ms). */
  take(/** @type {number} */ now) {
    let d = 0;
    if (this.rate < Infinity) {
      this.#refill(now);
      if (--this.tokens < 0) d += (-this.tokens / this.rate) * 1000;
    }
    if (d > 0) this.waited++;
    return d;
  }

  /** Gives back a token taken and not used. */
  untake() {
    if (this.rate < Infinity) this.tokens = Math.min(BURST, this.tokens + 1);
  }

  /**
   * The report of what was counted since the last (and counting starts
   * again), with the send rate its own limiter measured.
   */
  report(/** @type {string} */ id, /** @type {number} */ now) {
    // (the own limiter measures in half-seconds, idle ones skipped: before the first has passed, the count so far)
    const rate = w.limiter_measured(this.own) || (this.sent * 1000) / Math.max(now - this.since, 1);
    /** @type {Report} */
    const r = {
      id,
      version: this.version,
      rate,
      // (the successes: that rate × the share of answers that were, so that an isolate that sat out
      // a Retry-After counts at the rate it sends when it sends)
      ok: this.sent > 0 ? (rate * this.ok) / this.sent : rate,
      spanMs: now - this.since,
      throttled: this.throttled,
      wanted: this.wanted,
      hungry: this.waited > 0,
    };
    this.sent = this.ok = this.throttled = this.wanted = this.waited = 0;
    this.since = now;
    return r;
  }

  /** Takes up the object's answer (one that is not a share: as if the object could not be reached). */
  follow(/** @type {Share} */ a, /** @type {number} */ now) {
    if (!(a?.rate > 0 && a.version >= 0)) throw new TypeError('not a share');
    this.#refill(now);
    this.alone = false;
    if (a.rate === Infinity) {
      this.rate = Infinity;
      this.tokens = 0;
    } else this.#setRate(a.rate);
    this.fleet = a.fleet;
    this.version = a.version;
    this.renewAt = this.rate === Infinity ? Infinity : now + LEASE_MS;
  }
}
