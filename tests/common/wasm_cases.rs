//! Checks run inside the wasm module, in Node (tests/wasm_node.rs) and in
//! headless Chromium (tests/wasm_browser.rs).

use wasm_backoff::{
    input_buffer, retry_after, RawBackoff, RawBudget, CHUNK, ERROR_SEED, INPUT_LEN,
};
use wasm_backoff_core::{ConfigError, MAX_DELAY_MS};

const NAN: f64 = f64::NAN;

/// The golden file rendered by *wasm* arithmetic equals the one rendered
/// natively: the same seed gives bit-identical schedules on both.
pub fn golden_matches() {
    let rendered = super::golden::render();
    assert_eq!(rendered, include_str!("../golden/seeded.json"));
}

fn raw(preset: f64, max_attempts: f64, base: f64, seed: f64) -> RawBackoff {
    RawBackoff::new(
        preset,
        NAN,
        base,
        NAN,
        NAN,
        NAN,
        NAN,
        max_attempts,
        NAN,
        NAN,
        NAN,
        NAN,
        seed,
        NAN,
    )
}

pub fn raw_backoff_steps_and_gives_up() {
    // flume (index 7), 3 attempts: 250, 500, then -1 (give up) for ever.
    let mut b = raw(7.0, 3.0, NAN, 1.0);
    assert_eq!(b.error(), 0);
    assert_eq!(
        (b.next(), b.next(), b.next(), b.next()),
        (250.0, 500.0, -1.0, -1.0)
    );
    assert_eq!(b.attempt(), 2);
    b.reset();
    assert_eq!((b.attempt(), b.resets(), b.next()), (0, 1.0, 250.0));
}

pub fn rejected_options_give_error_codes_and_an_inert_object() {
    let mut b = raw(NAN, NAN, -5.0, 1.0);
    assert_eq!(b.error(), ConfigError::BaseMs.code());
    assert_eq!((b.next(), b.attempt()), (-1.0, 0));
    assert_eq!(raw(NAN, NAN, 1.0, 0.5).error(), ERROR_SEED);
    assert_eq!(
        raw(NAN, 0.0, 1.0, 1.0).error(),
        ConfigError::MaxAttempts.code()
    );
    // The module keeps working after any rejection.
    let mut ok = raw(7.0, NAN, NAN, 1.0);
    assert_eq!(ok.next(), 250.0);
}

pub fn draws_fill_the_scratch_buffer() {
    let mut b = raw(NAN, NAN, NAN, 99.0);
    let ptr = b.draws(3, CHUNK as u32 + 10); // clamped to CHUNK
                                             // SAFETY: same module, nothing runs in between.
    let xs = unsafe { core::slice::from_raw_parts(ptr, CHUNK) };
    assert!(
        xs.iter().all(|&d| (0.0..400.0).contains(&d)),
        "full jitter on 400 ms"
    );
    assert!(xs.iter().any(|&d| d > 300.0) && xs.iter().any(|&d| d < 100.0));
    let mut huge = raw(NAN, NAN, 1e300, 5.0);
    let p = huge.draws(u32::MAX, 16);
    let ys = unsafe { core::slice::from_raw_parts(p, 16) };
    assert!(ys
        .iter()
        .all(|&d| d.is_finite() && (0.0..=MAX_DELAY_MS).contains(&d)));
}

fn parse(value: &str, now_ms: f64) -> f64 {
    // SAFETY: single-threaded; the same module reads it right after.
    let buf = unsafe { core::slice::from_raw_parts_mut(input_buffer(), INPUT_LEN) };
    buf[..value.len()].copy_from_slice(value.as_bytes());
    retry_after(now_ms, value.len())
}

pub fn fetch_helpers_work_in_wasm() {
    let t = 784_111_777_000.0; // Sun, 06 Nov 1994 08:49:37 GMT
    assert_eq!(parse("Sun, 06 Nov 1994 08:49:37 GMT", t - 1500.0), 1500.0);
    assert_eq!(parse("Sun Nov  6 08:49:37 1994", t - 1.0), 1.0);
    assert_eq!(parse(" 7 ", t), 7000.0);
    assert_eq!(parse("-3", t), -1.0);
    assert_eq!(
        retry_after(t, INPUT_LEN + 1),
        -1.0,
        "longer than the buffer: invalid"
    );
    let mut budget = RawBudget::new(1000.0, 2.0, 0.0);
    assert_eq!(budget.op(0, 0.0), 0.0);
    assert_eq!(budget.op(3, 5.0), 2.0);
    assert_eq!(
        [budget.op(2, 5.0), budget.op(2, 5.0), budget.op(2, 5.0)],
        [1.0, 1.0, 0.0]
    );
    assert_eq!(RawBudget::new(0.0, 1.0, 1.0).op(0, 0.0), 1.0);
    let mut b = raw(NAN, NAN, NAN, 3.0);
    let w = b.hint(10.0, 1000.0);
    assert!((1000.0..1100.0).contains(&w), "{w}");
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
        fn raw_backoff_steps_and_gives_up() {
            common::wasm_cases::raw_backoff_steps_and_gives_up();
        }

        #[wasm_bindgen_test]
        fn rejected_options_give_error_codes_and_an_inert_object() {
            common::wasm_cases::rejected_options_give_error_codes_and_an_inert_object();
        }

        #[wasm_bindgen_test]
        fn draws_fill_the_scratch_buffer() {
            common::wasm_cases::draws_fill_the_scratch_buffer();
        }

        #[wasm_bindgen_test]
        fn fetch_helpers_work_in_wasm() {
            common::wasm_cases::fetch_helpers_work_in_wasm();
        }
    };
}
