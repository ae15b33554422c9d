//! When a healthy target counts as failing: the thresholds of a circuit
//! breaker (cockatiel's `ConsecutiveBreaker` and `SamplingBreaker`).
//!
//! A [`Counter`] sees the outcome of every call sent to a healthy target and
//! says when to trip. A single failure among successes trips only when asked
//! to ([`Trip::Consecutive`] of 1, the gate's first behaviour); the window of
//! [`Trip::Ratio`] needs a minimum of calls, so that two failures out of
//! three at night do not open the circuit. Time is passed in; a clock that
//! goes back is held where it was, one that jumps ahead clears the window.

/// When a closed (healthy) target trips.
///
/// ```
/// use wasm_backoff_core::breaker::{Counter, Trip};
/// let mut c = Counter::new(Trip::Consecutive(2));
/// assert!(!c.record(true, 0.0));
/// assert!(c.record(true, 1.0), "the second failure in a row trips");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trip {
    /// After this many failures in a row (a success starts the count again).
    Consecutive(u32),
    /// When, over the last `window_ms`, at least `min_calls` calls ended and
    /// the failed share of them is at least `ratio` (in (0, 1]).
    Ratio {
        /// The failed share that trips.
        ratio: f64,
        /// The sliding window, in ms (kept in [`BUCKETS`] buckets).
        window_ms: f64,
        /// Fewer calls than this in the window never trip.
        min_calls: u32,
    },
}

impl Trip {
    /// The threshold of a gate made without one (`createGate()`): five
    /// failures in a row. ([`crate::gate::Gate::new`] trips at the first
    /// failure unless given one.)
    ///
    /// ```
    /// use wasm_backoff_core::breaker::Trip;
    /// assert_eq!(Trip::DEFAULT, Trip::Consecutive(5));
    /// ```
    pub const DEFAULT: Trip = Trip::Consecutive(5);
    /// The window of a ratio threshold named without one, in ms: 30 s.
    ///
    /// ```
    /// assert_eq!(wasm_backoff_core::breaker::Trip::DEFAULT_WINDOW_MS, 30_000.0);
    /// ```
    pub const DEFAULT_WINDOW_MS: f64 = 30_000.0;
    /// The calls a ratio threshold named without a minimum needs in its window: 20.
    ///
    /// ```
    /// assert_eq!(wasm_backoff_core::breaker::Trip::DEFAULT_MIN_CALLS, 20);
    /// ```
    pub const DEFAULT_MIN_CALLS: u32 = 20;
}

/// Buckets of the sliding window of [`Trip::Ratio`]: the window slides by
/// an eighth of its length.
pub const BUCKETS: usize = 8;

/// The outcomes seen by a closed target. See the module documentation.
///
/// ```
/// use wasm_backoff_core::breaker::{Counter, Trip};
/// let mut c = Counter::new(Trip::Ratio { ratio: 0.5, window_ms: 8000.0, min_calls: 4 });
/// assert!(!c.record(true, 0.0) && !c.record(true, 1.0), "too few calls");
/// assert!(!c.record(false, 2.0));
/// assert!(c.record(true, 3.0), "3 of 4 failed");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Counter {
    trip: Trip,
    run: u32,
    calls: [u32; BUCKETS],
    fails: [u32; BUCKETS],
    /// The start of bucket `head`, in ms; NaN before the first outcome.
    head_ms: f64,
    head: usize,
}

