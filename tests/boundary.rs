#![cfg(not(target_arch = "wasm32"))]
//! The JS boundary, natively: `decode` under arbitrary f64 input never
//! panics and only yields valid configs (the fuzz target's body, under
//! proptest), and the messages backoff.js throws match the core's.

mod common {
    pub mod fuzz_body;
}

use proptest::prelude::*;
use wasm_backoff::{decode, ERROR_SEED};
use wasm_backoff_core::ConfigError;

const NAN: f64 = f64::NAN;

fn f64_any() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(-0.0),
        Just(0.0),
        Just(1.0),
        -10.0..20.0f64,
        any::<f64>(),
        (0u32..12).prop_map(f64::from),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 5000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn fuzz_body_holds_on_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..120)) {
        common::fuzz_body::check(&data);
    }

    #[test]
    fn fuzz_body_holds_on_structured_fields(fields in proptest::collection::vec(f64_any(), 13), tail in proptest::collection::vec(any::<u8>(), 5)) {
        let mut data: Vec<u8> = fields.iter().flat_map(|f| f.to_le_bytes()).collect();
        data.extend(tail);
        common::fuzz_body::check(&data);
    }
}

fn dec(base: f64, seed: f64) -> Result<(), u8> {
    decode(
        NAN, NAN, base, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, seed,
    )
    .map(|_| ())
}

#[test]
fn error_codes() {
    assert_eq!(dec(10.0, 1.0), Ok(()));
    assert_eq!(dec(-1.0, 1.0), Err(ConfigError::BaseMs.code()));
    assert_eq!(
        dec(10.0, NAN),
        Err(ERROR_SEED),
        "the JS side always passes a seed"
    );
    assert_eq!(dec(10.0, 0.5), Err(ERROR_SEED));
    assert_eq!(dec(10.0, 9_007_199_254_740_992.0), Err(ERROR_SEED));
    assert_eq!(dec(10.0, -9_007_199_254_740_991.0), Ok(()));
    // hadoop (index 8) with maxAttempts 64
    let r = decode(
        8.0, NAN, NAN, NAN, NAN, NAN, NAN, 64.0, NAN, NAN, NAN, NAN, 1.0,
    );
    assert_eq!(r.err(), Some(ConfigError::HadoopMaxAttempts.code()));
    // maxAttempts 2.5 / 0 / Infinity
    let r = decode(
        NAN, NAN, NAN, NAN, NAN, NAN, NAN, 2.5, NAN, NAN, NAN, NAN, 1.0,
    );
    assert_eq!(r.err(), Some(ConfigError::MaxAttempts.code()));
    let r = decode(
        NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0.0, NAN, NAN, NAN, NAN, 1.0,
    );
    assert_eq!(r.err(), Some(ConfigError::MaxAttempts.code()));
    let (cfg, _) = decode(
        1.0,
        NAN,
        NAN,
        NAN,
        NAN,
        NAN,
        NAN,
        f64::INFINITY,
        NAN,
        NAN,
        NAN,
        NAN,
        1.0,
    )
    .unwrap();
    assert_eq!(
        cfg.max_attempts, None,
        "Infinity lifts the aws preset's limit"
    );
}

#[test]
fn strategy_without_preset_picks_its_natural_jitter() {
    use wasm_backoff_core::{Jitter, Strategy};
    let (cfg, _) = decode(
        NAN, 4.0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 1.0,
    )
    .unwrap();
    assert_eq!(
        (cfg.strategy, cfg.jitter, cfg.factor),
        (Strategy::Decorrelated, Jitter::None, 3.0)
    );
    let (cfg, _) = decode(
        NAN, 2.0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 1.0,
    )
    .unwrap();
    assert_eq!((cfg.strategy, cfg.jitter), (Strategy::Linear, Jitter::Full));
}

#[test]
fn js_messages_match_the_core() {
    let js = include_str!("../js/backoff.js");
    let all = [
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
    for e in all {
        let quoted = [format!("'{}'", e.message()), format!("\"{}\"", e.message())];
        assert!(
            quoted.iter().any(|q| js.contains(q.as_str())),
            "js/backoff.js lacks {:?}",
            e.message()
        );
    }
    // …and in code order: MSG[code] is the message of that code.
    let table = js
        .split("const MSG = [")
        .nth(1)
        .unwrap()
        .split("];")
        .next()
        .unwrap();
    let order: Vec<usize> = all
        .iter()
        .map(|e| table.find(e.message()).unwrap())
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "MSG order differs from ConfigError codes"
    );
    assert_eq!(all.map(|e| e.code()), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
}
