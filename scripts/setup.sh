#!/usr/bin/env bash
# Installs what building and testing need, each only when missing, so a second
# run is a quick no-op: Rust targets, the wasm-bindgen CLI matching Cargo.lock
# exactly, Debian's chromium + chromium-driver, the npm dev packages, and the two
# of bench/'s packages that the demo's overload view bundles.
#
#   bash scripts/setup.sh        everything (npm test: scripts/test.sh)
#   bash scripts/setup.sh tools  the Rust targets, the wasm-bindgen CLI and
#                                Chromium alone (what the Rust checks need:
#                                npm test starts them while `npm` runs)
#   bash scripts/setup.sh npm    the npm packages alone (root and bench/)
#   bash scripts/setup.sh demo   what building pkg/ and serving the demo need
#                                alone (npm run demo: scripts/demo.sh): the
#                                wasm32 target, binaryen, esbuild and terser (into
#                                scripts/node_modules/, at the versions of
#                                package.json), bench/'s two packages. No
#                                wasm-bindgen CLI (the shipped modules need
#                                none), no Chromium, no test runtimes.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi

# 1. Rust targets: wasm32 for the package, thumbv7em to prove the core is no_std.
if [ "$mode" != npm ]; then
  targets="wasm32-unknown-unknown thumbv7em-none-eabihf"
  [ "$mode" = demo ] && targets=wasm32-unknown-unknown
  installed_targets=$(rustup target list --installed)
  for t in $targets; do
    if ! grep -qx "$t" <<<"$installed_targets"; then
      say "rustup target add $t"
      rustup target add "$t"
    fi
  done
fi

# (the demo: the build tools alone, at package.json's versions, unless the full set is there)
if [ "$mode" = demo ]; then
  if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/esbuild ] || [ ! -d node_modules/terser ]; then
    want() { node -p "require('./package.json').devDependencies['$1']"; }
    have() { node -p "try { require('./scripts/node_modules/$1/package.json').version } catch { '' }"; }
    tools=()
    for p in binaryen esbuild terser; do [ "$(have $p)" = "$(want $p)" ] || tools+=("$p@$(want $p)"); done
    if [ ${#tools[@]} -gt 0 ]; then
      say "npm install ${tools[*]} into scripts/node_modules (the build's tools alone)"
      npm install --prefer-offline --prefix scripts --no-save --no-package-lock --no-audit --no-fund --loglevel=error "${tools[@]}"
    fi
  fi
fi

if [ "$mode" = all ] || [ "$mode" = tools ]; then
# 2. wasm-bindgen-cli: exactly the wasm-bindgen version in Cargo.lock (the
#    wasm tests' runner refuses test binaries of any other version). No
#    --locked: one pinned transitive crate is missing from the registry
#    mirror.
want=$(awk '$0 == "name = \"wasm-bindgen\"" { getline; gsub(/[^0-9.]/, "", $3); print $3; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
if [ "$want" != "$have" ]; then
  say "cargo install wasm-bindgen-cli $want (a few minutes, once)"
  CARGO_PROFILE_RELEASE_OPT_LEVEL=1 cargo install wasm-bindgen-cli --version "$want" --force
fi

# 3. Headless Chromium and its driver, from Debian (never a browser download);
# openssl, whose CLI makes the throwaway certificate of the HTTP/2 test
# server (tests/server/h2.mjs: Chromium streams request bodies only over h2).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! command -v openssl >/dev/null; then
  say "apt-get install chromium chromium-driver openssl"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium chromium-driver openssl >/dev/null
fi

fi

# 4. npm dev packages (binaryen's wasm-opt, esbuild, playwright-core,
#    miniflare, deno, bun), keyed on the lockfile so an unchanged tree is not
#    reinstalled. `npm install` rather than `npm ci`: the registry mirror here
#    lacks the other platforms' optional binaries of deno, which `npm ci`
#    insists on finding in the lockfile.
if [ "$mode" = all ] || [ "$mode" = npm ]; then
stamp=node_modules/.setup-stamp
lock_sum() { cat package.json package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1; }
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(lock_sum)" ]; then
  say "npm install"
  # (--prefer-offline here and below: what npm's cache holds is not asked of the registry again; the
  # versions are the lockfile's, and what the cache lacks is fetched. A fresh clone: 16 s against 21,
  # 22 s of CPU against 28.)
  npm install --prefer-offline --no-audit --no-fund --loglevel=error
  lock_sum >"$stamp" # after the install, which may rewrite the lockfile
fi

fi

# 5. bench/'s two packages that the demo's overload view bundles (scripts/
#    overload-deps.mjs: @sinonjs/fake-timers and @smithy/util-retry, the
#    versions the benchmark runs), from bench/'s lockfile; bench/run.mjs
#    installs the rest of its peers when it runs.
if [ "$mode" != tools ] && { [ ! -d bench/node_modules/@smithy/util-retry ] || [ ! -d bench/node_modules/@sinonjs/fake-timers ]; }; then
  say "npm ci in bench/ (the overload view's bundle)"
  (cd bench && npm ci --prefer-offline --no-audit --no-fund --loglevel=error)
fi
