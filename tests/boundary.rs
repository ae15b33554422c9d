#![cfg(not(target_arch = "wasm32"))]
//! The JS boundary, natively: `decode` under arbitrary f64 input never
//! panics and only yields valid configs (the fuzz target's body, under
//! proptest), and the messages backoff.js throws match the core's.

mod common {
    pub mod fuzz_body;
}

use proptest::prelude::*;
use proptest::strategy::Strategy as _;
use wasm_backoff::{decode, ERROR_SEED};
use wasm_backoff_core::{Config, ConfigError, Jitter, Strategy};

const NAN: f64 = f64::NAN;

fn f64_any() -> impl proptest::strategy::Strategy<Value = f64> {
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
    fn fuzz_body_holds_on_structured_fields(fields in proptest::collection::vec(f64_any(), 14), tail in proptest::collection::vec(any::<u8>(), 5)) {
        let mut data: Vec<u8> = fields.iter().flat_map(|f| f.to_le_bytes()).collect();
        data.extend(tail);
        common::fuzz_body::check(&data);
    }
}

// Field positions of `decode`.
const PRESET: usize = 0;
const STRATEGY: usize = 1;
const BASE: usize = 2;
const ATTEMPTS: usize = 7;
const SEED: usize = 12;
const FALLBACK: usize = 13;

/// `decode` with every field NaN ("not given") except `set`; seed 1 unless set.
fn dec(set: &[(usize, f64)]) -> Result<Config, u8> {
    let mut f = [NAN; 14];
    f[SEED] = 1.0;
    for &(i, v) in set {
        f[i] = v;
    }
    decode(
        f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12], f[13],
    )
    .map(|(c, _)| c)
}

#[test]
fn error_codes() {
    assert!(dec(&[(BASE, 10.0)]).is_ok());
    assert_eq!(dec(&[(BASE, -1.0)]).err(), Some(ConfigError::BaseMs.code()));
    assert_eq!(
        dec(&[(SEED, NAN)]).err(),
        Some(ERROR_SEED),
        "the JS side always passes a seed"
    );
    assert_eq!(dec(&[(SEED, 0.5)]).err(), Some(ERROR_SEED));
    assert_eq!(
        dec(&[(SEED, 9_007_199_254_740_992.0)]).err(),
        Some(ERROR_SEED)
    );
    assert!(dec(&[(SEED, -9_007_199_254_740_991.0)]).is_ok());
    // hadoop (index 8) with maxAttempts 64
    assert_eq!(
        dec(&[(PRESET, 8.0), (ATTEMPTS, 64.0)]).err(),
        Some(ConfigError::HadoopMaxAttempts.code())
    );
    for bad in [2.5, 0.0, -1.0, f64::NEG_INFINITY] {
        assert_eq!(
            dec(&[(ATTEMPTS, bad)]).err(),
            Some(ConfigError::MaxAttempts.code()),
            "{bad}"
        );
    }
    let cfg = dec(&[(PRESET, 1.0), (ATTEMPTS, f64::INFINITY)]).unwrap();
    assert_eq!(
        cfg.max_attempts, None,
        "Infinity lifts the aws preset's limit"
    );
}

#[test]
fn strategy_without_preset_picks_its_natural_jitter() {
    let cfg = dec(&[(STRATEGY, 4.0)]).unwrap();
    assert_eq!(
        (cfg.strategy, cfg.jitter, cfg.factor),
        (Strategy::Decorrelated, Jitter::None, 3.0)
    );
    let cfg = dec(&[(STRATEGY, 2.0)]).unwrap();
    assert_eq!((cfg.strategy, cfg.jitter), (Strategy::Linear, Jitter::Full));
}

#[test]
fn fallback_attempts_apply_only_without_a_limit() {
    let attempts = |set: &[(usize, f64)]| {
        let mut all = vec![(FALLBACK, 5.0)];
        all.extend_from_slice(set);
        dec(&all).unwrap().max_attempts
    };
    assert_eq!(attempts(&[]), Some(5), "no options: the fallback");
    assert_eq!(attempts(&[(PRESET, 1.0)]), Some(3), "aws keeps its 3");
    assert_eq!(
        attempts(&[(PRESET, 0.0)]),
        Some(5),
        "gcs has none: the fallback"
    );
    assert_eq!(attempts(&[(ATTEMPTS, 2.0)]), Some(2), "explicit wins");
    assert_eq!(
        attempts(&[(ATTEMPTS, f64::INFINITY)]),
        None,
        "explicit Infinity lifts it"
    );
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

#[test]
fn js_budget_messages_match_the_core() {
    use wasm_backoff_core::BudgetError;
    let js = include_str!("../js/fetch.js");
    let table = js
        .split("const BUDGET_MSG = [")
        .nth(1)
        .unwrap()
        .split("];")
        .next()
        .unwrap();
    let all = [BudgetError::Ttl, BudgetError::MinPerSec, BudgetError::Ratio];
    // BUDGET_MSG[code] with code = the RawBudget error (BudgetError order, from 1).
    let at: Vec<usize> = all
        .iter()
        .map(|e| {
            table
                .find(e.message())
                .unwrap_or_else(|| panic!("{}", e.message()))
        })
        .collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "BUDGET_MSG order differs from BudgetError"
    );
}
