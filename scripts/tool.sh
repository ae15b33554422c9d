#!/usr/bin/env bash
# The path of an npm tool's binary (wasm-opt, wasm-metadce, esbuild): from
# node_modules/ (`npm install`, what `npm test` sets up) or, failing that,
# scripts/node_modules/ (the build tools alone: `scripts/setup.sh demo`).
#   bash scripts/tool.sh wasm-opt
set -euo pipefail
cd "$(dirname "$0")/.."
for d in node_modules scripts/node_modules; do
  if [ -x "$d/.bin/$1" ]; then
    echo "$PWD/$d/.bin/$1"
    exit 0
  fi
done
echo "scripts/tool.sh: no $1 in node_modules/ or scripts/node_modules/ (run scripts/setup.sh)" >&2
exit 1
