//! `fetch_with_backoff` in headless Chromium (wasm-bindgen-test-runner
//! through chromedriver) against the scripted HTTP server, on another origin
//! than the test page (the server answers CORS and preflights, and exposes
//! every header). A page has no environment, so the server's URL is the
//! `SCRIPTED_URL` this test is compiled with:
//!
//! ```text
//! node tests/server/scripted.mjs   # prints {"url":"http://127.0.0.1:PORT"}
//! SCRIPTED_URL=http://127.0.0.1:PORT cargo test --target wasm32-unknown-unknown -p wasm-backoff-web --test browser
//! ```
//!
//! The cases are those of the Node run (`common/mod.rs`).
#![cfg(target_arch = "wasm32")]

wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

mod common;
