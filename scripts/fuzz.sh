#!/usr/bin/env bash
# Fuzzes the options-to-delay path (fuzz/fuzz_targets/options.rs) with
# cargo-fuzz / libFuzzer on the nightly toolchain, for FUZZ_SECONDS (default 60).
# The same body runs under proptest in every `npm test`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! rustup toolchain list | grep -q '^nightly'; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz
fi
cd fuzz
cargo +nightly fuzz run options -- -max_total_time="${FUZZ_SECONDS:-60}" -max_len=128
