//! `fetch_with_backoff` in Node against the repository's scripted HTTP server
//! (tests/server/scripted.mjs), whose URL is read from `SCRIPTED_URL`:
//!
//! ```text
//! node tests/server/scripted.mjs   # prints {"url":"http://127.0.0.1:PORT"}
//! SCRIPTED_URL=http://127.0.0.1:PORT cargo test --target wasm32-unknown-unknown -p wasm-backoff-web --test node
//! ```
//!
//! The cases are in `common/mod.rs`, shared with `browser.rs`.
#![cfg(target_arch = "wasm32")]

mod common;