impl Counter {
    /// A counter that has seen nothing.
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip};
    /// assert_eq!(Counter::new(Trip::Consecutive(5)).failures(), 0);
    /// ```
    pub const fn new(trip: Trip) -> Self {
        Counter {
            trip,
            run: 0,
            calls: [0; BUCKETS],
            fails: [0; BUCKETS],
            head_ms: f64::NAN,
            head: 0,
        }
    }

    /// The rule it applies.
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip};
    /// assert_eq!(Counter::new(Trip::Consecutive(5)).trip(), Trip::Consecutive(5));
    /// ```
    pub fn trip(&self) -> Trip {
        self.trip
    }

    /// Failures in a row so far.
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip};
    /// let mut c = Counter::new(Trip::Consecutive(5));
    /// c.record(true, 0.0);
    /// assert_eq!(c.failures(), 1);
    /// ```
    pub fn failures(&self) -> u32 {
        self.run
    }

    /// Whether it has no failure to remember: none in a row, none in the window.
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip};
    /// let mut c = Counter::new(Trip::Ratio { ratio: 0.5, window_ms: 1000.0, min_calls: 10 });
    /// c.record(false, 0.0);
    /// assert!(c.quiet());
    /// c.record(true, 1.0);
    /// c.record(false, 2.0); // a success ends the run, not the window's count
    /// assert!(!c.quiet());
    /// ```
    pub fn quiet(&self) -> bool {
        self.run == 0 && self.fails == [0; BUCKETS]
    }

    /// Calls and failures in the window as of the last outcome.
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip};
    /// let mut c = Counter::new(Trip::Ratio { ratio: 0.5, window_ms: 1000.0, min_calls: 10 });
    /// c.record(true, 0.0);
    /// c.record(false, 10.0);
    /// assert_eq!(c.window(), (2, 1));
    /// ```
    pub fn window(&self) -> (u32, u32) {
        self.calls
            .iter()
            .zip(&self.fails)
            .fold((0u32, 0u32), |(c, f), (x, y)| {
                (c.saturating_add(*x), f.saturating_add(*y))
            })
    }

    /// The window as saved: the start of its newest bucket (NaN before the
    /// first outcome), then calls and failures per bucket, oldest first.
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip, BUCKETS};
    /// let mut c = Counter::new(Trip::Ratio { ratio: 0.5, window_ms: 800.0, min_calls: 4 });
    /// c.record(true, 0.0);
    /// c.record(false, 100.0);
    /// let (at, calls, fails) = c.buckets();
    /// assert_eq!((at, calls[BUCKETS - 2..].to_vec(), fails[BUCKETS - 1]), (100.0, vec![1.0, 1.0], 0.0));
    /// ```
    pub fn buckets(&self) -> (f64, [f64; BUCKETS], [f64; BUCKETS]) {
        let mut calls = [0.0; BUCKETS];
        let mut fails = [0.0; BUCKETS];
        for i in 0..BUCKETS {
            let j = (self.head + 1 + i) % BUCKETS;
            calls[i] = self.calls[j] as f64;
            fails[i] = self.fails[j] as f64;
        }
        (self.head_ms, calls, fails)
    }

    /// Takes up counts saved from [`Counter::failures`] and
    /// [`Counter::buckets`] (integer counts; not checked here).
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip, BUCKETS};
    /// let mut c = Counter::new(Trip::Consecutive(3));
    /// c.set(2, f64::NAN, &[0.0; BUCKETS], &[0.0; BUCKETS]);
    /// assert!(c.record(true, 0.0), "the third in a row");
    /// ```
    pub fn set(&mut self, failures: u32, at: f64, calls: &[f64; BUCKETS], fails: &[f64; BUCKETS]) {
        self.run = failures;
        self.head = BUCKETS - 1;
        self.head_ms = at;
        for i in 0..BUCKETS {
            self.calls[i] = calls[i] as u32;
            self.fails[i] = fails[i] as u32;
        }
    }

    /// Slides the window to `now_ms`.
    fn advance(&mut self, now_ms: f64) {
        let Trip::Ratio { window_ms, .. } = self.trip else {
            return;
        };
        let width = window_ms / BUCKETS as f64;
        // (NaN before the first outcome.)
        if self.head_ms.is_nan() || self.head_ms > now_ms {
            // First outcome, or a clock that went back: stay in the head
            // bucket, unless it went back by more than the window (then it
            // is another clock: start again).
            if self.head_ms.is_nan() || self.head_ms - now_ms > window_ms {
                self.clear(now_ms);
            }
            return;
        }
        let steps = (now_ms - self.head_ms) / width;
        if steps >= BUCKETS as f64 {
            return self.clear(now_ms);
        }
        for _ in 0..steps as usize {
            self.head = (self.head + 1) % BUCKETS;
            self.calls[self.head] = 0;
            self.fails[self.head] = 0;
            self.head_ms += width;
        }
    }

    fn clear(&mut self, now_ms: f64) {
        self.calls = [0; BUCKETS];
        self.fails = [0; BUCKETS];
        self.head = 0;
        self.head_ms = now_ms;
    }

    /// One call to the closed target ended at `now_ms`; `failed` = it
    /// failed the target. Returns whether the target trips now.
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip};
    /// let mut c = Counter::new(Trip::Consecutive(2));
    /// c.record(true, 0.0);
    /// c.record(false, 1.0); // a success breaks the run
    /// assert!(!c.record(true, 2.0));
    /// ```
    pub fn record(&mut self, failed: bool, now_ms: f64) -> bool {
        self.record_many(failed, 1, now_ms)
    }

    /// `n` calls to the closed target ended at `now_ms`, all failed
    /// (`failed`) or all not: a batch counted at once, as if recorded one
    /// by one. Returns whether the target trips with them (a window's
    /// failure ratio only grows as failures are added, so a batch that
    /// would have tripped part-way trips at its end).
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip};
    /// let mut c = Counter::new(Trip::Consecutive(5));
    /// assert!(!c.record_many(true, 4, 0.0));
    /// assert!(c.record_many(true, 1, 0.0));
    /// c.record_many(false, 3, 0.0); // successes break the run
    /// assert_eq!(c.failures(), 0);
    /// ```
    pub fn record_many(&mut self, failed: bool, n: u32, now_ms: f64) -> bool {
        if n == 0 {
            return false;
        }
        self.run = if failed {
            self.run.saturating_add(n)
        } else {
            0
        };
        match self.trip {
            Trip::Consecutive(k) => failed && self.run >= k,
            Trip::Ratio {
                ratio, min_calls, ..
            } => {
                if !now_ms.is_finite() {
                    return false;
                }
                self.advance(now_ms);
                let h = self.head % BUCKETS;
                self.calls[h] = self.calls[h].saturating_add(n);
                self.fails[h] = self.fails[h].saturating_add(if failed { n } else { 0 });
                let (calls, fails) = self.window();
                failed && calls >= min_calls && fails as f64 >= ratio * calls as f64
            }
        }
    }

    /// Forgets every outcome (the target closed again, or was released).
    ///
    /// ```
    /// use wasm_backoff_core::breaker::{Counter, Trip};
    /// let mut c = Counter::new(Trip::Consecutive(2));
    /// c.record(true, 0.0);
    /// c.reset();
    /// assert_eq!(c.failures(), 0);
    /// ```
    pub fn reset(&mut self) {
        *self = Counter::new(self.trip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATIO: Trip = Trip::Ratio {
        ratio: 0.5,
        window_ms: 800.0,
        min_calls: 4,
    };

    #[test]
    fn consecutive_counts_only_runs() {
        let mut c = Counter::new(Trip::Consecutive(3));
        for (i, (failed, trips)) in [
            (true, false),
            (true, false),
            (false, false),
            (true, false),
            (true, false),
            (true, true),
            (true, true),
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(c.record(failed, i as f64), trips, "outcome {i}");
        }
    }

    #[test]
    fn ratio_needs_throughput_and_forgets_old_buckets() {
        let mut c = Counter::new(RATIO);
        // 3 failures of 3: too few calls.
        for t in 0..3 {
            assert!(!c.record(true, t as f64));
        }
        // 700 ms later they are still in the window: the 4th call trips.
        assert!(c.record(true, 700.0));
        c.reset();
        // Failures 900 ms ago have slid out: 1 failure + 3 successes now.
        for t in 0..3 {
            c.record(true, t as f64);
        }
        for _ in 0..3 {
            assert!(!c.record(false, 900.0));
        }
        assert_eq!(c.window(), (3, 0));
        assert!(!c.record(true, 901.0), "1 of 4 failed");
    }

    #[test]
    fn a_clock_that_jumps_does_not_stick() {
        let mut c = Counter::new(RATIO);
        c.record(true, 1e15); // a µs clock, once
        for t in 0..3 {
            c.record(true, 1000.0 + t as f64);
        }
        assert_eq!(
            c.window(),
            (3, 3),
            "the window started again on the real clock"
        );
        assert!(c.record(true, 1003.0));
        // A small step back stays in the head bucket.
        let mut c = Counter::new(RATIO);
        c.record(true, 500.0);
        c.record(true, 450.0);
        assert_eq!(c.window(), (2, 2));
        assert!(!c.record(true, f64::INFINITY));
        assert_eq!(c.window(), (2, 2), "non-finite time is ignored");
    }
}
