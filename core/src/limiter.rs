//! Adaptive client-side rate limiting: a token bucket whose fill rate
//! drops multiplicatively when the server throttles and recovers along a
//! CUBIC curve — the AWS SDKs' adaptive retry mode (`DefaultRateLimiter`:
//! the same β and C, the same half-second send-rate measure), with changes
//! found by measurement (bench/overload.mjs, its scenario matrix):
//!
//! - **One cut per round trip.** A throttle cuts the rate only if its call
//!   was sent after the last cut (TCP's one decrease per window): `n`
//!   calls in flight that the server refuses together cut once, not `n`
//!   times (the SDK cuts per throttle: 20 callers sharing one limiter
//!   took it to its floor of 0.5 req/s within a second). A caller that
//!   does not know when its call went (`sent_ms` NaN) is taken to have
//!   sent it one smoothed round trip ago.
//! - **The cut is from the rate in force** (or, if lower, the rate of
//!   successes measured: what the server took), and the first throttle's
//!   is estimated from the successes so far when no half-second has been
//!   measured yet (the SDK's measure is 0 then: a first burst cut it to its
//!   floor). Counting the calls that asked instead (most of a first burst
//!   still in flight) read 400 req/s off a server of 200 (20 callers,
//!   core/tests/limiter.rs's model): it took more cuts, and 18 more 429s
//!   in the first second, to come down. Successes of calls sent before
//!   that first cut, counted after it (answers come back out of order),
//!   raise its estimate while it is below β × theirs, until a half-second
//!   is measured: on 127.0.0.1 a
//!   429 came back ahead of most of the first burst's 200s, and a cut
//!   from the few counted left 20 callers at 31 req/s of 200.
//! - **Never more than [`OK_GAIN`] × the successes measured.** A rate
//!   the server has not been seen to take is a guess: while some callers
//!   sat out a `Retry-After`, the curve climbed towards the last rate
//!   throttled unchecked (to 389 req/s on a server of 200), and their
//!   retries then came back into it together.
//! - **Growth is capped by demand**, not only by sends: `acquire` counts
//!   every call that asked, so calls that gave up before their token (a
//!   deadline shorter than the wait) still let the rate grow; the SDK's
//!   cap (2 × the send rate) stayed near 0 when they did. A half-second
//!   after an idle gap counts alone (the SDK divides by the whole gap).
//! - **Reservations, paced evenly.** [`Limiter::acquire`] takes its token
//!   at once and answers how long to wait for it, so the bucket may go into
//!   debt: `n` callers arriving together wait 1, 2, …, `n` token times. The
//!   SDK's callers each sleep until *a* token is there, wake together and
//!   race for it, which sends bursts at a server that just said it is full.
//!   The bucket saves up one token at most ([`BURST`]), and a new rate
//!   keeps the send times already handed out (GCRA's schedule): kept as a
//!   count of tokens, a cut left a gap in the sends (100 callers, 200
//!   req/s: the successes measured fell, the rate after them, to 70 req/s)
//!   and a rise sent new callers alongside the ones already waiting.
//! - **A short plateau, a faster curve.** Back at the rate that was
//!   throttled, the rate stays there for [`PLATEAU`] × K (at most
//!   [`PLATEAU_MAX_MS`], doubled after a probe throttled no higher than
//!   the last, up to 2^[`PLATEAU_MAX_DOUBLINGS`] times) before probing
//!   above it; the curve runs [`SPEED`] times as fast as the SDK's up to
//!   that rate and [`PROBE_SPEED`] times above it, so that a capacity that
//!   doubled is found within seconds (the matrix's step rows, capacity
//!   100 → 200 req/s, three runs each: back at 0.8× of 200 req/s within
//!   5 s of the step in 6 of 6 runs; 2 of 6 at 3 times, 3 of 6 at 2
//!   times, for 5–10 % fewer 429s; 6 of 8 with [`REF_RATE`] and the late
//!   successes, as a cut just before the step leaves K, up to 2 s of
//!   plateau and 1.3 s of probing to go). The [`OK_GAIN`] cap bounds how
//!   far a fast probe overshoots.
//! - **Below [`REF_RATE`], the curve scales with the rate.** CUBIC's C is
//!   in req/s per s³, so a limiter throttled at 20 req/s got back in 1.2 s
//!   and probed again within 2–3 s, where one at 100 takes 2.1 s to get
//!   back: ten clients with a limiter each at a server of 200 req/s, each
//!   probing that often, took 1.8–2× the SDK's 429s (each client's probe
//!   costs a 429 at whichever client sends next). Scaled, a limiter below
//!   100 req/s takes as long as one at 100 (core/tests/limiter.rs's model
//!   of that shape: 176 429s in 30 s where they were 227; §7's ten clients
//!   at 100 req/s: 0.94× the SDK's 429s, from 1.10×).
//! - **Server-named waits pause nothing here.** The limiter takes no
//!   `Retry-After`: the call that got it waits that long before its retry
//!   (the driver's business), and every other call keeps its token time
//!   (bench/overload.mjs: pausing every caller cost goodput and did not
//!   save 429s). So no wait a server names is ever stored.
//!
//! Time is passed in (ms). A clock that goes back refills nothing (and
//! re-anchors there); a jump ahead refills at most [`BURST`]. The
//! longest [`Limiter::acquire`] wait is (tokens reserved ahead + 1) / rate:
//! `n` callers waiting at the floor rate of [`MIN_RATE`] wait up to
//! 2·`n` s (the JS drivers refuse a wait past a call's deadline).

