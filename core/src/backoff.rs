//! The per-operation state: which retry this is, what was waited so far.

use crate::config::{AtCeiling, Config, ConfigError, Jitter, SlotMode, Strategy};
use crate::math::{clamp_delay, fib_sat, min, mul, pow_sat};
use crate::rng::{DefaultRng, Rng, unit_f64};

/// How many steps of the decorrelated chain [`Backoff::sample_at`] simulates
/// at most. The chain forgets its start geometrically fast (each step draws
/// afresh between `base` and a multiple of the previous wait, and the cap
/// bounds it), so by this many steps its law is the stationary one to far
/// below f64 resolution; bounding it keeps `sample(…, 10 000, 10^6)` cheap.
pub const DECORRELATED_SIM_STEPS: u32 = 1000;

/// A stateful schedule of delays: an iterator of the waits before retry 1,
/// 2, …; `None` means give up (sticky until [`Backoff::reset`]).
///
/// ```
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
/// let cfg = Config::new().jitter(Jitter::None).max_attempts(Some(3));
/// let mut b = Backoff::new(cfg, seeded_rng(1)).unwrap();
/// assert_eq!((b.next_delay(), b.next_delay(), b.next_delay()), (Some(100.0), Some(200.0), None));
/// b.reset(); // a success
/// assert_eq!(b.next_delay(), Some(100.0));
/// ```
#[derive(Clone, Debug)]
pub struct Backoff<R = DefaultRng> {
    cfg: Config,
    rng: R,
    attempt: u32,
    total_retries: u64,
    resets: u64,
    elapsed_ms: f64,
    prev_ms: f64,
    exhausted: bool,
}

impl<R: Rng> Backoff<R> {
    /// Validates `cfg` (the error names the option) and starts at attempt 0.
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// assert!(Backoff::new(Config::new(), seeded_rng(1)).is_ok());
    /// assert!(Backoff::new(Config::new().base_ms(-1.0), seeded_rng(1)).is_err());
    /// ```
    pub fn new(cfg: Config, rng: R) -> Result<Self, ConfigError> {
        cfg.validate()?;
        Ok(Self::unchecked(cfg, rng))
    }

    fn unchecked(cfg: Config, rng: R) -> Self {
        Backoff {
            cfg,
            rng,
            attempt: 0,
            total_retries: 0,
            resets: 0,
            elapsed_ms: 0.0,
            prev_ms: cfg.base_ms,
            exhausted: false,
        }
    }

    /// The delay in ms before the next retry, or `None` to give up: when the
    /// next try would exceed `max_attempts`, or when this delay would take the
    /// sum of delays past `max_elapsed_ms`. Once `None`, always `None` until
    /// [`Backoff::reset`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new().jitter(Jitter::None).max_attempts(Some(2)), seeded_rng(1)).unwrap();
    /// assert_eq!((b.next_delay(), b.next_delay()), (Some(100.0), None));
    /// ```
    pub fn next_delay(&mut self) -> Option<f64> {
        if self.exhausted {
            return None;
        }
        if let Some(max) = self.cfg.max_attempts {
            // `attempt` retries so far means `attempt + 1` tries; one more
            // retry makes `attempt + 2`.
            if self.attempt.saturating_add(1) >= max {
                self.exhausted = true;
                return None;
            }
        }
        let n = self.attempt.saturating_add(1);
        let (delay, prev) = draw(&self.cfg, n, self.prev_ms, &mut self.rng);
        if let Some(limit) = self.cfg.max_elapsed_ms {
            if self.elapsed_ms + delay > limit {
                self.exhausted = true;
                return None;
            }
        }
        self.prev_ms = prev;
        self.attempt = n;
        self.total_retries += 1;
        self.elapsed_ms += delay;
        if wraps_at(&self.cfg, n) {
            self.resets += 1;
        }
        Some(delay)
    }

