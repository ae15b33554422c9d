//! The exact statistics agree with 200 000 seeded draws of the real
//! schedule, for every preset and strategy that has a closed form.

use wasm_backoff_core::{
    AtCeiling, Backoff, Config, Jitter, Preset, SlotMode, Strategy, delay_stats, seeded_rng,
};

fn empirical(cfg: Config, n: u32) -> [f64; 5] {
    let mut b = Backoff::new(cfg, seeded_rng(77)).unwrap();
    let mut xs: Vec<f64> = (0..200_000).map(|_| b.sample_at(n)).collect();
    xs.sort_by(f64::total_cmp);
    let q = |p: f64| xs[((p * xs.len() as f64) as usize).min(xs.len() - 1)];
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    [xs[0], *xs.last().unwrap(), q(0.5), q(0.9), mean]
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    (a - b).abs() <= 0.01 * scale + 1e-9
}

#[test]
fn closed_forms_match_samples() {
    let mut cases: Vec<Config> = Preset::ALL.iter().map(|p| p.config()).collect();
    cases.extend([
        Config::new()
            .strategy(Strategy::Linear)
            .jitter(Jitter::Equal),
        Config::new()
            .strategy(Strategy::Fibonacci)
            .jitter(Jitter::Ratio(0.3)),
        Config::new()
            .strategy(Strategy::Constant)
            .jitter(Jitter::Add(300.0))
            .max_delay_ms(250.0),
        Config::new()
            .strategy(Strategy::Slotted)
            .jitter(Jitter::None)
            .slot_mode(SlotMode::Exponent)
            .at_ceiling(AtCeiling::Stay),
        Config::new()
            .strategy(Strategy::Slotted)
            .jitter(Jitter::None)
            .max_delay_ms(300.0),
    ]);
    let mut checked = 0;
    for cfg in cases {
        for n in [1, 2, 3, 5, 8, 12, 17] {
            let Some(s) = delay_stats(&cfg, n) else {
                continue;
            };
            let [lo, hi, p50, p90, mean] = empirical(cfg, n);
            let scale = s.max.max(1e-9);
            assert!(
                s.min <= lo + 1e-9 && hi <= s.max + 1e-9,
                "{cfg:?} n={n}: range {lo}..{hi} vs {s:?}"
            );
            assert!(
                close(s.p50, p50, scale) && close(s.p90, p90, scale),
                "{cfg:?} n={n}: {s:?} vs p50 {p50} p90 {p90}"
            );
            assert!(
                close(s.mean, mean, scale),
                "{cfg:?} n={n}: mean {} vs {mean}",
                s.mean
            );
            checked += 1;
        }
    }
    assert!(checked >= 70, "{checked}");
    assert_eq!(
        delay_stats(&Preset::Decorrelated.config(), 3),
        None,
        "no closed form: sample it"
    );
}

#[test]
fn flume_is_deterministic() {
    let s = delay_stats(&Preset::Flume.config(), 3).unwrap();
    assert_eq!(
        (s.min, s.p50, s.p90, s.max, s.mean),
        (1000.0, 1000.0, 1000.0, 1000.0, 1000.0)
    );
}