/// The multiplicative decrease on throttling (CUBIC's β).
pub const BETA: f64 = 0.7;
/// CUBIC's scaling constant C.
pub const SCALE: f64 = 0.4;
/// Below this rate (req/s), the curve is the one of this rate scaled down:
/// a limiter throttled at 20 req/s takes as long to get back, and to probe
/// 60 % above it, as one throttled at 100 (see the module's notes).
pub const REF_RATE: f64 = 100.0;
/// How many times as fast as the SDK's the CUBIC curve runs.
pub const SPEED: f64 = 2.0;
/// How many times as fast as the SDK's the curve runs above the rate
/// throttled (probing), after the plateau (see the module's notes).
pub const PROBE_SPEED: f64 = 4.0;
/// Weight of the newest half-second in the measured send rate.
pub const SMOOTH: f64 = 0.8;
/// The lowest fill rate, in requests per second.
pub const MIN_RATE: f64 = 0.5;
/// The most tokens the bucket saves up: one, so sends are paced evenly at
/// the rate (a bucket of 100 ms of tokens sent the retries of a
/// `Retry-After` all at once, into a server whose own bucket was empty: 16
/// 429s where one token cost 4, in core/tests/limiter.rs's model of 20
/// callers at 200 req/s; 806 against 971 ok/s in bench/overload.mjs at
/// 1 000 req/s. The SDK's holds a second's).
pub const BURST: f64 = 1.0;
/// The rate never exceeds this many times the successes measured (a
/// half-second's growth at most: 100 → 200 req/s takes about 2 s).
pub const OK_GAIN: f64 = 1.25;
/// How long (in units of CUBIC's K, the time to get back to the rate that
/// was throttled) the rate stays at that rate before probing above it.
pub const PLATEAU: f64 = 0.5;
/// The longest plateau before doubling, ms.
pub const PLATEAU_MAX_MS: f64 = 500.0;
/// How many times the plateau may double (see [`Limiter`]).
pub const PLATEAU_MAX_DOUBLINGS: u32 = 2;
/// A throttle at no more than this times the last throttled rate counts
/// as a failed probe.
pub const PROBE_GAIN: f64 = 1.5;
/// The send rate is measured in buckets of this many ms.
pub const RATE_BUCKET_MS: f64 = 500.0;
/// The shortest span a first estimate of the send rate divides by, ms
/// (one answer of unknown send time counts as 10 req/s).
const MIN_SPAN_MS: f64 = 100.0;

/// A send rate measured in half-second buckets (the SDK's), smoothed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Meter {
    rate: f64,
    count: u32,
    bucket_ms: f64,
    /// The first event of the current bucket (ms).
    first_ms: f64,
}

