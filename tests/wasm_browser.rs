//! The calculator compiled to wasm32, run by wasm-bindgen-test in headless
//! Chromium (through chromedriver).
#![cfg(target_arch = "wasm32")]

#[macro_use]
mod common {
    #[path = "../../core/tests/golden/cases.rs"]
    pub mod golden;
    #[macro_use]
    pub mod wasm_cases;
}

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
wasm_tests!();
