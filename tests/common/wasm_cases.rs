//! Checks run inside the wasm module, in Node (tests/wasm_node.rs) and in
//! headless Chromium (tests/wasm_browser.rs): the arithmetic is the same as
//! native, and the slab grows wasm memory page by page.

use wasm_backoff::calc;
use wasm_backoff::io::set_record;
use wasm_backoff::schema::{Error, Field, RECORD_LEN};

/// The golden file rendered by *wasm* arithmetic equals the one rendered
/// natively: the same seed gives bit-identical schedules on both.
pub fn golden_matches() {
    let rendered = super::golden::render();
    assert_eq!(
        rendered,
        include_str!("../../core/tests/golden/seeded.json")
    );
}

fn record(set: &[(Field, f64)]) {
    let mut r = [f64::NAN; RECORD_LEN];
    r[Field::Seed as usize] = 1.0;
    for &(f, v) in set {
        r[f as usize] = v;
    }
    set_record(r);
}

pub fn handles_step_and_give_up() {
    record(&[(Field::Preset, 7.0), (Field::MaxAttempts, 3.0)]);
    let h = calc::backoff_new() as usize;
    let steps = [(); 4].map(|_| calc::backoff_next(h, f64::NAN, f64::NAN));
    assert_eq!(steps, [250.0, 500.0, -1.0, -1.0]);
    calc::backoff_free(h);
}

pub fn rejected_options_give_error_codes() {
    record(&[(Field::BaseMs, -5.0)]);
    assert_eq!(calc::backoff_new(), -(Error::BaseMs.code() as f64));
    record(&[(Field::Preset, 7.0)]);
    let h = calc::backoff_new() as usize;
    assert_eq!(
        calc::backoff_next(h, f64::NAN, f64::NAN),
        250.0,
        "the module keeps working"
    );
    calc::backoff_free(h);
}

/// 100 000 live schedules (pages of the slab grown one at a time), freed
/// out of order, then reused: every handle distinct, every one working.
pub fn the_slab_grows_and_reuses() {
    record(&[(Field::Preset, 7.0)]);
    let hs: Vec<usize> = (0..100_000).map(|_| calc::backoff_new() as usize).collect();
    let mut sorted = hs.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), hs.len(), "distinct slots");
    for h in hs.iter().step_by(3) {
        calc::backoff_free(*h);
    }
    for h in hs.iter().skip(1).step_by(3) {
        assert_eq!(calc::backoff_next(*h, f64::NAN, f64::NAN), 250.0);
    }
    for _ in 0..10 {
        let h = calc::backoff_new() as usize;
        assert!(
            hs.contains(&h),
            "a freed slot is reused before memory grows"
        );
        assert_eq!(calc::backoff_next(h, f64::NAN, f64::NAN), 250.0);
    }
}

/// Declares the `#[wasm_bindgen_test]` functions, once per runner file.
#[macro_export]
macro_rules! wasm_tests {
    () => {
        use wasm_bindgen_test::wasm_bindgen_test;

        #[wasm_bindgen_test]
        fn golden_matches_native() {
            common::wasm_cases::golden_matches();
        }

        #[wasm_bindgen_test]
        fn handles_step_and_give_up() {
            common::wasm_cases::handles_step_and_give_up();
        }

        #[wasm_bindgen_test]
        fn rejected_options_give_error_codes() {
            common::wasm_cases::rejected_options_give_error_codes();
        }

        #[wasm_bindgen_test]
        fn the_slab_grows_and_reuses() {
            common::wasm_cases::the_slab_grows_and_reuses();
        }
    };
}
