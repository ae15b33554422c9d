//! What a backoff is made of, validated once at construction (as tower does),
//! so that the arithmetic afterwards can rely on it.

use crate::math::MAX_DELAY_MS;

/// How the unjittered wait grows with the retry number n (n = 1 is the wait
/// before the first retry).
///
/// ```
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
/// let d: Vec<f64> = Backoff::new(Config::new().strategy(Strategy::Fibonacci).jitter(Jitter::None), seeded_rng(1)).unwrap().take(3).collect();
/// assert_eq!(d, [100.0, 100.0, 200.0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// `base · factor^(n−1)` (shifted by the preset's exponent offset).
    Exponential,
    /// `base` every time.
    Constant,
    /// `base · n`.
    Linear,
    /// `base · F(n)` with F(1) = F(2) = 1.
    Fibonacci,
    /// Brooker's "decorrelated jitter": `U[base, factor · previous)`, the
    /// previous wait starting at `base`. Random by itself.
    Decorrelated,
    /// A random number of slot times (`base` is the slot time), as in CSMA/CD
    /// Ethernet and Akka's backoff supervisor example; see [`SlotMode`].
    Slotted,
}

impl Strategy {
    /// Every strategy, in documentation order (the JavaScript API's
    /// `strategy` values, and their order in the options record).
    pub const ALL: [Strategy; 6] = [
        Strategy::Exponential,
        Strategy::Constant,
        Strategy::Linear,
        Strategy::Fibonacci,
        Strategy::Decorrelated,
        Strategy::Slotted,
    ];

    /// The name used by the JavaScript API (`{ strategy: 'linear' }`).
    ///
    /// ```
    /// use wasm_backoff_core::Strategy;
    /// assert_eq!(Strategy::Fibonacci.name(), "fibonacci");
    /// assert!(Strategy::ALL.iter().enumerate().all(|(i, s)| *s as usize == i));
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Strategy::Exponential => "exponential",
            Strategy::Constant => "constant",
            Strategy::Linear => "linear",
            Strategy::Fibonacci => "fibonacci",
            Strategy::Decorrelated => "decorrelated",
            Strategy::Slotted => "slotted",
        }
    }
}

/// Randomisation applied to the capped unjittered wait `v`.
///
/// ```
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
/// let d: Vec<f64> = Backoff::new(Config::new().jitter(Jitter::Equal), seeded_rng(1)).unwrap().take(3).collect();
/// assert!((50.0..100.0).contains(&d[0]) && (100.0..200.0).contains(&d[1]));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Jitter {
    /// `v`.
    None,
    /// `U[0, v)` (Brooker's "full jitter", the AWS SDKs).
    Full,
    /// `v/2 + U[0, v/2)` (Brooker's "equal jitter").
    Equal,
    /// `v · U[1 − r, 1 + r)` with r in [0, 1] (gRPC uses 0.2, Hadoop 0.5).
    /// The cap bounds the centre, so the wait can reach `cap · (1 + r)`: a cap
    /// applied after would pile half the draws onto the cap and undo the
    /// desynchronisation the jitter exists for.
    Ratio(f64),
    /// `min(cap, v + U[0, a))` with `a` in ms (Google Cloud Storage adds up to 1 s).
    Add(f64),
}

/// How the slotted strategy draws its number of slots after failure c.
///
/// ```
/// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, SlotMode, Strategy};
/// let cfg = Config::new().strategy(Strategy::Slotted).slot_mode(SlotMode::Binary).base_ms(1.0).jitter(Jitter::None);
/// let d = Backoff::new(cfg, seeded_rng(1)).unwrap().next_delay().unwrap();
/// assert!(d == 0.0 || d == 1.0); // 0 or 1 slot after the first collision
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotMode {
    /// `k` uniform in `[0, 2^e − 1]`, wait `k` slots (CSMA/CD truncated binary
    /// exponential backoff), with `e = min(c, ceiling)` or wrapping to 1 past
    /// the ceiling.
    Binary,
    /// `k` uniform in `[0, slot]`, wait `2^k − 1` slots, reproducing Akka's
    /// `ExponentialBackOff` state machine exactly (quirks included: in
    /// `Stay` mode the slot alternates between ceiling + 1 and ceiling; in
    /// `Reset` mode the step past the ceiling waits 0 and starts over).
    Exponent,
}