impl Meter {
    fn new(now_ms: f64) -> Self {
        Meter {
            rate: 0.0,
            count: 0,
            bucket_ms: bucket(now_ms),
            first_ms: now_ms,
        }
    }

    /// One event at `now_ms`. A half-second with events is measured from
    /// its first event to its end (so a limiter made late in a half-second
    /// does not read a burst as a trickle); idle ones are skipped (the SDK
    /// divides by the whole gap, so a burst after an idle minute measured
    /// near 0).
    fn tick(&mut self, now_ms: f64) {
        let b = bucket(now_ms);
        if b > self.bucket_ms && self.count > 0 {
            let span = self.bucket_ms + RATE_BUCKET_MS - self.first_ms;
            let span = crate::math::max(span, MIN_SPAN_MS);
            let rate = self.count as f64 * 1000.0 / span;
            self.rate = rate * SMOOTH + self.rate * (1.0 - SMOOTH);
        }
        if b != self.bucket_ms || self.count == 0 {
            // (a clock that went back starts a new bucket too)
            self.bucket_ms = b;
            self.count = 0;
            self.first_ms = now_ms;
        }
        self.count = self.count.saturating_add(1);
    }
}

/// One target's adaptive limiter. Off (no wait at all) until the first
/// throttling answer.
///
/// ```
/// use wasm_backoff_core::limiter::Limiter;
/// let mut l = Limiter::new(0.0);
/// assert_eq!(l.acquire(0.0), 0.0, "no throttling seen: no limit");
/// for t in 0..10 { l.record(false, f64::NAN, f64::NAN, t as f64 * 100.0); } // ~10 req/s
/// l.record(true, f64::NAN, f64::NAN, 1000.0); // 429: the rate drops below what was sent
/// assert!(l.enabled() && l.rate() < 10.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limiter {
    enabled: bool,
    /// Tokens in the bucket; negative = reserved ahead.
    tokens: f64,
    /// Tokens per second.
    fill_rate: f64,
    /// When `tokens` was last refilled (ms).
    refilled_ms: f64,
    last_max_rate: f64,
    /// The last cut (ms): throttles of calls sent before it cut nothing.
    last_throttle_ms: f64,
    /// Doubles the plateau each time a probe is throttled no higher than
    /// the rate throttled before (up to [`PLATEAU_MAX_DOUBLINGS`] times).
    doublings: u32,
    /// Answers (the send rate).
    sent: Meter,
    /// Successes (what the server takes: at a throttle, its capacity).
    ok: Meter,
    /// Calls that asked for a token (the demand, sent or not).
    asked: Meter,
    /// The earliest send of the answers counted so far (NaN: none yet).
    first_ms: f64,
    /// Smoothed round trip of answers with a known send time, ms.
    rtt_ms: f64,
}

/// Cube root of `x >= 0` by Newton's method (no_std has no `cbrt`).
fn cbrt(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return 0.0;
    }
    if x.is_infinite() {
        return x;
    }
    let mut y = if x > 1.0 { x / 3.0 } else { 1.0 };
    for _ in 0..200 {
        let next = y - (y * y * y - x) / (3.0 * y * y);
        let d = next - y;
        y = next;
        if (if d < 0.0 { -d } else { d }) <= 1e-12 * y {
            break;
        }
    }
    y
}

/// CUBIC's C for a limiter throttled at `max` req/s: [`SCALE`] at
/// [`REF_RATE`] and above, scaled down with the rate below it.
fn scale(max: f64) -> f64 {
    if max < REF_RATE {
        SCALE * crate::math::max(max, MIN_RATE) / REF_RATE
    } else {
        SCALE
    }
}

/// `floor(t / RATE_BUCKET_MS) * RATE_BUCKET_MS` for finite `t >= 0`.
fn bucket(t: f64) -> f64 {
    ((t / RATE_BUCKET_MS) as u64) as f64 * RATE_BUCKET_MS
}

