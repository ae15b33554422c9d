#!/usr/bin/env bash
# The README's first command: installs what is missing, builds pkg/, and
# serves the demo page (www/) on localhost; prints its URL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
exec node scripts/serve.mjs "$@"
