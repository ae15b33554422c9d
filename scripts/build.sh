#!/usr/bin/env bash
# Builds pkg/ from the Rust crate and the hand-written sources in js/:
#   1. the wasm module, size-optimised (opt-level z, LTO, panic=abort, our
#      own trap panic handler, a small allocator), then wasm-opt -Oz;
#   2. wasm-bindgen's glue (target web) into target/js/, beside a copy of js/;
#   3. one minified ES module per runtime entry (esbuild bundles the entry,
#      js/backoff.js and the glue), so a browser fetches one .js and the .wasm.
# Assumes scripts/setup.sh has run.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[build]\033[0m %s\n' "$*"; }
say "cargo build --release --target wasm32-unknown-unknown"
cargo build --quiet --release --target wasm32-unknown-unknown -p wasm-backoff --features bare

out=target/js
rm -rf "$out" && mkdir -p "$out"
wasm-bindgen --target web --no-typescript --out-dir "$out" \
  target/wasm32-unknown-unknown/release/wasm_backoff.wasm
# The features rustc's wasm32 target emits; wasm-opt must be told it may keep them.
node_modules/.bin/wasm-opt -O3 -Oz --strip-debug --strip-producers \
  --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-reference-types --enable-multivalue --enable-mutable-globals \
  "$out/wasm_backoff_bg.wasm" -o pkg/wasm_backoff_bg.wasm

cp js/*.js js/*.mjs "$out/"
for entry in index.js node.mjs workerd.js; do
  node_modules/.bin/esbuild "$out/$entry" --bundle --minify --format=esm --target=es2022 \
    --platform=neutral --external:node:fs --external:./wasm_backoff_bg.wasm \
    --log-level=warning --outfile="pkg/$entry"
done
cp js/node.cjs pkg/node.cjs
say "pkg/ ready: $(wc -c <pkg/wasm_backoff_bg.wasm) B wasm, $(wc -c <pkg/index.js) B browser entry"
