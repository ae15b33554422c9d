#!/usr/bin/env bash
# The demo as plain static files, to publish as the project's homepage on
# any static host: the page (www/) and the built package (pkg/, what the
# page imports) into target/site/, with an index that opens the page. No
# server code: the demo's Service Worker (www/sw.js) answers the live
# section's scripted endpoint there. (`npm run demo` serves the same page
# with the strict CSP and the endpoint in Node.)
#
#   bash scripts/site.sh [out-dir]      default target/site
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/site}
bash scripts/setup.sh
bash scripts/build.sh
rm -rf "$out"
mkdir -p "$out/pkg"
cp -r www "$out/www"
cp pkg/*.js pkg/*.wasm pkg/package.json "$out/pkg/"
for d in pkg/*/; do mkdir -p "$out/$d" && cp "$d"*.js "$out/$d"; done
printf '<!doctype html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0; url=www/">\n<title>wasm-backoff</title>\n<a href="www/">wasm-backoff demo</a>\n' >"$out/index.html"
echo "static site: $out (serve it with any static server, open /www/)"
