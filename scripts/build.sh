#!/usr/bin/env bash
# Builds pkg/ from the Rust crate and the sources in js/: three wasm modules
# (a wasm module cannot be tree-shaken, so each subpath downloads only the
# state machines it uses), each shared by its subpaths:
#   small  pkg/wasm_backoff_bg.wasm     `wasm-backoff` (Backoff, fetchWithBackoff, …), `wasm-backoff/backoff`
#   gate   pkg/wasm_backoff_gate.wasm   `wasm-backoff/gate` (the gate, its limiter)
#   queue  pkg/wasm_backoff_queue.wasm  `wasm-backoff/queue`, `/stats`
# plus one not shipped: target/js/wasm_backoff_full.wasm (everything), which
# the js/ sources run on in Node (js/load/dev.js);
# and two subpaths without wasm: `wasm-backoff/budget` (RetryBudget) and `wasm-backoff/otel` (OpenTelemetry), plain JS.
# For each: the boundary description rendered for JS (js/gen/boundary.js,
# by `cargo run -p xtask`), the wasm module size-optimised (opt-level z, LTO,
# panic=abort, a trap panic handler, no allocator) then wasm-opt; its
# exports are plain extern "C" functions of numbers, called by the JS as
# they are (no wasm-bindgen CLI: scripts/dce.mjs keeps our exports alone),
# and scripts/bundle.mjs: every runtime form of every subpath
# (index.js for browsers, node.mjs/node.cjs, workerd.js, bundler.js with
# the wasm inlined), minified, code-split so a module's subpaths share one chunk.
#
#   bash scripts/build.sh [--only small|gate|queue|full|js|main|backoff|budget|otel|stats | --shipped] [--dev]
#
# --only builds the one module that entry belongs to; --shipped all but
# `full` (what the demo needs: scripts/demo.sh); --dev leaves the JS
# unminified. Assumes scripts/setup.sh has run (its tools: binaryen's
# wasm-opt and esbuild, in node_modules/ or, after `setup.sh demo`, in
# scripts/node_modules/).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[build]\033[0m %s\n' "$*"; }
WASM_OPT=$(bash scripts/tool.sh wasm-opt)

# The wasm modules the arguments name (`name features file opt-level wasm-opt-pass` a line): scripts/bundle.mjs knows them.
modules=$(node scripts/bundle.mjs "$@" --print-modules)

say "js/gen/boundary.js from src/schema.rs"
cargo run --quiet -p xtask

module() { # <name> <features> <wasm file in pkg/ (target/js/ for full)> <opt-level> <wasm-opt's first pass>
  local name=$1 features=$2 file=$3 stage=target/js/$1 out=pkg/$3
  [ "$name" = full ] && out=target/js/$3
  say "$name module: cargo build --release --target wasm32-unknown-unknown $features (opt-level $4)"
  CARGO_PROFILE_RELEASE_OPT_LEVEL=$4 cargo build --quiet --release --target wasm32-unknown-unknown -p wasm-backoff --lib --no-default-features --features "$features"
  rm -rf "$stage" && mkdir -p "$stage" pkg
  # The exports are plain extern "C" functions of numbers (src/lib.rs): no
  # binding generator runs; the linker's own exports (__data_end,
  # __heap_base) go (scripts/dce.mjs: only the exports of ours are kept).
  node scripts/dce.mjs target/wasm32-unknown-unknown/release/wasm_backoff.wasm "$stage/dce.wasm"
  # The raw exports, as tsc checks js/load/instantiate.js against them (`#exports`):
  # committed, so that `npm run lint` needs no build; refreshed here (commit a change).
  if [ "$name" = full ]; then
    node scripts/exports.mjs "$stage/dce.wasm" >"$stage/exports.d.ts"
    if ! cmp -s "$stage/exports.d.ts" js/load/exports.d.ts; then
      cp "$stage/exports.d.ts" js/load/exports.d.ts
      say "js/load/exports.d.ts: the full module's exports changed; commit it"
    fi
  fi
  # (the target_features section is only informative: 134 B gzip less)
  # --low-memory-unused: nothing lives in the first 1 KiB (the stack comes
  # first, from 1 MiB down; the statics above it), so wasm-opt may fold
  # constant offsets into loads and stores; --reorder-functions puts the
  # most called first (smaller indices, closer repeats). gzip: gate module
  # 50 B less, queue 11, small 6 (with -O3 first; the gate's -O2: scripts/bundle.mjs).
  "$WASM_OPT" --low-memory-unused "$5" -Oz --reorder-functions --strip-debug --strip-producers --strip-target-features \
    --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-reference-types --enable-multivalue --enable-mutable-globals \
    "$stage/dce.wasm" -o "$out"
  say "$out: $(wc -c <"$out") B"
}
while read -r name features file opt pass; do
  [ -n "$name" ] && module "$name" "$features" "$file" "$opt" "$pass"
done <<<"$modules"

# The demo's overload view runs the real @smithy/util-retry and
# @sinonjs/fake-timers in its Worker: bundled into www/gen/ (not committed).
say "www/gen/overload-deps.js: the SDK's limiter and fake-timers for the demo"
node scripts/overload-deps.mjs

say "bundling js/ into pkg/"
node scripts/bundle.mjs "$@"

# The declarations (written in types/) and their CommonJS twins (.d.cts),
# and the README and licence that npm shows and ships.
# TODO(repository): the README's relative links (docs/*.md, CONTRIBUTING.md)
# resolve on the npm page only against pkg/package.json's `repository` field,
# which is not set: the repository's public URL is not known here and must not
# be guessed. Set `repository` (or rewrite the links to absolute URLs here)
# once the project has one.
node scripts/types.mjs
cp README.md LICENSE pkg/