impl Limiter {
    /// A limiter that has seen nothing, at `now_ms`.
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// assert!(!Limiter::new(0.0).enabled());
    /// ```
    pub fn new(now_ms: f64) -> Self {
        let now = if now_ms.is_finite() && now_ms >= 0.0 {
            now_ms
        } else {
            0.0
        };
        Limiter {
            enabled: false,
            tokens: 0.0,
            fill_rate: MIN_RATE,
            refilled_ms: now,
            last_max_rate: 0.0,
            last_throttle_ms: now,
            doublings: 0,
            sent: Meter::new(now),
            ok: Meter::new(now),
            asked: Meter::new(now),
            first_ms: f64::NAN,
            rtt_ms: 0.0,
        }
    }

    /// Whether a throttling answer has been seen (before that, no waits).
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record(true, f64::NAN, f64::NAN, 0.0);
    /// assert!(l.enabled());
    /// ```
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The fill rate in requests per second (infinite while not enabled).
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// assert_eq!(Limiter::new(0.0).rate(), f64::INFINITY);
    /// ```
    pub fn rate(&self) -> f64 {
        if self.enabled {
            self.fill_rate
        } else {
            f64::INFINITY
        }
    }

    /// The send rate measured so far (requests per second, smoothed).
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// for t in 0..20 { l.record(false, f64::NAN, f64::NAN, t as f64 * 100.0); }
    /// assert!((5.0..15.0).contains(&l.measured()));
    /// ```
    pub fn measured(&self) -> f64 {
        self.sent.rate
    }

    fn refill(&mut self, now_ms: f64) {
        if now_ms > self.refilled_ms {
            let t = (now_ms - self.refilled_ms) / 1000.0 * self.fill_rate;
            let full = self.tokens + t;
            self.tokens = if full < BURST { full } else { BURST };
        }
        // (a clock that went back re-anchors here and refills nothing)
        self.refilled_ms = now_ms;
    }

    /// Takes one token at `now_ms` and answers how long to wait for it, in
    /// ms (0 = send now). A caller that then gives up (aborted, or past its
    /// deadline) hands the token back with [`Limiter::cancel`]; it still
    /// counts as demand (the rate may grow towards what callers ask for).
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record_rate(true, 0.0, 0.0); // throttled at the floor: 0.5 req/s, one token at most
    /// assert_eq!(l.acquire(0.0), 2000.0);
    /// assert_eq!(l.acquire(0.0), 4000.0, "the next waits behind it");
    /// ```
    pub fn acquire(&mut self, now_ms: f64) -> f64 {
        if !now_ms.is_finite() || now_ms < 0.0 {
            return 0.0;
        }
        self.asked.tick(now_ms);
        if !self.enabled {
            return 0.0;
        }
        self.refill(now_ms);
        self.tokens -= 1.0;
        if self.tokens < 0.0 {
            -self.tokens / self.fill_rate * 1000.0
        } else {
            0.0
        }
    }

    /// As [`Limiter::acquire`], for a call that must be answered by
    /// `deadline_ms`: when it would wait and its wait plus one smoothed
    /// round trip ends past that, it takes no token and the answer is
    /// negative (refuse it now: sent at the end of its wait, it would run
    /// out of time in flight, after the server did the work).
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record(false, 0.0, 0.0, 100.0); // a round trip of 100 ms
    /// l.record_rate(true, 0.0, 100.0); // throttled at the floor: about 2 s a token
    /// assert!(l.acquire_within(100.0, 2000.0) < 0.0, "about 2 s + 100 ms > 1 900 ms left");
    /// let d = l.acquire_within(100.0, 5000.0);
    /// assert!(d > 1800.0 && d < 2000.0, "no token was kept: {d}");
    /// ```
    pub fn acquire_within(&mut self, now_ms: f64, deadline_ms: f64) -> f64 {
        let d = self.acquire(now_ms);
        if d > 0.0 && now_ms + d + self.rtt_ms > deadline_ms {
            self.cancel();
            return -1.0;
        }
        d
    }

    /// Gives back a token taken by [`Limiter::acquire`] and not used.
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record_rate(true, 0.0, 0.0);
    /// l.acquire(0.0);
    /// l.cancel();
    /// assert_eq!(l.acquire(0.0), 2000.0, "as if the first had never asked");
    /// ```
    pub fn cancel(&mut self) {
        if self.enabled {
            self.tokens += 1.0;
            if self.tokens > BURST {
                self.tokens = BURST;
            }
        }
    }