    /// [`Backoff::next_delay`] drawn on another base: the same attempt
    /// count, limits and chain, the delay as if `base_ms` were the config's
    /// (the drivers' throttling base, `throttleBaseMs`, for a 429, 503 or 529
    /// when the schedule's own base is for transient failures). `base_ms`
    /// is the caller's to check (finite, >= 0).
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// assert_eq!((b.next_delay_on(1000.0), b.next_delay()), (Some(1000.0), Some(200.0)));
    /// ```
    pub fn next_delay_on(&mut self, base_ms: f64) -> Option<f64> {
        let own = self.cfg.base_ms;
        self.cfg.base_ms = base_ms;
        let d = self.next_delay();
        self.cfg.base_ms = own;
        d
    }

    /// Back to the first retry, as after a success: attempt 0, nothing
    /// waited, the decorrelated chain and the slot at their start. Counted in
    /// [`Backoff::resets`] when anything had been handed out (as Akka does).
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// b.next_delay();
    /// b.reset();
    /// assert_eq!((b.attempt(), b.resets(), b.next_delay()), (0, 1, Some(100.0)));
    /// ```
    pub fn reset(&mut self) {
        if self.attempt > 0 || self.exhausted {
            self.resets += 1;
        }
        self.attempt = 0;
        self.elapsed_ms = 0.0;
        self.prev_ms = self.cfg.base_ms;
        self.exhausted = false;
    }

    /// The wait when the server asked for `hint_ms` (a `Retry-After`) and
    /// the schedule offered `delay`: at least both, with up to
    /// min(10 % of the hint, 1 s) of jitter above the hint, so that clients
    /// told the same instant do not all come back at that instant.
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new(), seeded_rng(1)).unwrap();
    /// let w = b.with_hint(50.0, 2000.0); // the server asked for 2 s
    /// assert!((2000.0..2200.0).contains(&w));
    /// ```
    pub fn with_hint(&mut self, delay: f64, hint_ms: f64) -> f64 {
        let hint = clamp_delay(hint_ms);
        let spread = min(hint * 0.1, 1000.0);
        let wait = hint + mul(spread, unit_f64(&mut self.rng));
        clamp_delay(if wait > delay { wait } else { delay })
    }

    /// The state a decorrelated schedule grows from (its previous wait; the
    /// base for the others), for [`Backoff::resume`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config};
    /// let b = Backoff::new(Config::new(), seeded_rng(1)).unwrap();
    /// assert_eq!(b.chain_ms(), 100.0);
    /// ```
    pub fn chain_ms(&self) -> f64 {
        self.prev_ms
    }

    /// Continues a schedule saved elsewhere ([`Backoff::attempt`] and
    /// [`Backoff::chain_ms`]): the next delay is that of retry `attempt + 1`.
    /// Limits count from here (nothing waited).
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// b.resume(3, 100.0);
    /// assert_eq!(b.next_delay(), Some(800.0));
    /// ```
    pub fn resume(&mut self, attempt: u32, chain_ms: f64) {
        self.attempt = attempt;
        self.prev_ms = chain_ms;
        self.elapsed_ms = 0.0;
        self.exhausted = false;
    }

    /// Retries handed out since the last reset.
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new(), seeded_rng(1)).unwrap();
    /// b.next_delay();
    /// assert_eq!(b.attempt(), 1);
    /// ```
    pub fn attempt(&self) -> u32 {
        self.attempt
    }
    /// Retries handed out since construction.
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new(), seeded_rng(1)).unwrap();
    /// b.next_delay();
    /// b.reset();
    /// b.next_delay();
    /// assert_eq!(b.total_retries(), 2);
    /// ```
    pub fn total_retries(&self) -> u64 {
        self.total_retries
    }
    /// Resets: calls of [`Backoff::reset`] after a retry, plus the slotted
    /// strategy's wraps past its ceiling in [`AtCeiling::Reset`] mode.
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new(), seeded_rng(1)).unwrap();
    /// b.next_delay();
    /// b.reset();
    /// assert_eq!(b.resets(), 1);
    /// ```
    pub fn resets(&self) -> u64 {
        self.resets
    }
    /// Sum of the delays handed out since the last reset, in ms.
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new().jitter(Jitter::None), seeded_rng(1)).unwrap();
    /// b.next_delay();
    /// b.next_delay();
    /// assert_eq!(b.elapsed_ms(), 300.0);
    /// ```
    pub fn elapsed_ms(&self) -> f64 {
        self.elapsed_ms
    }
    /// The validated configuration.
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let b = Backoff::new(Config::new().base_ms(5.0), seeded_rng(1)).unwrap();
    /// assert_eq!(b.config().base_ms, 5.0);
    /// ```
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// One independent draw of the delay before retry `retry` (1 = the first
    /// retry), from a fresh schedule: limits are ignored and the state of
    /// `self` is untouched except for its random stream. This is the law of
    /// what [`Backoff::next_delay`] returns at that retry.
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter};
    /// let mut b = Backoff::new(Config::new(), seeded_rng(1)).unwrap();
    /// let d = b.sample_at(3); // a draw of the delay before retry 3: U[0, 400 ms)
    /// assert!((0.0..400.0).contains(&d));
    /// assert_eq!(b.attempt(), 0, "the schedule itself did not move");
    /// ```
    pub fn sample_at(&mut self, retry: u32) -> f64 {
        let n = retry.max(1);
        if self.cfg.strategy == Strategy::Decorrelated {
            let mut prev = self.cfg.base_ms;
            let mut delay = 0.0;
            for i in 1..=min_u32(n, DECORRELATED_SIM_STEPS) {
                (delay, prev) = draw(&self.cfg, i, prev, &mut self.rng);
            }
            delay
        } else {
            draw(&self.cfg, n, self.cfg.base_ms, &mut self.rng).0
        }
    }
}

