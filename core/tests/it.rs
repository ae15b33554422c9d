//! The core's integration tests, one binary (one link instead of one per
//! file: the test build is the slowest step of `npm test`'s Rust part).
//! Each file of core/tests/ is a module here; run one with a filter:
//! `cargo test -p wasm-backoff-core --test it golden::`.

mod json;

mod breaker;
mod distribution;
mod gate;
mod golden;
mod limiter;
mod network_error_vectors;
mod policy_vectors;
mod presets;
mod properties;
mod queue;
mod retry;
mod retry_after_vectors;
mod rng;
mod server_wait_vectors;
mod stats;
mod strategies;