    /// The answer to one call came back at `now_ms`: `throttled` = the
    /// server said it is over capacity (429, or 503 with a named wait). The
    /// call took its token at `paced_ms` and was sent at `sent_ms` (its
    /// round trip; the two differ by its token wait). Either NaN (or not in
    /// `[0, now_ms]`): unknown, `paced_ms` then taken as `sent_ms`, or one
    /// smoothed round trip ago. A throttle of a call paced before the last
    /// cut cuts nothing more: the cut was not in force when it took its token.
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// for t in 0..20 { let t = t as f64 * 50.0; l.record(false, t, t, t + 20.0); }
    /// l.record(true, 980.0, 980.0, 1000.0);
    /// let cut = l.rate();
    /// l.record(true, 990.0, 990.0, 1010.0); // paced before that cut: in the same window
    /// assert_eq!(l.rate(), cut, "one cut per round trip");
    /// ```
    pub fn record(&mut self, throttled: bool, paced_ms: f64, sent_ms: f64, now_ms: f64) {
        if !now_ms.is_finite() || now_ms < 0.0 {
            return;
        }
        let known = |t: f64| t >= 0.0 && t <= now_ms;
        let sent = if known(sent_ms) {
            let sample = now_ms - sent_ms;
            self.rtt_ms = if self.rtt_ms > 0.0 {
                0.875 * self.rtt_ms + 0.125 * sample
            } else {
                sample
            };
            sent_ms
        } else {
            now_ms - self.rtt_ms
        };
        let sent = if known(paced_ms) { paced_ms } else { sent };
        if self.first_ms.is_nan() || sent < self.first_ms {
            self.first_ms = sent;
        }
        self.sent.tick(now_ms);
        if !throttled {
            self.ok.tick(now_ms);
        }
        if throttled && self.enabled && sent <= self.last_throttle_ms {
            return; // sent before the last cut: that cut answers it
        }
        if !throttled && self.enabled && self.ok.rate == 0.0 && sent <= self.last_throttle_ms {
            // A success of the load that was throttled, counted after the cut, before a
            // half-second was measured: the cut's estimate of what the server took grows with it
            // (on 127.0.0.1 the first 429 can come back before most of the first burst's 200s,
            // and a cut from the few counted took 20 callers at a server of 200 req/s to 31).
            let span = crate::math::max(now_ms - self.first_ms, MIN_SPAN_MS);
            let took = self.ok.count as f64 * 1000.0 / span;
            // (only when well above: a cut from a little less is the one-cut-per-round-trip
            // rule's own slack, and raising it cost more 429s in the first second)
            if took * BETA > self.last_max_rate {
                self.grow(took - self.last_max_rate);
            }
        }
        // What the server took lately (at a throttle: about its capacity).
        let base = if self.ok.rate > 0.0 {
            self.ok.rate
        } else {
            // (no half-second measured yet: the successes so far over the time since the first
            // went; too high costs a cut more a round trip later, too low a slower start)
            let span = crate::math::max(now_ms - self.first_ms, MIN_SPAN_MS);
            let n = self.ok.count;
            n as f64 * 1000.0 / span
        };
        self.react(throttled, base, now_ms);
    }

    /// As [`Limiter::record`], for a caller that measures the send rate
    /// itself and keeps its own window: `rate` (req/s) replaces the
    /// limiter's measurement, and every throttle cuts. A fleet's Durable
    /// Object adds up the send rates its isolates report (js/fleet.js) and
    /// cuts once per lease period. Non-finite or negative rates and times
    /// are ignored.
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record_rate(true, 200.0, 1000.0); // 50 isolates sending 4 req/s each: throttled
    /// assert_eq!(l.rate(), 140.0, "β × the fleet's rate");
    /// ```
    pub fn record_rate(&mut self, throttled: bool, rate: f64, now_ms: f64) {
        if !now_ms.is_finite() || now_ms < 0.0 || !rate.is_finite() || rate < 0.0 {
            return;
        }
        self.sent.rate = rate;
        self.react(throttled, rate, now_ms);
    }

