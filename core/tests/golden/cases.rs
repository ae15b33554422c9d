//! The cross-runtime seeded comparison: one list of cases, rendered to the
//! JSON in `core/tests/golden/seeded.json`. Native Rust (`core/tests/golden.rs`),
//! wasm in Node and Chromium (`tests/wasm_*.rs`) must render exactly that
//! file, and the JS API in Node, Chromium and workerd (`tests/package/`) must
//! produce exactly its delays from its `options`: one file, five runtimes,
//! bit-identical.

use wasm_backoff_core::{
    AtCeiling, Backoff, Config, Jitter, Preset, SlotMode, Strategy, seeded_rng,
};

/// Delays per case.
pub const STEPS: usize = 50;

/// (name, the JS options object as JSON, the equivalent Rust config, seed).
pub fn cases() -> Vec<(&'static str, &'static str, Config, u64)> {
    let mut v = vec![
        ("default", r#"{"seed":42}"#, Config::new(), 42),
        ("default-seed-0", r#"{"seed":0}"#, Config::new(), 0),
        (
            "negative-seed",
            r#"{"seed":-9007199254740991}"#,
            Config::new(),
            (-9_007_199_254_740_991i64) as u64,
        ),
        (
            "linear-equal",
            r#"{"seed":7,"strategy":"linear","baseMs":50,"jitter":"equal","maxDelayMs":1000}"#,
            Config::new()
                .strategy(Strategy::Linear)
                .base_ms(50.0)
                .jitter(Jitter::Equal)
                .max_delay_ms(1000.0),
            7,
        ),
        (
            "fibonacci-ratio",
            r#"{"seed":7,"strategy":"fibonacci","baseMs":10,"jitter":{"ratio":0.3},"maxAttempts":40}"#,
            Config::new()
                .strategy(Strategy::Fibonacci)
                .base_ms(10.0)
                .jitter(Jitter::Ratio(0.3))
                .max_attempts(Some(40)),
            7,
        ),
        (
            "constant-add-elapsed",
            r#"{"seed":3,"strategy":"constant","baseMs":100,"jitter":{"addMaxMs":50},"maxElapsedMs":2000}"#,
            Config::new()
                .strategy(Strategy::Constant)
                .base_ms(100.0)
                .jitter(Jitter::Add(50.0))
                .max_elapsed_ms(Some(2000.0)),
            3,
        ),
        (
            "decorrelated-strategy",
            r#"{"seed":5,"strategy":"decorrelated","baseMs":10,"maxDelayMs":5000}"#,
            Config::new()
                .strategy(Strategy::Decorrelated)
                .factor(3.0)
                .jitter(Jitter::None)
                .base_ms(10.0)
                .max_delay_ms(5000.0),
            5,
        ),
        (
            "slotted-exponent-stay",
            r#"{"seed":9,"strategy":"slotted","slotMode":"exponent","atCeiling":"stay","ceiling":4,"baseMs":1}"#,
            Config::new()
                .strategy(Strategy::Slotted)
                .jitter(Jitter::None)
                .slot_mode(SlotMode::Exponent)
                .at_ceiling(AtCeiling::Stay)
                .ceiling(4)
                .base_ms(1.0),
            9,
        ),
    ];
    // Every preset, seed 42 (a new one is a new line of the file: UPDATE_GOLDEN=1).
    for p in Preset::ALL {
        let json = format!(r#"{{"seed":42,"preset":"{}"}}"#, p.name());
        v.push((p.name(), &*Box::leak(json.into_boxed_str()), p.config(), 42));
    }
    v
}

/// The whole file: one case per line, `null` where the schedule gave up.
pub fn render() -> String {
    let mut out = String::from("{\"steps\":50,\"cases\":[\n");
    let cases = cases();
    for (i, (name, options, cfg, seed)) in cases.iter().enumerate() {
        let mut b = Backoff::new(*cfg, seeded_rng(*seed)).expect("valid golden config");
        let delays: Vec<String> = (0..STEPS)
            .map(|_| {
                b.next_delay()
                    .map_or("null".to_string(), |d| format!("{d}"))
            })
            .collect();
        out += &format!(
            "{{\"name\":\"{name}\",\"options\":{options},\"delays\":[{}]}}{}\n",
            delays.join(","),
            if i + 1 < cases.len() { "," } else { "" }
        );
    }
    out += "]}\n";
    out
}
