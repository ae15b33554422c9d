#!/usr/bin/env bash
# Builds pkg/ from the Rust crate and the hand-written sources in js/, as
# three modules (a wasm module cannot be tree-shaken, so each import gets
# only the code it uses), each with an entry per runtime (index.js for
# browsers, node.mjs/node.cjs, workerd.js, and bundler.js with the wasm
# inlined for bundlers):
#   pkg/          Backoff, the fetch driver and the backoff gate (`'wasm-backoff'`)
#   pkg/backoff/  the calculator alone (`'wasm-backoff/backoff'`)
#   pkg/stats/    the calculator and backoffStats (`'wasm-backoff/stats'`)
#   pkg/queue/    the calculator and the durable TaskQueue (`'wasm-backoff/queue'`)
# For each: the wasm module, size-optimised (opt-level z, LTO, panic=abort,
# our own trap panic handler, a small allocator) then wasm-opt; wasm-bindgen's
# glue (target web); and one minified ES module per runtime entry (esbuild
# bundles entry + js/ + glue), so a browser fetches one .js and one .wasm.
# Assumes scripts/setup.sh has run.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[build]\033[0m %s\n' "$*"; }

variant() { # <out dir> <cargo feature flags> [what js/extra.js becomes]
  local dest=$1 features=$2 extra=${3-} stage
  stage=target/js/$(basename "$dest")
  cargo build --quiet --release --target wasm32-unknown-unknown -p wasm-backoff $features
  rm -rf "$stage" && mkdir -p "$stage" "$dest"
  wasm-bindgen --target web --no-typescript --out-dir "$stage" \
    target/wasm32-unknown-unknown/release/wasm_backoff.wasm
  # The features rustc's wasm32 target emits; wasm-opt must be told it may keep them.
  node_modules/.bin/wasm-opt -O3 -Oz --strip-debug --strip-producers \
    --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-reference-types --enable-multivalue --enable-mutable-globals \
    "$stage/wasm_backoff_bg.wasm" -o "$dest/wasm_backoff_bg.wasm"
  cp js/*.js js/*.mjs "$stage/"
  if [ -n "$extra" ]; then echo "$extra" >"$stage/extra.js"; fi
  # The bundler entry carries the optimised module inline.
  printf 'export default "%s";\n' "$(base64 -w0 "$dest/wasm_backoff_bg.wasm")" >"$stage/wasm_base64.js"
  for entry in index.js node.mjs workerd.js bundler.js; do
    node_modules/.bin/esbuild "$stage/$entry" --bundle --minify --format=esm --target=es2022 \
      --platform=neutral --external:node:fs --external:./wasm_backoff_bg.wasm \
      --log-level=warning --outfile="$dest/$entry"
  done
  cp js/node.cjs "$dest/node.cjs"
  say "$dest: $(wc -c <"$dest/wasm_backoff_bg.wasm") B wasm, $(wc -c <"$dest/index.js") B browser entry"
}

say "cargo build --release --target wasm32-unknown-unknown (four modules)"
variant pkg "--no-default-features --features bare,fetch,gate"
variant pkg/backoff "--no-default-features --features bare" 'export {};'
variant pkg/stats "--no-default-features --features bare,stats" "export { backoffStats } from './stats.js';"
variant pkg/queue "--no-default-features --features bare,queue" "export { TaskQueue, TaskEvent, PermanentError, MemoryStore, IndexedDBStore } from './queue.js';"

# Types for CommonJS consumers (TypeScript's node16 resolution reads .d.cts
# for require), and the README and licence that npm shows and ships.
cp pkg/index.d.ts pkg/index.d.cts
for sub in backoff stats queue; do sed "s#'../index.js'#'../index.cjs'#g" "pkg/$sub/index.d.ts" >"pkg/$sub/index.d.cts"; done
cp README.md LICENSE pkg/
