//! Exact statistics of the delay before a given retry, where the law has a
//! closed form: the unjittered wait `v` is then deterministic and the delay
//! is a monotone function of one uniform draw (or a uniform slot count), so
//! quantiles are that function at q and the mean is its integral.

use crate::backoff::{slot_exponent, unjittered};
use crate::config::{Config, Jitter, SlotMode, Strategy};
use crate::math::{clamp_delay, min, mul, pow_sat};

/// Min, max (the supremum for continuous laws), median, 90th percentile and
/// mean of the delay before one retry, in ms.
///
/// ```
/// use wasm_backoff_core::{delay_stats, Config, Jitter};
/// let s = delay_stats(&Config::new().jitter(Jitter::Equal), 1).unwrap();
/// assert_eq!((s.min, s.max, s.mean), (50.0, 100.0, 75.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DelayStats {
    /// Smallest possible delay.
    pub min: f64,
    /// Largest possible delay (supremum).
    pub max: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Expected value.
    pub mean: f64,
}

/// The exact statistics of the delay before retry `n` (>= 1) under `cfg`,
/// or `None` when the law has no closed form here (the decorrelated chain,
/// or a slotted draw with extra jitter on top): then sample it.
///
/// ```
/// use wasm_backoff_core::{delay_stats, Config, Strategy};
/// assert!(delay_stats(&Config::new().strategy(Strategy::Decorrelated), 2).is_none()); // no closed form: sample
/// ```
pub fn delay_stats(cfg: &Config, n: u32) -> Option<DelayStats> {
    let n = if n == 0 { 1 } else { n };
    let cap = cfg.cap();
    match cfg.strategy {
        Strategy::Decorrelated => None,
        Strategy::Slotted if cfg.jitter != Jitter::None => None,
        Strategy::Slotted => Some(slotted(cfg, n)),
        _ => {
            // The unjittered wait is the delay with no jitter: ask the schedule.
            let v = unjittered(cfg, n);
            Some(jittered(cfg.jitter, v, cap))
        }
    }
}

/// `f(q)` for the quantile function `f` of the jittered delay.
fn jittered(j: Jitter, v: f64, cap: f64) -> DelayStats {
    let at = |q: f64| -> f64 {
        clamp_delay(match j {
            Jitter::None => v,
            Jitter::Full => v * q,
            Jitter::Equal => v / 2.0 + v / 2.0 * q,
            Jitter::Ratio(r) => v * (1.0 - r + 2.0 * r * q),
            Jitter::Add(a) => min(v + a * q, cap),
        })
    };
    let mean = match j {
        Jitter::Add(a) if a > 0.0 && v + a > cap => {
            // E[min(cap, v + aU)] = v·t + a·t²/2 + cap·(1 − t), t = (cap − v)/a.
            let t = ((cap - v) / a).clamp(0.0, 1.0);
            v * t + a * t * t / 2.0 + cap * (1.0 - t)
        }
        _ => at(0.5),
    };
    DelayStats {
        min: at(0.0),
        max: at(1.0),
        p50: at(0.5),
        p90: at(0.9),
        mean: clamp_delay(mean),
    }
}

/// The slotted strategy without jitter: a discrete law over slot counts.
fn slotted(cfg: &Config, n: u32) -> DelayStats {
    let cap = cfg.cap();
    let slot = cfg.base_ms;
    let Some(e) = slot_exponent(cfg, n) else {
        return DelayStats {
            min: 0.0,
            max: 0.0,
            p50: 0.0,
            p90: 0.0,
            mean: 0.0,
        };
    };
    // k is uniform over m values; its q-quantile is ceil(q·m) − 1 (q > 0).
    let (m, d): (f64, &dyn Fn(f64) -> f64) = match cfg.slot_mode {
        SlotMode::Binary => (pow_sat(2.0, e), &|k| clamp_delay(min(mul(k, slot), cap))),
        SlotMode::Exponent => ((e + 1) as f64, &|k| {
            clamp_delay(min(mul(pow_sat(2.0, k as u32) - 1.0, slot), cap))
        }),
    };
    let k = |q: f64| ceil(q * m) - 1.0;
    DelayStats {
        min: d(0.0),
        max: d(m - 1.0),
        p50: d(k(0.5)),
        p90: d(k(0.9)),
        mean: mean_capped(m, d),
    }
}

/// Mean of `d(k)` for k uniform in 0..m; m is at most 2^1023, so large
/// ranges are summed over 4096 evenly spaced strata (exact up to 4096).
fn mean_capped(m: f64, d: &dyn Fn(f64) -> f64) -> f64 {
    let steps = if m < 4096.0 { m } else { 4096.0 };
    let mut sum = 0.0;
    let mut i = 0.0;
    while i < steps {
        sum += d(if steps == m {
            i
        } else {
            ceil((i + 0.5) * m / steps) - 1.0
        });
        i += 1.0;
    }
    sum / steps
}

/// `ceil` for non-negative finite x without std.
fn ceil(x: f64) -> f64 {
    if x >= 9_007_199_254_740_992.0 {
        return x;
    }
    let t = (x as u64) as f64;
    if t < x { t + 1.0 } else { t }
}
