//! Properties over random valid options (proptest): delays are never NaN,
//! never negative, never above the bound the options promise; the same seed
//! gives the same sequence; attempt and elapsed limits are exact.

use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use wasm_backoff_core::{
    AtCeiling, Backoff, Config, Jitter, MAX_DELAY_MS, SlotMode, Strategy, seeded_rng,
};

fn strategy() -> impl proptest::strategy::Strategy<Value = Strategy> {
    proptest::sample::select(Strategy::ALL.to_vec())
}

fn jitter() -> impl proptest::strategy::Strategy<Value = Jitter> {
    prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        (0.0..=1.0f64).prop_map(Jitter::Ratio),
        (0.0..1e7f64).prop_map(Jitter::Add),
    ]
}

fn positive() -> impl proptest::strategy::Strategy<Value = f64> {
    prop_oneof![Just(0.0), 0.0..10.0f64, 0.0..1e6f64, 0.0..1e300f64]
}

prop_compose! {
    fn config()(
        strategy in strategy(),
        base in positive(),
        factor in prop_oneof![Just(1.0), 1.0..4.0f64, 1.0..1e300f64],
        cap in prop_oneof![positive(), Just(f64::INFINITY)],
        jitter in jitter(),
        max_attempts in proptest::option::of(1u32..300),
        max_elapsed in proptest::option::of(positive()),
        offset in 0u32..3,
        ceiling in 1u32..1024,
        stay in any::<bool>(),
        exponent in any::<bool>(),
    ) -> Config {
        Config::new()
            .strategy(strategy)
            .base_ms(base)
            .factor(factor)
            .max_delay_ms(cap)
            .jitter(jitter)
            .max_attempts(max_attempts)
            .max_elapsed_ms(max_elapsed)
            .exponent_offset(offset)
            .ceiling(ceiling)
            .at_ceiling(if stay { AtCeiling::Stay } else { AtCeiling::Reset })
            .slot_mode(if exponent { SlotMode::Exponent } else { SlotMode::Binary })
    }
}

/// The largest delay `cfg` may hand out.
fn bound(cfg: &Config) -> f64 {
    let cap = cfg.max_delay_ms.min(MAX_DELAY_MS);
    match cfg.jitter {
        Jitter::Ratio(r) => (cap * (1.0 + r)).min(MAX_DELAY_MS),
        _ => cap,
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn delays_are_finite_nonnegative_and_bounded(cfg in config(), seed in any::<u64>()) {
        let mut b = Backoff::new(cfg, seeded_rng(seed)).unwrap();
        let hi = bound(&cfg);
        for d in b.by_ref().take(300) {
            prop_assert!(d.is_finite() && d >= 0.0 && d <= hi, "{d} > {hi}");
        }
        for n in [1u32, 7, 64, 1000, 10_000, u32::MAX] {
            let d = b.sample_at(n);
            prop_assert!(d.is_finite() && d >= 0.0 && d <= hi, "sample_at({n}) = {d}");
        }
    }

    #[test]
    fn same_seed_same_sequence(cfg in config(), seed in any::<u64>()) {
        let a: Vec<u64> = Backoff::new(cfg, seeded_rng(seed)).unwrap().take(100).map(f64::to_bits).collect();
        let b: Vec<u64> = Backoff::new(cfg, seeded_rng(seed)).unwrap().take(100).map(f64::to_bits).collect();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn attempt_limit_is_exact(cfg in config(), m in 1u32..200, seed in any::<u64>()) {
        let cfg = cfg.max_attempts(Some(m)).max_elapsed_ms(None);
        let mut b = Backoff::new(cfg, seeded_rng(seed)).unwrap();
        prop_assert_eq!(b.by_ref().take(1000).count() as u32, m - 1);
        prop_assert_eq!(b.attempt(), m - 1);
    }

    #[test]
    fn elapsed_limit_holds(cfg in config(), limit in 0.0..1e5f64, seed in any::<u64>()) {
        let cfg = cfg.max_elapsed_ms(Some(limit));
        let mut b = Backoff::new(cfg, seeded_rng(seed)).unwrap();
        let total: f64 = b.by_ref().take(1000).sum();
        prop_assert!(total <= limit);
        prop_assert_eq!(b.elapsed_ms(), total);
    }

    #[test]
    fn reset_replays_the_deterministic_part(
        cfg in config(),
        s in prop_oneof![
            Just(Strategy::Exponential),
            Just(Strategy::Constant),
            Just(Strategy::Linear),
            Just(Strategy::Fibonacci),
        ],
        seed in any::<u64>(),
    ) {
        // With no jitter and a non-random strategy, a reset replays exactly.
        let cfg = cfg.strategy(s).jitter(Jitter::None);
        let mut b = Backoff::new(cfg, seeded_rng(seed)).unwrap();
        let first: Vec<f64> = b.by_ref().take(20).collect();
        b.reset();
        let again: Vec<f64> = b.by_ref().take(20).collect();
        prop_assert_eq!(first, again);
    }
}
