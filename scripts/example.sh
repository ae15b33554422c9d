#!/usr/bin/env bash
# Builds the example Rust wasm page (examples/fetch-page: fetch_with_backoff
# from wasm-backoff-web, its attempts listed in the DOM) into
# target/example/fetch-page/: cargo (release: opt-level z, LTO), the pinned
# wasm-bindgen CLI (--target web), then wasm-opt -Oz from node_modules/.bin;
# with nothing changed since the last build, only cargo's own check (tests/example/
# runs this before every run).
#
#   bash scripts/example.sh           build; then `node scripts/serve.mjs` and open
#                                     http://127.0.0.1:8080/target/example/fetch-page/
#   bash scripts/example.sh --sizes   also the same page doing one plain fetch
#                                     (--no-default-features), into
#                                     target/example/fetch-page-plain/, and print what
#                                     the web crate adds (raw and gzip -9 -n)
#   bash scripts/example.sh --dev     a debug build (no LTO, no wasm-opt) into
#                                     target/example/fetch-page-dev/: what
#                                     tests/example/ loads (it checks behaviour, not
#                                     size; in `npm test` the Rust checks have built
#                                     it already, in target/checks, linted)
#
# Assumes scripts/setup.sh has run (wasm32 target, wasm-bindgen, npm packages).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[example]\033[0m %s\n' "$*"; }

dev=
[ "${1:-}" = --dev ] && dev=1

build() { # <out dir> [cargo feature flags]
  local out=$1
  shift
  local profile=release release=--release
  [ -n "$dev" ] && profile=debug release=
  cargo build --quiet $release --target wasm32-unknown-unknown -p fetch-page "$@"
  local wasm=${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/$profile/fetch_page.wasm
  # What the output is made of (cargo's wasm, the page, this script, the tools' versions) and what
  # it holds: both as the last build of $out left them, there is nothing to do (wasm-opt, from
  # npm, alone takes seconds).
  local stamp
  stamp=$({
    cat "$wasm" examples/fetch-page/index.html examples/fetch-page/main.js scripts/example.sh node_modules/binaryen/package.json
    wasm-bindgen --version
  } | sha256sum | cut -d' ' -f1)
  made() { (cd "$out" && find . -type f ! -name .stamp | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -d' ' -f1); }
  if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$stamp $(made 2>/dev/null)" ]; then
    say "$out/pkg/fetch_page_bg.wasm: $(wc -c <"$out/pkg/fetch_page_bg.wasm") B (up to date)"
    return
  fi
  rm -rf "$out" && mkdir -p "$out/pkg"
  wasm-bindgen --target web --no-typescript --out-dir "$out/pkg" "$wasm"
  [ -n "$dev" ] || node_modules/.bin/wasm-opt -Oz --strip-debug --strip-producers \
    --enable-bulk-memory --enable-bulk-memory-opt --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-reference-types --enable-multivalue --enable-mutable-globals \
    "$out/pkg/fetch_page_bg.wasm" -o "$out/pkg/fetch_page_bg.wasm"
  cp examples/fetch-page/index.html examples/fetch-page/main.js "$out/"
  echo "$stamp $(made)" >"$out/.stamp"
  say "$out/pkg/fetch_page_bg.wasm: $(wc -c <"$out/pkg/fetch_page_bg.wasm") B"
}

if [ -n "$dev" ]; then
  build target/example/fetch-page-dev
  exit
fi
build target/example/fetch-page

if [ "${1:-}" = --sizes ]; then
  build target/example/fetch-page-plain --no-default-features
  gz() { gzip -9 -n -c "$1" | wc -c; }
  printf '\n%-34s %9s %9s %12s %12s\n' 'variant' 'wasm B' 'wasm gz' 'JS glue B' 'JS glue gz'
  for v in fetch-page-plain fetch-page; do
    d=target/example/$v/pkg
    printf '%-34s %9d %9d %12d %12d\n' "$v" "$(wc -c <"$d/fetch_page_bg.wasm")" "$(gz "$d/fetch_page_bg.wasm")" \
      "$(wc -c <"$d/fetch_page.js")" "$(gz "$d/fetch_page.js")"
  done
  a=target/example/fetch-page-plain/pkg b=target/example/fetch-page/pkg
  printf '%-34s %+9d %+9d %+12d %+12d\n' 'added by wasm-backoff-web' \
    $(($(wc -c <$b/fetch_page_bg.wasm) - $(wc -c <$a/fetch_page_bg.wasm))) \
    $(($(gz $b/fetch_page_bg.wasm) - $(gz $a/fetch_page_bg.wasm))) \
    $(($(wc -c <$b/fetch_page.js) - $(wc -c <$a/fetch_page.js))) \
    $(($(gz $b/fetch_page.js) - $(gz $a/fetch_page.js)))
fi
