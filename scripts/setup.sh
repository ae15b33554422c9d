#!/usr/bin/env bash
# Installs what building and testing need, each only when missing, so a second
# run is a quick no-op: Rust targets, the wasm-bindgen CLI matching Cargo.lock
# exactly, Debian's chromium + chromium-driver, the npm dev packages, and the two
# of bench/'s packages that the demo's overload view bundles.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi

# 1. Rust targets: wasm32 for the package, thumbv7em to prove the core is no_std.
installed_targets=$(rustup target list --installed)
for t in wasm32-unknown-unknown thumbv7em-none-eabihf; do
  if ! grep -qx "$t" <<<"$installed_targets"; then
    say "rustup target add $t"
    rustup target add "$t"
  fi
done

# 2. wasm-bindgen-cli: exactly the wasm-bindgen version in Cargo.lock (the
#    CLI refuses modules from any other version). No --locked: one pinned
#    transitive crate is missing from the registry mirror.
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

# 4. npm dev packages (binaryen's wasm-opt, esbuild, playwright-core,
#    miniflare, deno, bun), keyed on the lockfile so an unchanged tree is not
#    reinstalled. `npm install` rather than `npm ci`: the registry mirror here
#    lacks the other platforms' optional binaries of deno, which `npm ci`
#    insists on finding in the lockfile.
stamp=node_modules/.setup-stamp
lock_sum() { cat package.json package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1; }
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(lock_sum)" ]; then
  say "npm install"
  npm install --no-audit --no-fund --loglevel=error
  lock_sum >"$stamp" # after the install, which may rewrite the lockfile
fi

# 5. bench/'s two packages that the demo's overload view bundles (scripts/
#    overload-deps.mjs: @sinonjs/fake-timers and @smithy/util-retry, the
#    versions the benchmark runs), from bench/'s lockfile; bench/run.mjs
#    installs the rest of its peers when it runs.
if [ ! -d bench/node_modules/@smithy/util-retry ] || [ ! -d bench/node_modules/@sinonjs/fake-timers ]; then
  say "npm ci in bench/ (the overload view's bundle)"
  (cd bench && npm ci --no-audit --no-fund --loglevel=error)
fi
