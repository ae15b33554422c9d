//! The generic strategies and limits, with jitter off so values are exact.

use wasm_backoff_core::{Backoff, Config, ConfigError, Jitter, MAX_DELAY_MS, Strategy, seeded_rng};

fn exact(cfg: Config) -> Backoff {
    Backoff::new(cfg.jitter(Jitter::None), seeded_rng(1)).unwrap()
}

fn take(b: &mut Backoff, n: usize) -> Vec<f64> {
    b.by_ref().take(n).collect()
}

#[test]
fn defaults_are_exponential_full_jitter_100ms_factor_2_cap_20s_no_limit() {
    let c = Config::new();
    assert_eq!(c.strategy, Strategy::Exponential);
    assert_eq!(c.jitter, Jitter::Full);
    assert_eq!(
        (c.base_ms, c.factor, c.max_delay_ms),
        (100.0, 2.0, 20_000.0)
    );
    assert_eq!((c.max_attempts, c.max_elapsed_ms), (None, None));
    // The unjittered first retry waits baseMs.
    assert_eq!(
        take(&mut exact(c), 9),
        [
            100.0, 200.0, 400.0, 800.0, 1600.0, 3200.0, 6400.0, 12800.0, 20000.0
        ]
    );
}

#[test]
fn linear_constant_fibonacci() {
    let lin = Config::new()
        .strategy(Strategy::Linear)
        .base_ms(50.0)
        .max_delay_ms(220.0);
    assert_eq!(
        take(&mut exact(lin), 6),
        [50.0, 100.0, 150.0, 200.0, 220.0, 220.0]
    );
    let con = Config::new().strategy(Strategy::Constant).base_ms(70.0);
    assert_eq!(take(&mut exact(con), 3), [70.0, 70.0, 70.0]);
    let fib = Config::new().strategy(Strategy::Fibonacci).base_ms(10.0);
    assert_eq!(
        take(&mut exact(fib), 8),
        [10.0, 10.0, 20.0, 30.0, 50.0, 80.0, 130.0, 210.0]
    );
}

#[test]
fn factor_and_exponent_offset() {
    let c = Config::new().factor(3.0).base_ms(1.0);
    assert_eq!(take(&mut exact(c), 4), [1.0, 3.0, 9.0, 27.0]);
    let c = Config::new().exponent_offset(1).base_ms(1.0);
    assert_eq!(take(&mut exact(c), 3), [2.0, 4.0, 8.0]);
}

#[test]
fn max_attempts_counts_the_first_try() {
    for m in 1..20u32 {
        let mut b = exact(Config::new().max_attempts(Some(m)));
        assert_eq!(b.by_ref().count() as u32, m - 1);
        assert_eq!(b.attempt(), m - 1);
        // Giving up is sticky until a reset.
        assert_eq!(b.next_delay(), None);
        b.reset();
        assert_eq!(b.attempt(), 0);
        assert_eq!(b.by_ref().count() as u32, m - 1);
    }
}

#[test]
fn max_elapsed_stops_before_the_sum_would_exceed_it() {
    // 100 + 200 + 400 = 700 <= 1000; + 800 would be 1500.
    let mut b = exact(Config::new().max_elapsed_ms(Some(1000.0)));
    assert_eq!(take(&mut b, 10), [100.0, 200.0, 400.0]);
    assert_eq!(b.elapsed_ms(), 700.0);
    assert_eq!(b.next_delay(), None, "sticky");
    b.reset();
    assert_eq!(b.elapsed_ms(), 0.0);
    assert_eq!(b.next_delay(), Some(100.0));
    // Exactly reaching the limit is allowed.
    let mut b = exact(Config::new().max_elapsed_ms(Some(300.0)));
    assert_eq!(take(&mut b, 10), [100.0, 200.0]);
}

#[test]
fn counters() {
    let mut b = exact(Config::new());
    take(&mut b, 3);
    assert_eq!((b.attempt(), b.total_retries(), b.resets()), (3, 3, 0));
    b.reset();
    take(&mut b, 2);
    assert_eq!((b.attempt(), b.total_retries(), b.resets()), (2, 5, 1));
    // A reset with nothing handed out is not counted.
    b.reset();
    b.reset();
    assert_eq!(b.resets(), 2);
}

