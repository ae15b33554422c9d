//! Statistical checks on 100 000 seeded draws: full and equal jitter are
//! uniform over their ranges (one-sample Kolmogorov–Smirnov), and a ratio
//! jitter covers its whole band. Seeded, so the verdict never flickers; the
//! thresholds are the 1 % critical values, so a biased draw (say floor vs.
//! round, or a range off by a factor) fails by a wide margin.

use wasm_backoff_core::{Backoff, Config, Jitter, seeded_rng};

const N: usize = 100_000;

/// sup |F_n(x) − F(x)| for the uniform law on [lo, hi).
fn ks_uniform(mut xs: Vec<f64>, lo: f64, hi: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len() as f64;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = ((x - lo) / (hi - lo)).clamp(0.0, 1.0);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

fn draws(cfg: Config, retry: u32, seed: u64) -> Vec<f64> {
    let mut b = Backoff::new(cfg, seeded_rng(seed)).unwrap();
    (0..N).map(|_| b.sample_at(retry)).collect()
}

/// Critical value of the KS statistic at α = 0.01.
fn critical() -> f64 {
    1.628 / (N as f64).sqrt()
}

#[test]
fn full_jitter_is_uniform_on_zero_to_v() {
    for (retry, v) in [(1, 100.0), (4, 800.0), (12, 20_000.0)] {
        let d = ks_uniform(draws(Config::new(), retry, 17), 0.0, v);
        assert!(d < critical(), "retry {retry}: D = {d}");
    }
    // And it is *not* uniform on a wrong range: the test has teeth.
    let d = ks_uniform(draws(Config::new(), 4, 17), 0.0, 900.0);
    assert!(d > 10.0 * critical(), "D = {d}");
}

#[test]
fn equal_jitter_is_uniform_on_half_v_to_v() {
    let cfg = Config::new().jitter(Jitter::Equal);
    for (retry, v) in [(1, 100.0), (6, 3200.0)] {
        let d = ks_uniform(draws(cfg, retry, 23), v / 2.0, v);
        assert!(d < critical(), "retry {retry}: D = {d}");
    }
}

#[test]
fn ratio_and_additive_jitter_are_uniform_on_their_bands() {
    let d = ks_uniform(
        draws(Config::new().jitter(Jitter::Ratio(0.2)), 3, 29),
        320.0,
        480.0,
    );
    assert!(d < critical(), "ratio: D = {d}");
    let d = ks_uniform(
        draws(Config::new().jitter(Jitter::Add(1000.0)), 2, 31),
        200.0,
        1200.0,
    );
    assert!(d < critical(), "add: D = {d}");
}
