//! Arbitrary bytes -> the options record the JS side writes -> decode ->
//! delays and samples. Any panic or broken invariant is a finding.
//! Run: `npm run fuzz` (or `FUZZ_SECONDS=600 npm run fuzz`).
#![no_main]

#[path = "../../tests/common/fuzz_body.rs"]
mod fuzz_body;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_body::check(data));
