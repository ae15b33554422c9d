//! Adaptive client-side rate limiting: a token bucket whose fill rate
//! follows the measured send rate, drops multiplicatively when the server
//! throttles and recovers along a CUBIC curve — the AWS SDKs' adaptive
//! retry mode (`DefaultRateLimiter`: the same constants, the same
//! formulas), with four changes found by measurement (bench/overload.mjs):
//!
//! - **Reservations.** [`Limiter::acquire`] takes its token at once and
//!   answers how long to wait for it, so the bucket may go into debt: `n`
//!   callers arriving together wait 1, 2, …, `n` token times. The SDK's
//!   callers each sleep until *a* token is there, wake together and race
//!   for it, which sends bursts at a server that just said it is full.
//! - **A plateau.** Back at the rate that was throttled, the rate stays
//!   there for [`PLATEAU`] times CUBIC's K before probing above it: each
//!   probe above the server's capacity costs a 429, and the capacity
//!   rarely moved in the meantime (bench/overload.mjs: 429s 0.6–0.7× the
//!   SDK's at the same goodput; PLATEAU 2 gave 0.77×, 8 gave 0.55–0.65×
//!   with a p99 of 2 s).
//! - **A longer plateau after a failed probe.** A throttle at no more
//!   than [`PROBE_GAIN`] times the rate throttled before means the
//!   capacity has not moved: the next plateau is twice as long (up to
//!   2^[`PLATEAU_MAX_DOUBLINGS`] times); a throttle higher up resets it.
//!   Clients sharing a server otherwise each pay a 429 per probe, however
//!   small their share (bench/overload.mjs, 20 runs: 429s 0.65× → 0.52×
//!   the SDK's at the same goodput).
//! - **Server-named waits.** A throttling answer that names a wait
//!   (`Retry-After` and the rate-limit headers) pauses the bucket until
//!   then: no first attempt goes out before the server said it would take
//!   one. The SDK only lengthens the retry of that one call.
//!
//! Time is passed in (ms). A clock that goes back refills nothing (and
//! re-anchors there); a jump ahead refills at most to capacity.

/// The multiplicative decrease on throttling (CUBIC's β).
pub const BETA: f64 = 0.7;
/// CUBIC's scaling constant C.
pub const SCALE: f64 = 0.4;
/// Weight of the newest half-second in the measured send rate.
pub const SMOOTH: f64 = 0.8;
/// The lowest fill rate, in requests per second.
pub const MIN_RATE: f64 = 0.5;
/// The smallest bucket, in tokens.
pub const MIN_CAPACITY: f64 = 1.0;
/// How long (in units of CUBIC's K, the time to get back to the rate that
/// was throttled) the rate stays at that rate before probing above it.
pub const PLATEAU: f64 = 4.0;
/// How many times the plateau may double (see [`Limiter`]).
pub const PLATEAU_MAX_DOUBLINGS: u32 = 4;
/// A throttle at no more than this times the last throttled rate counts
/// as a failed probe.
pub const PROBE_GAIN: f64 = 1.5;
/// The send rate is measured in buckets of this many ms.
pub const RATE_BUCKET_MS: f64 = 500.0;