#[test]
fn huge_attempts_and_extreme_options_stay_finite() {
    let extremes = [
        Config::new()
            .factor(1e308)
            .base_ms(1e308)
            .max_delay_ms(f64::INFINITY),
        Config::new()
            .strategy(Strategy::Fibonacci)
            .base_ms(1e-300)
            .max_delay_ms(f64::INFINITY),
        Config::new().strategy(Strategy::Linear).base_ms(f64::MAX),
        Config::new().base_ms(0.0).factor(1e300),
        Config::new()
            .strategy(Strategy::Decorrelated)
            .factor(1e308)
            .base_ms(1e300)
            .max_delay_ms(f64::INFINITY),
        Config::new()
            .strategy(Strategy::Decorrelated)
            .base_ms(5000.0)
            .max_delay_ms(10.0),
        Config::new()
            .strategy(Strategy::Slotted)
            .ceiling(1023)
            .max_delay_ms(f64::INFINITY),
        Config::new()
            .jitter(Jitter::Ratio(1.0))
            .max_delay_ms(f64::INFINITY),
    ];
    for cfg in extremes {
        let mut b = Backoff::new(cfg, seeded_rng(3)).unwrap();
        for _ in 0..10_000 {
            let d = b.next_delay().unwrap();
            assert!(
                d.is_finite() && (0.0..=MAX_DELAY_MS).contains(&d),
                "{cfg:?}: {d}"
            );
        }
        for n in [1, 2, 63, 64, 1000, 10_000, 1 << 20, u32::MAX] {
            let d = b.sample_at(n);
            assert!(
                d.is_finite() && (0.0..=MAX_DELAY_MS).contains(&d),
                "{cfg:?} n={n}: {d}"
            );
        }
    }
}

#[test]
fn invalid_configs_name_the_option() {
    let bad = [
        (Config::new().base_ms(-1.0), ConfigError::BaseMs),
        (Config::new().base_ms(f64::NAN), ConfigError::BaseMs),
        (Config::new().base_ms(f64::INFINITY), ConfigError::BaseMs),
        (Config::new().factor(0.5), ConfigError::Factor),
        (Config::new().factor(f64::NAN), ConfigError::Factor),
        (Config::new().max_delay_ms(-0.1), ConfigError::MaxDelayMs),
        (
            Config::new().max_delay_ms(f64::NAN),
            ConfigError::MaxDelayMs,
        ),
        (
            Config::new().jitter(Jitter::Ratio(1.5)),
            ConfigError::JitterRatio,
        ),
        (
            Config::new().jitter(Jitter::Ratio(-0.1)),
            ConfigError::JitterRatio,
        ),
        (
            Config::new().jitter(Jitter::Add(f64::INFINITY)),
            ConfigError::JitterAddMaxMs,
        ),
        (
            Config::new().max_attempts(Some(0)),
            ConfigError::MaxAttempts,
        ),
        (
            Config::new().max_elapsed_ms(Some(-1.0)),
            ConfigError::MaxElapsedMs,
        ),
        (
            Config::new().max_elapsed_ms(Some(f64::NAN)),
            ConfigError::MaxElapsedMs,
        ),
        (Config::new().ceiling(0), ConfigError::Ceiling),
        (Config::new().ceiling(1024), ConfigError::Ceiling),
    ];
    for (cfg, err) in bad {
        assert_eq!(Backoff::new(cfg, seeded_rng(0)).err(), Some(err), "{cfg:?}");
    }
    let names = [
        (ConfigError::BaseMs, "baseMs"),
        (ConfigError::Factor, "factor"),
        (ConfigError::MaxDelayMs, "maxDelayMs"),
        (ConfigError::JitterRatio, "jitter.ratio"),
        (ConfigError::JitterAddMaxMs, "jitter.addMaxMs"),
        (ConfigError::MaxAttempts, "maxAttempts"),
        (ConfigError::MaxElapsedMs, "maxElapsedMs"),
        (ConfigError::Ceiling, "ceiling"),
        (ConfigError::HadoopMaxAttempts, "maxAttempts"),
    ];
    for (e, name) in names {
        assert!(e.message().starts_with(name), "{e:?}");
    }
}

#[test]
fn sample_at_matches_next_delay_law_for_stateless_strategies() {
    // Same seed, same stream: sample_at(n) consumes exactly what the n-th
    // next_delay does for stateless strategies, so with fresh generators
    // whose streams are aligned the values coincide.
    let cfg = Config::new();
    let mut b = Backoff::new(cfg, seeded_rng(11)).unwrap();
    let mut s = Backoff::new(cfg, seeded_rng(11)).unwrap();
    for n in 1..=30 {
        assert_eq!(b.next_delay().unwrap(), s.sample_at(n));
    }
}

#[test]
fn a_retry_after_hint_is_a_floor_with_a_little_jitter_above() {
    let mut b = Backoff::new(Config::new(), seeded_rng(4)).unwrap();
    for _ in 0..1000 {
        let w = b.with_hint(50.0, 2000.0);
        assert!((2000.0..2200.0).contains(&w), "{w}");
        let w = b.with_hint(5000.0, 2000.0);
        assert_eq!(w, 5000.0, "the backoff is larger: it wins");
        let w = b.with_hint(10.0, 60_000.0);
        assert!(
            (60_000.0..61_000.0).contains(&w),
            "spread capped at 1 s: {w}"
        );
        assert_eq!(b.with_hint(10.0, f64::INFINITY), MAX_DELAY_MS);
        assert_eq!(b.with_hint(10.0, f64::NAN), 10.0);
    }
}