/// What the slotted strategy does once its slot passes the ceiling.
///
/// ```
/// use wasm_backoff_core::{seeded_rng, AtCeiling, Backoff, Config, Strategy};
/// let cfg = Config::new().strategy(Strategy::Slotted).ceiling(1).at_ceiling(AtCeiling::Reset);
/// let mut b = Backoff::new(cfg, seeded_rng(1)).unwrap();
/// b.next_delay();
/// b.next_delay(); // past the ceiling: back to slot 1
/// assert_eq!(b.resets(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtCeiling {
    /// Keep drawing at the ceiling (truncated backoff).
    Stay,
    /// Start again from slot 1 (counted in [`crate::Backoff::resets`]).
    Reset,
}

/// A complete backoff policy. Build it with the `const fn` setters from
/// [`Config::new`] (whose defaults are documented on each field) or from a
/// [`crate::Preset`]; [`Config::validate`] runs when a backoff is made.
///
/// ```
/// use wasm_backoff_core::{Config, ConfigError, Jitter, Strategy};
/// let cfg = Config::new().strategy(Strategy::Linear).base_ms(50.0).jitter(Jitter::Ratio(0.1));
/// assert!(cfg.validate().is_ok());
/// assert_eq!(Config::new().factor(0.5).validate(), Err(ConfigError::Factor));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// Default [`Strategy::Exponential`].
    pub strategy: Strategy,
    /// The first wait, or the slot time for [`Strategy::Slotted`], in ms. Default 100.
    pub base_ms: f64,
    /// Growth factor for exponential, the multiplier of the previous wait for
    /// decorrelated. Default 2 (3 is Brooker's decorrelated value).
    pub factor: f64,
    /// Truncation of the unjittered wait, in ms; clamped to 2^31 − 1. Default 20 000.
    pub max_delay_ms: f64,
    /// Default [`Jitter::Full`].
    pub jitter: Jitter,
    /// Total tries including the first; `None` = no limit. Default `None`.
    pub max_attempts: Option<u32>,
    /// The sum of the delays handed out may not exceed this (ms); `None` =
    /// no limit. Default `None`.
    pub max_elapsed_ms: Option<f64>,
    /// Added to the exponent of [`Strategy::Exponential`]: 0 gives
    /// `base · factor^(n−1)` (first retry waits `base`); 1 gives
    /// `base · factor^n`, the form of the AWS and Hadoop formulas. Default 0.
    pub exponent_offset: u32,
    /// Slotted only: the exponent ceiling, in [1, 1023]. Default 10.
    pub ceiling: u32,
    /// Slotted only. Default [`AtCeiling::Stay`].
    pub at_ceiling: AtCeiling,
    /// Slotted only. Default [`SlotMode::Binary`].
    pub slot_mode: SlotMode,
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