/// One target's adaptive limiter. Off (no wait at all) until the first
/// throttling answer.
///
/// ```
/// use wasm_backoff_core::limiter::Limiter;
/// let mut l = Limiter::new(0.0);
/// assert_eq!(l.acquire(0.0), 0.0, "no throttling seen: no limit");
/// for t in 0..10 { l.record(false, -1.0, t as f64 * 100.0); } // ~10 req/s
/// l.record(true, -1.0, 1000.0); // 429: the rate drops below what was sent
/// assert!(l.enabled() && l.rate() < 10.0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limiter {
    enabled: bool,
    /// Tokens in the bucket; negative = reserved ahead.
    tokens: f64,
    capacity: f64,
    /// Tokens per second.
    fill_rate: f64,
    /// When `tokens` was last refilled (ms).
    refilled_ms: f64,
    /// No token before this time (a server-named wait), ms.
    paused_ms: f64,
    last_max_rate: f64,
    last_throttle_ms: f64,
    /// Doubles the plateau each time a probe is throttled no higher than
    /// the rate throttled before (up to [`PLATEAU_MAX_DOUBLINGS`] times).
    doublings: u32,
    measured: f64,
    count: u32,
    rate_bucket_ms: f64,
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
            capacity: MIN_CAPACITY,
            fill_rate: MIN_RATE,
            refilled_ms: now,
            paused_ms: 0.0,
            last_max_rate: 0.0,
            last_throttle_ms: now,
            doublings: 0,
            measured: 0.0,
            count: 0,
            rate_bucket_ms: bucket(now),
        }
    }

    /// Whether a throttling answer has been seen (before that, no waits).
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record(true, -1.0, 0.0);
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
    /// for t in 0..20 { l.record(false, -1.0, t as f64 * 100.0); }
    /// assert!((5.0..15.0).contains(&l.measured()));
    /// ```
    pub fn measured(&self) -> f64 {
        self.measured
    }

    fn refill(&mut self, now_ms: f64) {
        if now_ms > self.refilled_ms {
            let t = (now_ms - self.refilled_ms) / 1000.0 * self.fill_rate;
            let full = self.tokens + t;
            self.tokens = if full < self.capacity {
                full
            } else {
                self.capacity
            };
        }
        // (a clock that went back re-anchors here and refills nothing)
        self.refilled_ms = now_ms;
    }

    /// Takes one token at `now_ms` and answers how long to wait for it, in
    /// ms (0 = send now). A caller that then gives up (aborted, or past its
    /// deadline) hands the token back with [`Limiter::cancel`].
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record(true, -1.0, 0.0); // throttled: 0.5 req/s, one token of capacity
    /// assert_eq!(l.acquire(0.0), 2000.0);
    /// assert_eq!(l.acquire(0.0), 4000.0, "the next waits behind it");
    /// ```
    pub fn acquire(&mut self, now_ms: f64) -> f64 {
        if !self.enabled || !now_ms.is_finite() {
            return 0.0;
        }
        self.refill(now_ms);
        self.tokens -= 1.0;
        let pause = if self.paused_ms > now_ms {
            self.paused_ms - now_ms
        } else {
            0.0
        };
        let debt = if self.tokens < 0.0 { -self.tokens } else { 0.0 };
        pause + debt / self.fill_rate * 1000.0
    }

    /// Gives back a token taken by [`Limiter::acquire`] and not used.
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record(true, -1.0, 0.0);
    /// l.acquire(0.0);
    /// l.cancel();
    /// assert_eq!(l.acquire(0.0), 2000.0, "as if the first had never asked");
    /// ```
    pub fn cancel(&mut self) {
        if self.enabled {
            self.tokens += 1.0;
            if self.tokens > self.capacity {
                self.tokens = self.capacity;
            }
        }
    }

    fn measure(&mut self, now_ms: f64) {
        let b = bucket(now_ms);
        self.count = self.count.saturating_add(1);
        if b > self.rate_bucket_ms {
            let rate = self.count as f64 / ((b - self.rate_bucket_ms) / 1000.0);
            self.measured = rate * SMOOTH + self.measured * (1.0 - SMOOTH);
            self.count = 0;
            self.rate_bucket_ms = b;
        } else if b < self.rate_bucket_ms {
            self.rate_bucket_ms = b; // a clock that went back
        }
    }

    /// The answer to one call sent at the target came back at `now_ms`:
    /// `throttled` = the server said it is over capacity (429, or 503 with a
    /// named wait); `hint_ms` the wait it named (negative or NaN = none).
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record(true, 3000.0, 0.0); // 429 with Retry-After: 3
    /// assert!(l.acquire(0.0) >= 3000.0, "nothing goes out before the server said");
    /// ```
    pub fn record(&mut self, throttled: bool, hint_ms: f64, now_ms: f64) {
        if !now_ms.is_finite() || now_ms < 0.0 {
            return;
        }
        self.measure(now_ms);
        self.react(throttled, hint_ms, now_ms);
    }

    /// As [`Limiter::record`], for a caller that measures the send rate
    /// itself: `rate` (req/s) replaces the limiter's own measurement. A
    /// fleet's Durable Object adds up the send rates its isolates report
    /// (js/fleet.js); one [`Limiter::record`] per reported answer would
    /// count a batch that arrives at once as a burst. Non-finite or negative
    /// rates and times are ignored.
    ///
    /// ```
    /// use wasm_backoff_core::limiter::Limiter;
    /// let mut l = Limiter::new(0.0);
    /// l.record_rate(true, -1.0, 200.0, 1000.0); // 50 isolates sending 4 req/s each: throttled
    /// assert_eq!(l.rate(), 140.0, "β × the fleet's rate");
    /// ```
    pub fn record_rate(&mut self, throttled: bool, hint_ms: f64, rate: f64, now_ms: f64) {
        if !now_ms.is_finite() || now_ms < 0.0 || !rate.is_finite() || rate < 0.0 {
            return;
        }
        self.measured = rate;
        self.react(throttled, hint_ms, now_ms);
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
    /// l.record_rate(true, -1.0, 10.0, 0.0);
    /// l.grow(10.0);
    /// assert_eq!(l.rate(), 14.0, "as if throttled at 20 req/s");
    /// ```
    pub fn grow(&mut self, rate: f64) {
        if !self.enabled || !rate.is_finite() || rate <= 0.0 {
            return;
        }
        self.last_max_rate += rate;
        self.measured += rate;
        self.fill_rate += BETA * rate;
        if self.fill_rate > self.capacity {
            self.capacity = self.fill_rate;
        }
    }

    /// The rate's reaction to one answer (the measurement already taken).
    fn react(&mut self, throttled: bool, hint_ms: f64, now_ms: f64) {
        let window = |max: f64| cbrt(max * (1.0 - BETA) / SCALE);
        let rate = if throttled {
            let r = if self.enabled && self.fill_rate < self.measured {
                self.fill_rate
            } else {
                self.measured
            };
            // Throttled again without getting above the last rate that was:
            // the capacity has not moved, so probe less often.
            self.doublings = if self.enabled && r <= self.last_max_rate * PROBE_GAIN {
                (self.doublings + 1).min(PLATEAU_MAX_DOUBLINGS)
            } else {
                0
            };
            self.last_max_rate = r;
            self.last_throttle_ms = now_ms;
            self.enabled = true;
            if hint_ms > 0.0 {
                let until = now_ms + crate::math::clamp_delay(hint_ms);
                if until > self.paused_ms {
                    self.paused_ms = until;
                }
                self.refill(now_ms);
                if self.tokens > 0.0 {
                    self.tokens = 0.0;
                }
            }
            r * BETA
        } else {
            let k = window(self.last_max_rate);
            let mut t = (now_ms - self.last_throttle_ms) / 1000.0 - k;
            // Back at the rate that was throttled, stay there for PLATEAU·K
            // before probing above it.
            if t > 0.0 {
                let plateau = PLATEAU * k * (1u32 << self.doublings) as f64;
                t = if t > plateau { t - plateau } else { 0.0 };
            }
            SCALE * t * t * t + self.last_max_rate
        };
        let rate = crate::math::min(rate, 2.0 * self.measured);
        self.refill(now_ms);
        self.fill_rate = if rate > MIN_RATE { rate } else { MIN_RATE };
        self.capacity = if rate > MIN_CAPACITY {
            rate
        } else {
            MIN_CAPACITY
        };
        if self.tokens > self.capacity {
            self.tokens = self.capacity;
        }
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

    /// The AWS SDK's DefaultRateLimiter, step for step (its formulas,
    /// without its 8-digit rounding, plus our plateau), fed the same
    /// outcomes: the same rates.
    #[test]
    fn rates_follow_the_sdk() {
        let mut l = Limiter::new(0.0);
        let (mut fill, mut measured, mut count, mut last_bucket) = (MIN_RATE, 0.0f64, 0u32, 0.0);
        let (mut last_max, mut last_throttle, mut enabled) = (0.0f64, 0.0f64, false);
        for i in 0..400u32 {
            let t = i as f64 * 0.037; // seconds
            let throttled = i % 50 == 49;
            l.record(throttled, -1.0, t * 1000.0);
            let b = (t * 2.0).floor() / 2.0;
            count += 1;
            if b > last_bucket {
                measured = count as f64 / (b - last_bucket) * SMOOTH + measured * (1.0 - SMOOTH);
                count = 0;
                last_bucket = b;
            }
            let calc = if throttled {
                let r = if enabled {
                    measured.min(fill)
                } else {
                    measured
                };
                last_max = r;
                last_throttle = t;
                enabled = true;
                r * BETA
            } else {
                let w = (last_max * (1.0 - BETA) / SCALE).cbrt();
                let x = t - last_throttle - w;
                // (ours holds the throttled rate for PLATEAU·K before probing above it)
                let x = if x > 0.0 {
                    (x - PLATEAU * w).max(0.0)
                } else {
                    x
                };
                SCALE * x.powi(3) + last_max
            };
            fill = calc.min(2.0 * measured).max(MIN_RATE);
            assert!((l.measured() - measured).abs() < 1e-9, "measured at {i}");
            if enabled {
                assert!(
                    (l.rate() - fill).abs() < 1e-6 * fill.max(1.0),
                    "rate at {i}: {} vs {fill}",
                    l.rate()
                );
            }
        }
    }

    /// Successes every `every` ms from `*t` until `until`.
    fn steady(l: &mut Limiter, t: &mut f64, every: f64, until: f64) {
        while *t < until {
            *t += every;
            l.record(false, -1.0, *t);
        }
    }

    #[test]
    fn a_probe_throttled_at_the_same_rate_doubles_the_plateau() {
        let mut l = Limiter::new(0.0);
        let mut t = 0.0;
        steady(&mut l, &mut t, 100.0, 5000.0); // 10 req/s
        l.record(true, -1.0, t);
        let max = l.last_max_rate;
        let k = cbrt(max * (1.0 - BETA) / SCALE) * 1000.0;
        let until = t + (1.0 + PLATEAU) * k + 1000.0;
        steady(&mut l, &mut t, 100.0, until);
        assert!(l.rate() > max, "probing above after K + PLATEAU·K");
        assert_eq!(l.doublings, 0);

        // Throttled again, no higher: the capacity did not move.
        l.record(true, -1.0, t);
        assert_eq!(l.doublings, 1);
        let (max, from) = (l.last_max_rate, t);
        let k = cbrt(max * (1.0 - BETA) / SCALE) * 1000.0;
        steady(&mut l, &mut t, 100.0, from + (1.0 + PLATEAU) * k + 1000.0);
        assert_eq!(l.rate(), max, "still on the plateau: it is twice as long");
        steady(
            &mut l,
            &mut t,
            100.0,
            from + (1.0 + 2.0 * PLATEAU) * k + 1000.0,
        );
        assert!(l.rate() > max, "then probing");

        for n in 2..=PLATEAU_MAX_DOUBLINGS + 2 {
            l.record(true, -1.0, t);
            assert_eq!(l.doublings, n.min(PLATEAU_MAX_DOUBLINGS), "bounded");
        }

        // Sending 4× as fast, until the rate is well above: a throttle there
        // means the capacity grew, and the plateau is one again.
        let until = t + 200_000.0;
        steady(&mut l, &mut t, 25.0, until);
        assert!(l.rate() > PROBE_GAIN * l.last_max_rate);
        l.record(true, -1.0, t);
        assert_eq!(l.doublings, 0);
    }

    #[test]
    fn reservations_queue_and_time_jumps_are_harmless() {
        let mut l = Limiter::new(1000.0);
        l.record(true, -1.0, 1000.0);
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