    /// A sender that was not counted when the limiter was throttled turns
    /// out to have been part of the load, sending `rate` req/s: the rate it
    /// was throttled at, and the rate now, grow as if it had been counted
    /// (`BETA` × `rate` more now). A fleet's object calls this when an
    /// isolate reports its first throttle after the fleet's; without it,
    /// the fleet would be cut to β × the first reporter's rate. Nothing
    /// while not enabled.
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record_rate(true, 10.0, 0.0);
    /// l.grow(10.0);
    /// assert_eq!(l.rate(), 14.0, "as if throttled at 20 req/s");
    /// ```
    pub fn grow(&mut self, rate: f64) {
        if !self.enabled || !rate.is_finite() || rate <= 0.0 {
            return;
        }
        self.last_max_rate += rate;
        self.sent.rate += rate;
        self.set_rate(self.fill_rate + BETA * rate);
    }

    /// How long the rate stays at the rate throttled before probing above
    /// it, in s, given CUBIC's `k` (s).
    fn plateau(&self, k: f64) -> f64 {
        crate::math::min(PLATEAU * k, PLATEAU_MAX_MS / 1000.0) * (1u32 << self.doublings) as f64
    }

    /// The rate's reaction to one answer; `sending` is the rate a throttle
    /// cuts from (what the server took, or the send rate of a fleet).
    fn react(&mut self, throttled: bool, sending: f64, now_ms: f64) {
        let window = |max: f64| cbrt(max * (1.0 - BETA) / scale(max)) / SPEED;
        let rate = if throttled {
            // From what the server took lately, or the rate in force if lower.
            let r = if self.enabled && self.fill_rate < sending {
                self.fill_rate
            } else {
                sending
            };
            // Throttled while probing, no higher than the last rate that was: the
            // capacity has not moved, so probe less often. (Throttled before
            // probing: the capacity dropped; a plateau of one again.)
            let k = window(self.last_max_rate);
            let since = (now_ms - self.last_throttle_ms) / 1000.0;
            let probing = since > k + self.plateau(k);
            self.doublings = if self.enabled && probing && r <= self.last_max_rate * PROBE_GAIN {
                (self.doublings + 1).min(PLATEAU_MAX_DOUBLINGS)
            } else {
                0
            };
            self.last_max_rate = r;
            self.last_throttle_ms = now_ms;
            self.enabled = true;
            r * BETA
        } else {
            let k = window(self.last_max_rate);
            let mut t = (now_ms - self.last_throttle_ms) / 1000.0 - k;
            // Back at the rate that was throttled, stay there a while before probing above it.
            if t > 0.0 {
                let plateau = self.plateau(k);
                t = if t > plateau { t - plateau } else { 0.0 };
            }
            let t = t * if t > 0.0 { PROBE_SPEED } else { SPEED };
            scale(self.last_max_rate) * t * t * t + self.last_max_rate
        };
        // Never more than twice what is sent or asked for (a rate no one uses is untested),
        // nor more than OK_GAIN × what the server was seen to take.
        let used = crate::math::max(crate::math::max(self.asked.rate, self.sent.rate), sending);
        let mut rate = crate::math::min(rate, 2.0 * used);
        if self.ok.rate > 0.0 {
            rate = crate::math::min(rate, OK_GAIN * self.ok.rate);
        }
        self.refill(now_ms);
        self.set_rate(if rate > MIN_RATE { rate } else { MIN_RATE });
    }