impl Config {
    /// The defaults: exponential, full jitter, base 100 ms, factor 2, cap
    /// 20 s, no attempt or time limit.
    ///
    /// ```
    /// use wasm_backoff_core::Config;
    /// let c = Config::new();
    /// assert_eq!((c.base_ms, c.factor, c.max_delay_ms, c.max_attempts), (100.0, 2.0, 20_000.0, None));
    /// ```
    pub const fn new() -> Self {
        Config {
            strategy: Strategy::Exponential,
            base_ms: 100.0,
            factor: 2.0,
            max_delay_ms: 20_000.0,
            jitter: Jitter::Full,
            max_attempts: None,
            max_elapsed_ms: None,
            exponent_offset: 0,
            ceiling: 10,
            at_ceiling: AtCeiling::Stay,
            slot_mode: SlotMode::Binary,
        }
    }
    /// Sets [`Config::strategy`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
    /// let d: Vec<f64> = Backoff::new(Config::new().jitter(Jitter::None).strategy(Strategy::Constant), seeded_rng(1)).unwrap().take(3).collect();
    /// assert_eq!(d, [100.0, 100.0, 100.0]);
    /// ```
    pub const fn strategy(mut self, s: Strategy) -> Self {
        self.strategy = s;
        self
    }
    /// Sets [`Config::base_ms`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
    /// let d: Vec<f64> = Backoff::new(Config::new().jitter(Jitter::None).base_ms(10.0), seeded_rng(1)).unwrap().take(3).collect();
    /// assert_eq!(d, [10.0, 20.0, 40.0]);
    /// ```
    pub const fn base_ms(mut self, ms: f64) -> Self {
        self.base_ms = ms;
        self
    }
    /// Sets [`Config::factor`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
    /// let d: Vec<f64> = Backoff::new(Config::new().jitter(Jitter::None).factor(3.0), seeded_rng(1)).unwrap().take(3).collect();
    /// assert_eq!(d, [100.0, 300.0, 900.0]);
    /// ```
    pub const fn factor(mut self, f: f64) -> Self {
        self.factor = f;
        self
    }
    /// Sets [`Config::max_delay_ms`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
    /// let d: Vec<f64> = Backoff::new(Config::new().jitter(Jitter::None).max_delay_ms(150.0), seeded_rng(1)).unwrap().take(3).collect();
    /// assert_eq!(d, [100.0, 150.0, 150.0]);
    /// ```
    pub const fn max_delay_ms(mut self, ms: f64) -> Self {
        self.max_delay_ms = ms;
        self
    }
    /// Sets [`Config::jitter`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
    /// let d: Vec<f64> = Backoff::new(Config::new().jitter(Jitter::Ratio(0.0)), seeded_rng(1)).unwrap().take(3).collect();
    /// assert_eq!(d, [100.0, 200.0, 400.0]); // ratio 0: no spread
    /// ```
    pub const fn jitter(mut self, j: Jitter) -> Self {
        self.jitter = j;
        self
    }
    /// Sets [`Config::max_attempts`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
    /// let d: Vec<f64> = Backoff::new(Config::new().max_attempts(Some(2)), seeded_rng(1)).unwrap().take(3).collect();
    /// assert_eq!(d.len(), 1); // 2 tries: 1 delay
    /// ```
    pub const fn max_attempts(mut self, n: Option<u32>) -> Self {
        self.max_attempts = n;
        self
    }
    /// Sets [`Config::max_elapsed_ms`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
    /// let d: Vec<f64> = Backoff::new(Config::new().jitter(Jitter::None).max_elapsed_ms(Some(350.0)), seeded_rng(1)).unwrap().take(3).collect();
    /// assert_eq!(d, [100.0, 200.0]); // +400 would pass 350
    /// ```
    pub const fn max_elapsed_ms(mut self, ms: Option<f64>) -> Self {
        self.max_elapsed_ms = ms;
        self
    }
    /// Sets [`Config::exponent_offset`].
    ///
    /// ```
    /// use wasm_backoff_core::{seeded_rng, Backoff, Config, Jitter, Strategy};
    /// let d: Vec<f64> = Backoff::new(Config::new().jitter(Jitter::None).exponent_offset(1), seeded_rng(1)).unwrap().take(3).collect();
    /// assert_eq!(d, [200.0, 400.0, 800.0]); // base·2^n, the AWS form
    /// ```
    pub const fn exponent_offset(mut self, k: u32) -> Self {
        self.exponent_offset = k;
        self
    }
    /// Sets [`Config::ceiling`].
    ///
    /// ```
    /// use wasm_backoff_core::Config;
    /// assert!(Config::new().ceiling(1023).validate().is_ok());
    /// assert!(Config::new().ceiling(1024).validate().is_err());
    /// ```
    pub const fn ceiling(mut self, c: u32) -> Self {
        self.ceiling = c;
        self
    }
    /// Sets [`Config::at_ceiling`].
    ///
    /// ```
    /// use wasm_backoff_core::{AtCeiling, Config};
    /// assert_eq!(Config::new().at_ceiling(AtCeiling::Reset).at_ceiling, AtCeiling::Reset);
    /// ```
    pub const fn at_ceiling(mut self, a: AtCeiling) -> Self {
        self.at_ceiling = a;
        self
    }
    /// Sets [`Config::slot_mode`].
    ///
    /// ```
    /// use wasm_backoff_core::{Config, SlotMode};
    /// assert_eq!(Config::new().slot_mode(SlotMode::Exponent).slot_mode, SlotMode::Exponent);
    /// ```
    pub const fn slot_mode(mut self, m: SlotMode) -> Self {
        self.slot_mode = m;
        self
    }

    /// The cap actually applied: `max_delay_ms` clamped to what a timer accepts.
    pub(crate) fn cap(&self) -> f64 {
        crate::math::min(self.max_delay_ms, MAX_DELAY_MS)
    }

