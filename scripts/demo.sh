#!/usr/bin/env bash
# The README's first command: installs what is missing (what the build
# needs alone: scripts/setup.sh demo), builds pkg/ (the shipped modules:
# not the js/ sources' test module), and serves the demo page (www/) on
# localhost; prints its URL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh demo
bash scripts/build.sh --shipped
exec node scripts/serve.mjs "$@"
