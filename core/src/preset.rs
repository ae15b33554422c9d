//! Named policies that reproduce well-known systems. A preset is only a
//! starting [`Config`] (timing, never which failures are retried): callers
//! override any field afterwards.

use crate::config::{AtCeiling, Config, ConfigError, Jitter, SlotMode, Strategy};

/// A reference system whose retry timing we reproduce. n is the retry number
/// (n = 1 is the wait before the first retry) and U[a, b) a uniform draw.
///
/// ```
/// use wasm_backoff_core::{seeded_rng, Backoff, Preset};
/// let flume: Vec<f64> = Backoff::new(Preset::Flume.config(), seeded_rng(0)).unwrap().take(6).collect();
/// assert_eq!(flume, [250.0, 500.0, 1000.0, 2000.0, 4000.0, 4000.0]);
/// assert_eq!(Preset::from_name("aws"), Some(Preset::Aws));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Google Cloud Storage: `min(2^(n−1) s + U[0, 1000) ms, 32 s)`; retries at
    /// the cap until the caller's limit (none by default).
    Gcs,
    /// AWS SDKs / Brooker's full jitter: `U[0, min(20 s, 100 ms · 2^n))`, 3 attempts.
    Aws,
    /// Brooker's decorrelated jitter: `min(20 s, U[100 ms, 3 · previous))`.
    Decorrelated,
    /// Brooker's equal jitter: `v/2 + U[0, v/2)` with `v = min(20 s, 100 ms · 2^n)`.
    Equal,
    /// gRPC connection backoff: `min(1 s · 1.6^(n−1), 120 s) · U[0.8, 1.2)`, no limit.
    Grpc,
    /// CSMA/CD truncated binary exponential backoff: after collision c wait
    /// `k · 51.2 µs` with k uniform in `[0, 2^min(c, 10) − 1]`; give up when c > 16.
    Ethernet,
    /// Akka's `ExponentialBackOff` (backoff-supervisor example): slot time
    /// 10 ms, `2^k − 1` slots with k uniform in `[0, slot]`, ceiling 10, reset
    /// past the ceiling, no limit.
    Akka,
    /// Apache Flume's SpoolDirectorySource: 250 ms doubled per failure up to
    /// 4000 ms, no jitter, never gives up.
    Flume,
    /// Hadoop `RetryPolicies.exponentialBackoffRetry(maxRetries = 10, sleepTime = 100 ms)`:
    /// `min(100 ms · 2^n, cap) · U[0.5, 1.5)` (Hadoop's `retries` counts from
    /// 0, hence 2^n); maxRetries must satisfy 0 <= maxRetries < 63.
    Hadoop,
}

const CONFIGS: [Config; 9] = [
    Preset::Gcs.build(),
    Preset::Aws.build(),
    Preset::Decorrelated.build(),
    Preset::Equal.build(),
    Preset::Grpc.build(),
    Preset::Ethernet.build(),
    Preset::Akka.build(),
    Preset::Flume.build(),
    Preset::Hadoop.build(),
];

impl Preset {
    /// Every preset, in documentation order.
    pub const ALL: [Preset; 9] = [
        Preset::Gcs,
        Preset::Aws,
        Preset::Decorrelated,
        Preset::Equal,
        Preset::Grpc,
        Preset::Ethernet,
        Preset::Akka,
        Preset::Flume,
        Preset::Hadoop,
    ];

    /// The name used by the JavaScript API (`{ preset: 'gcs' }`).
    ///
    /// ```
    /// use wasm_backoff_core::Preset;
    /// assert_eq!(Preset::Grpc.name(), "grpc");
    /// ```
    pub const fn name(self) -> &'static str {
        match self {
            Preset::Gcs => "gcs",
            Preset::Aws => "aws",
            Preset::Decorrelated => "decorrelated",
            Preset::Equal => "equal",
            Preset::Grpc => "grpc",
            Preset::Ethernet => "ethernet",
            Preset::Akka => "akka",
            Preset::Flume => "flume",
            Preset::Hadoop => "hadoop",
        }
    }

    /// The preset with this name, if any.
    ///
    /// ```
    /// use wasm_backoff_core::Preset;
    /// assert_eq!(Preset::from_name("hadoop"), Some(Preset::Hadoop));
    /// assert_eq!(Preset::from_name("nope"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The preset's configuration (a table built at compile time, so the wasm
    /// module carries data rather than code for it).
    ///
    /// ```
    /// use wasm_backoff_core::Preset;
    /// assert_eq!(Preset::Aws.config().max_attempts, Some(3));
    /// ```
    pub const fn config(self) -> Config {
        CONFIGS[self as usize]
    }

    const fn build(self) -> Config {
        let c = Config::new();
        match self {
            Preset::Gcs => c
                .base_ms(1000.0)
                .max_delay_ms(32_000.0)
                .jitter(Jitter::Add(1000.0)),
            Preset::Aws => c.exponent_offset(1).max_attempts(Some(3)),
            Preset::Decorrelated => c
                .strategy(Strategy::Decorrelated)
                .factor(3.0)
                .jitter(Jitter::None),
            Preset::Equal => c.exponent_offset(1).jitter(Jitter::Equal),
            Preset::Grpc => c
                .base_ms(1000.0)
                .factor(1.6)
                .max_delay_ms(120_000.0)
                .jitter(Jitter::Ratio(0.2)),
            Preset::Ethernet => c
                .strategy(Strategy::Slotted)
                .slot_mode(SlotMode::Binary)
                .base_ms(0.0512)
                .ceiling(10)
                .at_ceiling(AtCeiling::Stay)
                .max_delay_ms(f64::INFINITY)
                .jitter(Jitter::None)
                .max_attempts(Some(17)),
            Preset::Akka => c
                .strategy(Strategy::Slotted)
                .slot_mode(SlotMode::Exponent)
                .base_ms(10.0)
                .ceiling(10)
                .at_ceiling(AtCeiling::Reset)
                .max_delay_ms(f64::INFINITY)
                .jitter(Jitter::None),
            Preset::Flume => c.base_ms(250.0).max_delay_ms(4000.0).jitter(Jitter::None),
            Preset::Hadoop => c
                .exponent_offset(1)
                .max_delay_ms(f64::INFINITY)
                .jitter(Jitter::Ratio(0.5))
                .max_attempts(Some(11)),
        }
    }

    /// Rules of the reference system that go beyond [`Config::validate`]
    /// (run after the caller's overrides are applied).
    ///
    /// ```
    /// use wasm_backoff_core::{ConfigError, Preset};
    /// let cfg = Preset::Hadoop.config().max_attempts(Some(64));
    /// assert_eq!(Preset::Hadoop.check(&cfg), Err(ConfigError::HadoopMaxAttempts));
    /// ```
    pub fn check(self, cfg: &Config) -> Result<(), ConfigError> {
        match self {
            Preset::Hadoop => match cfg.max_attempts {
                Some(n) if (1..=63).contains(&n) => Ok(()),
                _ => Err(ConfigError::HadoopMaxAttempts),
            },
            _ => Ok(()),
        }
    }
}