    /// Checks every field; the error names the offending option.
    ///
    /// ```
    /// use wasm_backoff_core::{Config, ConfigError, Jitter};
    /// assert_eq!(Config::new().jitter(Jitter::Ratio(2.0)).validate(), Err(ConfigError::JitterRatio));
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        let finite_nonneg = |x: f64| x.is_finite() && x >= 0.0;
        if !finite_nonneg(self.base_ms) {
            return Err(ConfigError::BaseMs);
        }
        if !(self.factor.is_finite() && self.factor >= 1.0) {
            return Err(ConfigError::Factor);
        }
        // +inf is allowed and means "only the timer limit"; NaN is not.
        if self.max_delay_ms.is_nan() || self.max_delay_ms < 0.0 {
            return Err(ConfigError::MaxDelayMs);
        }
        match self.jitter {
            Jitter::Ratio(r) if !(0.0..=1.0).contains(&r) => return Err(ConfigError::JitterRatio),
            Jitter::Add(a) if !finite_nonneg(a) => return Err(ConfigError::JitterAddMaxMs),
            _ => {}
        }
        if self.max_attempts == Some(0) {
            return Err(ConfigError::MaxAttempts);
        }
        if let Some(ms) = self.max_elapsed_ms {
            if ms.is_nan() || ms < 0.0 {
                return Err(ConfigError::MaxElapsedMs);
            }
        }
        if self.ceiling == 0 || self.ceiling > 1023 {
            return Err(ConfigError::Ceiling);
        }
        Ok(())
    }
}

/// A rejected option. [`ConfigError::message`] is the text the JavaScript
/// layer throws; it always starts with the option's name. The discriminants
/// are stable: the wasm module reports an error as `code()`.
///
/// ```
/// use wasm_backoff_core::{Config, ConfigError};
/// assert_eq!(Config::new().max_attempts(Some(0)).validate(), Err(ConfigError::MaxAttempts));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ConfigError {
    /// `base_ms` / `baseMs`.
    BaseMs = 1,
    /// `factor`.
    Factor,
    /// `max_delay_ms` / `maxDelayMs`.
    MaxDelayMs,
    /// `jitter.ratio`.
    JitterRatio,
    /// `jitter.addMaxMs`.
    JitterAddMaxMs,
    /// `max_attempts` / `maxAttempts`.
    MaxAttempts,
    /// `max_elapsed_ms` / `maxElapsedMs`.
    MaxElapsedMs,
    /// `ceiling`.
    Ceiling,
    /// The Hadoop preset's own rule on `maxRetries` (= maxAttempts − 1).
    HadoopMaxAttempts,
}

impl ConfigError {
    /// Every error, in code order.
    ///
    /// ```
    /// use wasm_backoff_core::ConfigError;
    /// assert_eq!(ConfigError::ALL[0].code(), 1);
    /// ```
    pub const ALL: [ConfigError; 9] = [
        ConfigError::BaseMs,
        ConfigError::Factor,
        ConfigError::MaxDelayMs,
        ConfigError::JitterRatio,
        ConfigError::JitterAddMaxMs,
        ConfigError::MaxAttempts,
        ConfigError::MaxElapsedMs,
        ConfigError::Ceiling,
        ConfigError::HadoopMaxAttempts,
    ];

    /// A small stable number for the error (1 = `BaseMs`, in declaration order).
    ///
    /// ```
    /// use wasm_backoff_core::ConfigError;
    /// assert_eq!(ConfigError::BaseMs.code(), 1);
    /// ```
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// A message naming the option and the accepted range (a `&'static str`:
    /// no formatting machinery on the wasm path).
    ///
    /// ```
    /// use wasm_backoff_core::ConfigError;
    /// assert_eq!(ConfigError::BaseMs.message(), "baseMs must be a finite number >= 0");
    /// ```
    pub const fn message(self) -> &'static str {
        match self {
            ConfigError::BaseMs => "baseMs must be a finite number >= 0",
            ConfigError::Factor => "factor must be a finite number >= 1",
            ConfigError::MaxDelayMs => "maxDelayMs must be a number >= 0",
            ConfigError::JitterRatio => "jitter.ratio must be a number in [0, 1]",
            ConfigError::JitterAddMaxMs => "jitter.addMaxMs must be a finite number >= 0",
            ConfigError::MaxAttempts => "maxAttempts must be an integer >= 1",
            ConfigError::MaxElapsedMs => "maxElapsedMs must be a number >= 0",
            ConfigError::Ceiling => "ceiling must be an integer in [1, 1023]",
            ConfigError::HadoopMaxAttempts => {
                "maxAttempts must be an integer in [1, 63] with preset 'hadoop'"
            }
        }
    }
}

crate::error_with_message!(ConfigError);
