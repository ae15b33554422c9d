#!/usr/bin/env bash
# Runs every test (the README's second command; .ci/run runs exactly this).
# Installs what is missing first (scripts/setup.sh), builds pkg/, then:
# formatting and lints (Rust and JS), the JS type check against the
# published .d.ts, the no_std proof, native Rust tests, wasm tests in Node and
# headless Chromium, and the JS package in Node, Chromium, workerd, Deno and
# Bun, the bundler and install matrices, the engine's unit tests (tests/engine/,
# on the js/ sources). Its last line is `total: N passed, N failed`.
#
# The JS tests, one folder per feature (each runtime's variant beside the
# checks it shares): tests/engine/ (the loop, on js/ sources and fake time),
# tests/fetch/, tests/gate/ (gate, breaker, limiter), tests/fleet/,
# tests/queue/ (and the outbox), tests/query/ (TanStack Query, SWR), tests/recipes/ (axios, ky, OpenAI, Anthropic), tests/undici/ (Node's global fetch), tests/otel/ (OpenTelemetry, Node and workerd), tests/demo/, tests/site/ (the docs site in Chromium), tests/package/ (import checks in every runtime,
# boundary, lists, the code and links of README.md and docs/); what they
# load: tests/browser/ (pages), tests/workerd/ (Workers), tests/runtimes/
# (Deno, Bun); helpers in tests/support/; the scripted server
# tests/server/; then tests/bundlers/, tests/install/, tests/example/.
#
#   bash scripts/test.sh          everything (npm test)
#   bash scripts/test.sh rust     formatting, clippy, no_std, native and wasm Rust tests (npm run test:rust)
#   bash scripts/test.sh js       lint, types, and the JS tests against an unminified build (npm run test:js)
#   bash scripts/test.sh js tests/gate/ tests/fetch/fetch.node.test.mjs …   only those folders or files
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-all}
[ $# -gt 0 ] && shift

# (all: the npm packages are installed in the background, beside the Rust checks, which need none)
if [ "$what" = all ]; then bash scripts/setup.sh tools; else bash scripts/setup.sh; fi

log=$(mktemp -d)/test.log
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { "$@" 2>&1 | tee -a "$log"; }

# The JS test files: every tests/**/*.test.mjs (a new folder needs no line
# here), each in a node process of its own, from one queue
# (scripts/run-tests.mjs, longest first): one at a time while the Rust
# checks still build (they hold $hold), two once they only wait or are done,
# three once only the short files are left.
# Timing logic runs on virtual time (the tests' clock,
# wasm-backoff/testing), so a test is not disturbed by what runs beside it.
# (tests/example/ runs in the Rust checks when they run: it builds a Rust page, and there cargo reuses
# the wasm32 dependencies the web crate's tests built)
rustside=tests/example/example.test.mjs
mapfile -t files < <(find tests -name '*.test.mjs' -not -path '*/node_modules/*' | sort)
[ "$what" = all ] && mapfile -t files < <(printf '%s\n' "${files[@]}" | grep -vxF "$rustside")
hold=$(dirname "$log")/rust-running
js_tests() { node scripts/run-tests.mjs --hold "$hold" "${files[@]}" >"$log.js" 2>&1; }
# (a background job and everything it started: set -e may end this script early)
killtree() {
  local c
  for c in $(pgrep -P "$1"); do killtree "$c"; done
  kill "$1" 2>/dev/null || true
}

if [ "$what" = all ]; then
  # The npm packages, the JS lints and pkg/ (release builds, scripts/build.sh)
  # are one chain in the background while the Rust checks (debug builds)
  # run: the two share no artifact, and cargo locks a target directory for
  # a whole command, so the checks get their own directory (target/checks)
  # and the chain keeps target/. As soon as pkg/ is built, the JS tests
  # start beside the Rust checks, one file at a time until they are done
  # ($hold), then two. (The lints' verdict is printed after the Rust checks;
  # `npm run lint` gives it at once.)
  touch "$hold"
  (
    rc=0
    bash scripts/setup.sh npm >"$log.npm" 2>&1 || rc=$?
    echo "$rc" >"$log.npm.rc"
    if [ "$rc" = 0 ]; then
      {
        step "JS: biome (format and lint), tsc --checkJs against the published .d.ts"
        node_modules/.bin/biome check . &&
          cargo run --quiet -p xtask && # (js/gen/, which tsc reads: the build renders it again, a no-op)
          node_modules/.bin/tsc -p tsconfig.json
      } >"$log.lint" 2>&1 || rc=$?
    fi
    if [ "$rc" = 0 ]; then bash scripts/build.sh >"$log.build" 2>&1 || rc=$?; fi
    echo "$rc" >"$log.build.rc"
    if [ "$rc" = 0 ] && [ $# -eq 0 ]; then
      rc=0
      js_tests || rc=$?
      echo "$rc" >"$log.js.rc"
    fi
  ) &
  bg=$!
  trap 'killtree "$bg"; rm -f "$hold"' EXIT
fi

if [ "$what" = all ] || [ "$what" = rust ]; then
  export CARGO_TARGET_DIR=target/checks
  step "cargo fmt --check, clippy -D warnings (each shipped wasm32 module; every other build below is linted as it compiles)"
  cargo fmt --all --check
  # The shipped modules' feature sets, linted as they are built for release (scripts/build.sh): no
  # dependency, so check builds cost little.
  for f in bare bare,gate bare,queue bare,full; do
    cargo clippy --quiet -p wasm-backoff --target wasm32-unknown-unknown --lib --no-default-features --features "$f" -- -D warnings
  done
  # Every other Rust build below is linted as it compiles: clippy's driver wraps the compiler for the
  # workspace's own crates (what `cargo clippy -- -D warnings` sets up, CLIPPY_ARGS its arguments), so
  # the dependencies are compiled once, for the tests, not a second time as the check builds `cargo
  # clippy` makes. The web crate's `cargo doc` needed those check builds too: its
  # `#![warn(missing_docs)]`, denied here, is what that run guarded. (The Rust steps on a cold target,
  # back to back, twice each: 185 and 183 s of CPU with cargo clippy and that doc run, 126 and 123 s
  # this way.) Cargo does not key its artifacts by the wrapper: a crate built without it would pass
  # for linted, so this directory (target/checks) is built in by this script alone.
  export RUSTC_WORKSPACE_WRAPPER=clippy-driver CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
  # Natively: every crate but the two made for wasm32 (the web crate, the example page), which are linted
  # and tested for wasm32 below; building them natively too compiled js-sys and web-sys twice more (~30 s
  # of CPU). The core's optional features, which the web crate turned on by unification, are named
  # instead (the core with all its features: std, getrandom, queue by default).
  native=(--workspace --exclude wasm-backoff-web --exclude fetch-page --features wasm-backoff-core/std,wasm-backoff-core/getrandom)

  step "the core is no_std: build for bare-metal thumbv7em-none-eabihf; the crate as published"
  cargo build --quiet -p wasm-backoff-core --target thumbv7em-none-eabihf
  cargo build --quiet -p wasm-backoff-core --target wasm32-unknown-unknown --features getrandom
  RUSTDOCFLAGS="-D missing_docs" cargo doc --quiet -p wasm-backoff-core --no-deps --all-features

  step "native Rust tests (presets, properties, distributions, golden file, boundary, Retry-After vectors; doctests)"
  run cargo test "${native[@]}"
  # The core's optional features (std: the retry helper on tokio's paused
  # clock; getrandom) are on in that run ($native names them). Running the
  # core again with --all-features compiled its dev-dependencies a second
  # time and ran its 190 doctests twice (~21 s). Should they ever be off,
  # this says so rather than letting the tests vanish.
  for t in 'retry::waits_the_schedule_then_succeeds ... ok' 'rng::entropy_rng (line'; do
    grep -qF "$t" "$log" || { echo "the workspace's tests did not run the core with all its features (no '$t')" >&2; exit 1; }
  done

  # wasm-bindgen-test's runner gives a whole browser run 20 s by default, then fails it: the web crate's
  # run, which waits for real timers against a real server, takes 6-7 s quiet and more on a loaded machine.
  # (Each test has its own bounds; this is only the runner's guard against a hang.)
  export WASM_BINDGEN_TEST_TIMEOUT=180
  step "wasm tests in Node and in headless Chromium (wasm-bindgen-test)"
  run cargo test --target wasm32-unknown-unknown -p wasm-backoff --test wasm_node --test wasm_browser

  step "the web crate (a retrying fetch for Rust wasm apps) in Node and headless Chromium, against the scripted server"
  # (its doc example is docs/rust.md's, word for word: xtask/tests/readme.rs; compiled here, for wasm32)
  run cargo test --target wasm32-unknown-unknown -p wasm-backoff-web --doc
  # the example page (examples/fetch-page; built and loaded in Chromium by tests/example/), and its plain-fetch baseline
  # (built here to be linted, reusing the web crate's dependencies; the example test's build is then a no-op)
  cargo build --quiet -p fetch-page --target wasm32-unknown-unknown
  cargo build --quiet -p fetch-page --target wasm32-unknown-unknown --no-default-features
  coproc SRV { exec node tests/server/scripted.mjs --exit-with-stdin; }
  read -r line <&"${SRV[0]}"
  SCRIPTED_URL=$(sed 's/.*"url":"\([^"]*\)".*/\1/' <<<"$line")
  # read at run time in Node (process.env), at compile time in Chromium (a page has no environment)
  export SCRIPTED_URL
  # Built first: what is left of the Rust checks then mostly waits, so two JS test files run beside it
  # from here on. (The web crate's two runs wait on real timers against the server: 25 s, in which the
  # whole machine was busy for 13.6 core-s, the runner, Chromium and the server included.)
  run cargo test --quiet --target wasm32-unknown-unknown -p wasm-backoff-web --test node --test browser --no-run
  rm -f "$hold"
  run cargo test --target wasm32-unknown-unknown -p wasm-backoff-web --test node --test browser
  exec {SRV[1]}>&- # closing its stdin stops the server
  if [ "$what" = all ]; then
    step "the example page (examples/fetch-page, a debug build beside the web crate's) in Chromium"
    while [ ! -e "$log.npm.rc" ]; do sleep 1; done # (playwright-core)
    # (under timeout: without --test-force-exit a file that leaves a handle behind never ends; 300 s, as
    # scripts/run-tests.mjs's LIMIT)
    if [ "$(cat "$log.npm.rc")" = 0 ]; then run timeout 300 node --test --test-reporter=spec "$rustside" || failed=1; fi
  fi
fi

if [ "$what" = all ] || [ "$what" = js ]; then
  rm -f "$hold" # (the Rust checks are done: two test files at a time)
  if [ "$what" = js ]; then
    bash scripts/build.sh --dev # unminified: readable stacks while iterating
    step "JS: biome (format and lint), tsc --checkJs against the published .d.ts"
    node_modules/.bin/biome check .
    node_modules/.bin/tsc -p tsconfig.json
  else
    unset CARGO_TARGET_DIR RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
    step "the npm packages, the JS lints and the package (scripts/build.sh), run beside the Rust checks"
    while [ ! -e "$log.build.rc" ]; do sleep 1; done
    cat "$log.npm" "$log.lint" "$log.build" 2>/dev/null || true
    status=$(cat "$log.build.rc")
    [ "$status" = 0 ] || exit "$status"
  fi

  step "the JS tests (each file in its own process; begun beside the Rust checks): the engine on js/ sources and virtual time; the package in Node, Chromium (page, worker), workerd, Deno and Bun, against the scripted server"
  if [ $# -gt 0 ]; then
    run node --test --test-reporter=spec "$@"
  else
    if [ "$what" = js ]; then
      js_tests &
      bg=$!
      wait "$bg" && echo 0 >"$log.js.rc" || echo 1 >"$log.js.rc"
    else
      wait "$bg" || true
    fi
    trap - EXIT
    run cat "$log.js"
    [ "$(cat "$log.js.rc" 2>/dev/null)" = 0 ] || failed=1
  fi
fi

# One closing line over every runner (cargo's and node's summaries).
awk '
  /test result: ok\./ || /test result: FAILED\./ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
  /^ℹ pass [0-9]+/ { p += $3 }
  /^ℹ fail [0-9]+/ { f += $3 }
  END { printf "\ntotal: %d passed, %d failed\n", p, f }
' "$log"
exit "${failed:-0}"
