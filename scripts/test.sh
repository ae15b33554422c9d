#!/usr/bin/env bash
# Runs every test (the README's second command; .ci/run runs exactly this).
# Installs what is missing first (scripts/setup.sh), builds pkg/, then:
# formatting and lints, the no_std proof, native Rust tests, wasm tests in
# Node and headless Chromium, and the JS API in Node, Chromium and workerd.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
bash scripts/build.sh

log=$(mktemp -d)/test.log
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { "$@" 2>&1 | tee -a "$log"; }

step "cargo fmt --check, clippy -D warnings (native and wasm32)"
cargo fmt --all --check
cargo clippy --quiet --workspace --all-targets -- -D warnings
cargo clippy --quiet -p wasm-backoff --target wasm32-unknown-unknown --features bare -- -D warnings
cargo clippy --quiet -p wasm-backoff --target wasm32-unknown-unknown --no-default-features --features bare -- -D warnings
cargo clippy --quiet -p wasm-backoff --target wasm32-unknown-unknown --no-default-features --features bare,stats -- -D warnings
cargo clippy --quiet -p wasm-backoff --target wasm32-unknown-unknown --no-default-features --features bare,queue -- -D warnings

step "the core is no_std: build for bare-metal thumbv7em-none-eabihf"
cargo build --quiet -p wasm-backoff-core --target thumbv7em-none-eabihf

step "native Rust tests (presets, properties, distributions, golden file, boundary)"
run cargo test --workspace

step "wasm tests in Node and in headless Chromium (wasm-bindgen-test)"
run cargo test --target wasm32-unknown-unknown -p wasm-backoff --test wasm_node --test wasm_browser

step "the JS package in Node, Chromium (page, worker) and workerd, against the scripted server"
run node --test --test-force-exit --test-reporter=spec tests/js/ tests/server/ tests/bundlers/ tests/install/

# One closing line over every runner (cargo's and node's summaries).
awk '
  /test result: ok\./ || /test result: FAILED\./ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
  /^ℹ pass [0-9]+/ { p += $3 }
  /^ℹ fail [0-9]+/ { f += $3 }
  END { printf "\ntotal: %d passed, %d failed\n", p, f }
' "$log"
