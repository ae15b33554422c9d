//! Every preset pinned to the formula of the system it reproduces. Random
//! rules are checked *exactly* by replaying the same seeded stream of
//! uniforms the calculator consumed (one `unit_f64` per jittered draw), so a
//! formula that is off by a factor, an offset or an exponent fails.

use wasm_backoff_core::{
    AtCeiling, Backoff, Config, ConfigError, DefaultRng, Preset, seeded_rng, unit_f64,
};

const SEED: u64 = 0xC0FFEE;

fn backoff(p: Preset) -> Backoff {
    Backoff::new(p.config(), seeded_rng(SEED)).unwrap()
}

/// The uniforms in the order the calculator draws them.
fn uniforms() -> DefaultRng {
    seeded_rng(SEED)
}

fn pow2(n: u32) -> f64 {
    2f64.powi(n as i32)
}

#[test]
fn gcs_is_two_to_the_n_minus_one_seconds_plus_up_to_one_second_capped_at_32s() {
    let mut b = backoff(Preset::Gcs);
    let mut u = uniforms();
    for n in 1..=40u32 {
        let want = (1000.0 * pow2(n - 1) + 1000.0 * unit_f64(&mut u)).min(32_000.0);
        assert_eq!(b.next_delay(), Some(want), "retry {n}");
    }
    // "keeps retrying at the cap": no limit of its own.
    assert!(b.take(1000).all(|d| d == 32_000.0));
}

#[test]
fn aws_is_full_jitter_over_100ms_times_two_to_the_n_with_3_attempts() {
    let mut b = backoff(Preset::Aws);
    let mut u = uniforms();
    for n in 1..=2u32 {
        let want = (100.0 * pow2(n)).min(20_000.0) * unit_f64(&mut u);
        assert_eq!(b.next_delay(), Some(want));
    }
    assert_eq!(b.next_delay(), None, "3 attempts = 2 retries");
    // Without the limit the cap of 20 s holds from n = 8 on (100·2^8 > 20 000).
    let mut b = Backoff::new(Preset::Aws.config().max_attempts(None), seeded_rng(SEED)).unwrap();
    let mut u = uniforms();
    for n in 1..=30u32 {
        let want = (100.0 * pow2(n)).min(20_000.0) * unit_f64(&mut u);
        assert_eq!(b.next_delay(), Some(want));
    }
}

#[test]
fn decorrelated_is_min_cap_uniform_base_to_three_times_previous() {
    let mut b = backoff(Preset::Decorrelated);
    let mut u = uniforms();
    let mut prev = 100.0f64;
    for _ in 0..200 {
        let want = (100.0 + (3.0 * prev - 100.0) * unit_f64(&mut u)).min(20_000.0);
        assert_eq!(b.next_delay(), Some(want));
        prev = want;
    }
    // After a reset the chain restarts from base: U[100, 300).
    b.reset();
    let d = b.next_delay().unwrap();
    assert!((100.0..300.0).contains(&d), "{d}");
}

#[test]
fn equal_is_half_plus_uniform_half() {
    let mut b = backoff(Preset::Equal);
    let mut u = uniforms();
    for n in 1..=30u32 {
        let v = (100.0 * pow2(n)).min(20_000.0);
        let want = v / 2.0 + v / 2.0 * unit_f64(&mut u);
        assert_eq!(b.next_delay(), Some(want));
    }
}

#[test]
fn grpc_is_1s_times_1_6_to_the_n_minus_1_capped_at_120s_times_0_8_to_1_2() {
    let mut b = backoff(Preset::Grpc);
    let mut u = uniforms();
    for n in 1..=60u32 {
        let v = (1000.0 * 1.6f64.powi(n as i32 - 1)).min(120_000.0);
        let want = v * (0.8 + 0.4 * unit_f64(&mut u));
        let got = b.next_delay().unwrap();
        // powi and our exponentiation by squaring may differ in the last ulp.
        assert!(
            (got - want).abs() <= want * 1e-12,
            "retry {n}: {got} vs {want}"
        );
        assert!((0.8 * v..1.2 * v).contains(&got));
    }
    // gRPC's connection backoff never gives up.
    assert_eq!(b.take(500).count(), 500);
}

#[test]
fn ethernet_waits_whole_slots_below_2_to_the_min_c_10_and_gives_up_after_16() {
    let slot = 0.0512;
    let mut b = backoff(Preset::Ethernet);
    let mut u = uniforms();
    for c in 1..=16u32 {
        let e = c.min(10);
        let k = (unit_f64(&mut u) * pow2(e)).floor();
        let d = b.next_delay().expect("collisions 1..=16 get a wait");
        assert_eq!(d, k * slot, "collision {c}");
        let slots = d / slot;
        assert!(
            (slots - slots.round()).abs() < 1e-9,
            "whole multiple of 51.2 µs"
        );
        assert!(slots.round() <= pow2(e) - 1.0);
    }
    assert_eq!(b.next_delay(), None, "c > 16: give up");
    // Over many seeds, every k in [0, 2^min(c,10) − 1] occurs and none outside.
    let mut seen = [false; 1024];
    for seed in 0..20_000 {
        let mut b = Backoff::new(Preset::Ethernet.config(), seeded_rng(seed)).unwrap();
        let d = b.nth(11).unwrap(); // collision 12: e = 10
        let k = (d / slot).round() as usize;
        seen[k] = true;
    }
    assert!(
        seen.iter().all(|&s| s),
        "all 1024 slot counts reachable at the ceiling"
    );
}