impl<R: Rng> Iterator for Backoff<R> {
    type Item = f64;
    fn next(&mut self) -> Option<f64> {
        self.next_delay()
    }
}

fn min_u32(a: u32, b: u32) -> u32 {
    if a < b { a } else { b }
}

/// `a % b`, 0 for b = 0. The ceiling is validated to be >= 1, but the
/// compiler cannot know it, and a division-by-zero panic path would drag its
/// message into the wasm module.
fn rem(a: u32, b: u32) -> u32 {
    a.checked_rem(b).unwrap_or(0)
}

/// The delay before retry `n` (>= 1) and the decorrelated chain's new state.
/// Pure except for the random draws; every value stays in [0, 2^31 − 1].
fn draw<R: Rng + ?Sized>(cfg: &Config, n: u32, prev: f64, rng: &mut R) -> (f64, f64) {
    let cap = cfg.cap();
    let base = cfg.base_ms;
    let mut next_prev = prev;
    let raw = match cfg.strategy {
        Strategy::Exponential => {
            let exp = (n - 1).saturating_add(cfg.exponent_offset);
            mul(base, pow_sat(cfg.factor, exp))
        }
        Strategy::Constant => base,
        Strategy::Linear => mul(base, n as f64),
        Strategy::Fibonacci => mul(base, fib_sat(n)),
        Strategy::Decorrelated => {
            // U[base, factor · prev); factor · prev < base only when the cap
            // is below base, and then the draw lies between the two.
            let hi = mul(prev, cfg.factor);
            let v = min(base + mul(hi - base, unit_f64(rng)), cap);
            next_prev = v;
            v
        }
        Strategy::Slotted => slotted(cfg, n, rng),
    };
    let v = min(raw, cap);
    let delay = match cfg.jitter {
        Jitter::None => v,
        Jitter::Full => mul(v, unit_f64(rng)),
        Jitter::Equal => {
            let half = v / 2.0;
            half + mul(half, unit_f64(rng))
        }
        Jitter::Ratio(r) => mul(v, (1.0 - r) + 2.0 * r * unit_f64(rng)),
        Jitter::Add(a) => min(v + mul(a, unit_f64(rng)), cap),
    };
    (clamp_delay(delay), next_prev)
}