    /// A new fill rate. Tokens reserved ahead keep their send times (the
    /// debt, in ms, is the same): callers already told to wait are not
    /// moved, and the next caller waits behind the last of them. (Kept as
    /// tokens, a cut would leave a gap in the sends, and a rise would send
    /// new callers alongside those already waiting: a burst.)
    fn set_rate(&mut self, rate: f64) {
        if self.tokens < 0.0 {
            self.tokens *= rate / self.fill_rate;
        }
        self.fill_rate = rate;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbrt_is_exact_enough() {
        for x in [0.001, 0.5, 1.0, 8.0, 27.0, 1000.0, 123456.0] {
            let y = cbrt(x);
            assert!((y * y * y - x).abs() <= 1e-9 * x.max(1.0), "{x}");
        }
        assert_eq!(cbrt(0.0), 0.0);
    }

    /// The send rate: half-second buckets, smoothed (the SDK's), each
    /// measured over itself, so that idle time reads as no data.
    #[test]
    fn the_send_rate_is_measured_per_busy_half_second() {
        let mut l = Limiter::new(0.0);
        for i in 0..400u32 {
            l.record(false, f64::NAN, f64::NAN, i as f64 * 37.0); // 27 req/s
        }
        assert!((l.measured() - 27.0).abs() < 2.0, "{}", l.measured());
        // An idle minute, then 5 answers in 100 ms: still the busy rate, not 0.
        for i in 0..5u32 {
            l.record(false, f64::NAN, f64::NAN, 80_000.0 + i as f64 * 20.0);
        }
        l.record(false, f64::NAN, f64::NAN, 80_600.0);
        assert!(l.measured() > 10.0, "{}", l.measured());
    }

    /// How long after a cut the rate probes above the rate throttled (ms).
    fn probe_after(l: &Limiter) -> f64 {
        let k = cbrt(l.last_max_rate * (1.0 - BETA) / scale(l.last_max_rate)) / SPEED;
        (k + l.plateau(k)) * 1000.0
    }

    /// Successes every `every` ms from `*t` until `until`.
    fn steady(l: &mut Limiter, t: &mut f64, every: f64, until: f64) {
        while *t < until {
            *t += every;
            l.record(false, f64::NAN, f64::NAN, *t);
        }
    }

    #[test]
    fn a_probe_throttled_at_the_same_rate_doubles_the_plateau() {
        let mut l = Limiter::new(0.0);
        let mut t = 0.0;
        steady(&mut l, &mut t, 100.0, 5000.0); // 10 req/s
        l.record(true, f64::NAN, f64::NAN, t);
        let max = l.last_max_rate;
        let until = t + probe_after(&l) + 1000.0;
        steady(&mut l, &mut t, 100.0, until);
        assert!(l.rate() > max, "probing above after K + the plateau");
        assert_eq!(l.doublings, 0);

        // Throttled again, no higher: the capacity did not move.
        l.record(true, f64::NAN, f64::NAN, t);
        assert_eq!(l.doublings, 1);
        let (max, from, p) = (l.last_max_rate, t, probe_after(&l));
        steady(&mut l, &mut t, 100.0, from + p - 100.0);
        assert_eq!(l.rate(), max, "still on the plateau: it is twice as long");
        steady(&mut l, &mut t, 100.0, from + p + 500.0);
        assert!(l.rate() > max, "then probing");

        for n in 2..=PLATEAU_MAX_DOUBLINGS + 2 {
            let until = t + probe_after(&l) + 500.0;
            steady(&mut l, &mut t, 100.0, until);
            l.record(true, f64::NAN, f64::NAN, t);
            assert_eq!(l.doublings, n.min(PLATEAU_MAX_DOUBLINGS), "bounded");
        }
        // Throttled again before probing: the capacity dropped, a plateau of one.
        t += 100.0;
        l.record(true, f64::NAN, f64::NAN, t);
        assert_eq!(l.doublings, 0);

        // Sending 4× as fast, until the rate is well above: a throttle there
        // means the capacity grew, and the plateau is one again.
        let until = t + 20_000.0;
        steady(&mut l, &mut t, 25.0, until);
        assert!(l.rate() > PROBE_GAIN * l.last_max_rate);
        l.record(true, f64::NAN, f64::NAN, t);
        assert_eq!(l.doublings, 0);
    }

    #[test]
    fn reservations_queue_and_time_jumps_are_harmless() {
        let mut l = Limiter::new(1000.0);
        l.record_rate(true, 0.0, 1000.0);
        let waits: [f64; 3] = core::array::from_fn(|_| l.acquire(1000.0));
        assert_eq!(waits, [2000.0, 4000.0, 6000.0]);
        // A jump ahead refills at most the capacity (1 token), then back.
        assert_eq!(l.acquire(1e15), 0.0);
        assert_eq!(
            l.acquire(1000.0),
            2000.0,
            "back on the real clock: one token time"
        );
        assert_eq!(l.acquire(f64::INFINITY), 0.0, "non-finite time is ignored");
    }
}