#[test]
fn akka_reproduces_exponential_backoff_of_the_supervisor_example() {
    // Reset mode (stayAtCeiling = false), ceiling 10, slot time 10 ms:
    // slot 1..=10 draw k in [0, slot], wait 10·(2^k − 1); the 11th step resets
    // with a zero wait (no draw), then it starts over at slot 1.
    let mut b = backoff(Preset::Akka);
    let mut u = uniforms();
    for round in 0..3u64 {
        for slot in 1..=10u32 {
            let k = (unit_f64(&mut u) * (slot + 1) as f64).floor() as i32;
            assert_eq!(
                b.next_delay(),
                Some(10.0 * (2f64.powi(k) - 1.0)),
                "slot {slot}"
            );
        }
        assert_eq!(b.next_delay(), Some(0.0), "past the ceiling: reset");
        assert_eq!(b.resets(), round + 1);
    }
    assert_eq!(b.total_retries(), 33);
    // A success resets to slot 1 and counts a reset, as Akka's reset() does.
    b.reset();
    assert_eq!(b.resets(), 4);
    assert_eq!(b.attempt(), 0);

    // Stay mode: slots 1..=10, then Akka's own alternation 11, 10, 11, 10…
    let cfg = Preset::Akka.config().at_ceiling(AtCeiling::Stay);
    let mut b = Backoff::new(cfg, seeded_rng(SEED)).unwrap();
    let mut u = uniforms();
    let slots = (1..=10).chain([11, 10, 11, 10, 11]);
    for slot in slots {
        let k = (unit_f64(&mut u) * (slot + 1) as f64).floor() as i32;
        assert_eq!(
            b.next_delay(),
            Some(10.0 * (2f64.powi(k) - 1.0)),
            "slot {slot}"
        );
    }
    assert_eq!(b.resets(), 0);
}

#[test]
fn flume_doubles_from_250_to_4000_resets_on_success_and_never_gives_up() {
    let mut b = backoff(Preset::Flume);
    let first: Vec<f64> = b.by_ref().take(8).collect();
    assert_eq!(
        first,
        [250.0, 500.0, 1000.0, 2000.0, 4000.0, 4000.0, 4000.0, 4000.0]
    );
    assert_eq!(
        b.by_ref().take(10_000).filter(|&d| d == 4000.0).count(),
        10_000
    );
    b.reset();
    assert_eq!(b.next_delay(), Some(250.0));
}

#[test]
fn hadoop_is_base_times_2_to_the_n_times_half_to_one_and_a_half() {
    let mut b = backoff(Preset::Hadoop);
    let mut u = uniforms();
    for n in 1..=10u32 {
        let want = 100.0 * pow2(n) * (0.5 + unit_f64(&mut u));
        assert_eq!(b.next_delay(), Some(want), "retry {n}");
    }
    assert_eq!(b.next_delay(), None, "maxRetries 10");
    // Hadoop: 0 <= maxRetries < 63, i.e. maxAttempts in [1, 63].
    for (n, ok) in [
        (Some(1), true),
        (Some(63), true),
        (Some(64), false),
        (None, false),
    ] {
        let cfg = Preset::Hadoop.config().max_attempts(n);
        assert_eq!(Preset::Hadoop.check(&cfg).is_ok(), ok, "{n:?}");
    }
    assert_eq!(
        Preset::Hadoop.check(&Preset::Hadoop.config().max_attempts(Some(64))),
        Err(ConfigError::HadoopMaxAttempts)
    );
}

#[test]
fn explicit_options_override_a_preset() {
    let cfg = Preset::Gcs.config().max_attempts(Some(4));
    let mut b = Backoff::new(cfg, seeded_rng(1)).unwrap();
    assert_eq!(b.by_ref().count(), 3);
    let cfg: Config = Preset::Flume.config().base_ms(10.0);
    let mut b = Backoff::new(cfg, seeded_rng(1)).unwrap();
    assert_eq!(b.next_delay(), Some(10.0));
}

#[test]
fn preset_names_round_trip() {
    for p in Preset::ALL {
        assert_eq!(Preset::from_name(p.name()), Some(p));
        assert!(p.config().validate().is_ok());
    }
    assert_eq!(Preset::from_name("GCS"), None);
}