/// The capped wait before retry `n` without jitter, for the strategies that
/// are not random by themselves: the schedule's own [`draw`] with jitter off
/// (their draw takes nothing from the generator), so the statistics
/// (`stats::delay_stats`) and the schedule share one definition.
pub(crate) fn unjittered(cfg: &Config, n: u32) -> f64 {
    let cfg = cfg.jitter(Jitter::None);
    draw(&cfg, n, cfg.base_ms, &mut crate::rng::seeded_rng(0)).0
}

/// `floor(u · 2^e)` for u in [0, 1) with 53 bits, e <= 1023, without `floor`
/// (not in `core`): below 2^53 a cast truncates exactly; from e = 53 on the
/// product is already an integer.
fn floor_scaled(u: f64, scale: f64) -> f64 {
    let x = u * scale;
    if x < 9_007_199_254_740_992.0 {
        (x as u64) as f64
    } else {
        x
    }
}

/// The slotted strategy's exponent for retry `n`: `e` for the binary mode
/// (k uniform in [0, 2^e − 1]), the slot `s` for Akka's mode (k uniform in
/// [0, s]), or `None` for Akka's zero-wait reset step. The sequence is a fixed
/// function of n (only the draw within a slot is random), so it is computed
/// directly rather than stepped, which keeps `sample_at` O(1).
#[inline(always)] // measured: a call here costs the wasm module ~40 B gzip
pub(crate) fn slot_exponent(cfg: &Config, n: u32) -> Option<u32> {
    let c = cfg.ceiling;
    Some(match (cfg.slot_mode, cfg.at_ceiling) {
        (SlotMode::Binary, AtCeiling::Stay) => min_u32(n, c),
        (SlotMode::Binary, AtCeiling::Reset) => rem(n - 1, c) + 1,
        // Akka: `exp = nextInt(slot + 1)`; the slot grows by one per
        // failure; past the ceiling it alternates ceiling + 1 / ceiling
        // (stay) or resets with a zero wait.
        (SlotMode::Exponent, AtCeiling::Stay) if n <= c => n,
        (SlotMode::Exponent, AtCeiling::Stay) if (n - c) & 1 == 1 => c + 1,
        (SlotMode::Exponent, AtCeiling::Stay) => c,
        (SlotMode::Exponent, AtCeiling::Reset) => {
            let m = rem(n - 1, c + 1) + 1;
            if m > c {
                return None;
            }
            m
        }
    })
}

/// The slotted strategy's wait before retry `n`.
fn slotted<R: Rng + ?Sized>(cfg: &Config, n: u32, rng: &mut R) -> f64 {
    let Some(e) = slot_exponent(cfg, n) else {
        return 0.0;
    };
    match cfg.slot_mode {
        SlotMode::Binary => mul(floor_scaled(unit_f64(rng), pow_sat(2.0, e)), cfg.base_ms),
        SlotMode::Exponent => {
            let k = floor_scaled(unit_f64(rng), (e + 1) as f64) as u32;
            mul(pow_sat(2.0, k) - 1.0, cfg.base_ms)
        }
    }
}

/// Whether retry `n` is where the slotted strategy wraps past its ceiling.
fn wraps_at(cfg: &Config, n: u32) -> bool {
    if cfg.strategy != Strategy::Slotted || cfg.at_ceiling != AtCeiling::Reset {
        return false;
    }
    let c = cfg.ceiling;
    match cfg.slot_mode {
        SlotMode::Binary => n > c && rem(n - 1, c) == 0,
        SlotMode::Exponent => rem(n, c + 1) == 0,
    }
}
