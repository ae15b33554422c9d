// What a browser downloads, per import: the entry (glue + JS, minified) and
// the .wasm, raw, `gzip -9 -n` (GNU gzip, as servers precompress) and brotli
// (quality 11). Run after a build: `npm run bench`.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { brotliCompressSync, constants } from 'node:zlib';

const gzip9 = (file) => execFileSync('gzip', ['-9', '-n', '-c', file]).length;
const brotli = (file) => brotliCompressSync(readFileSync(file), { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length;

const IMPORTS = [
  { name: "import { Backoff } from 'wasm-backoff/backoff'", dir: 'pkg/backoff', target: 6 * 1024 },
  { name: "import { fetchWithBackoff } from 'wasm-backoff'", dir: 'pkg', target: 8 * 1024 },
];

const pad = (s, n) => String(s).padStart(n);
console.log(`| ${'what the browser downloads'.padEnd(48)} | ${pad('raw B', 7)} | ${pad('gzip -9 B', 9)} | ${pad('brotli B', 8)} | target gzip | ratio |`);
console.log(`|${'-'.repeat(50)}|${'-'.repeat(8)}:|${'-'.repeat(10)}:|${'-'.repeat(9)}:|------------:|------:|`);
for (const imp of IMPORTS) {
  const files = [`${imp.dir}/index.js`, `${imp.dir}/wasm_backoff_bg.wasm`];
  const t = { raw: 0, gzip: 0, brotli: 0 };
  for (const f of files) {
    const r = { raw: readFileSync(f).length, gzip: gzip9(f), brotli: brotli(f) };
    console.log(`| ${('  ' + f).padEnd(48)} | ${pad(r.raw, 7)} | ${pad(r.gzip, 9)} | ${pad(r.brotli, 8)} | | |`);
    for (const k in t) t[k] += r[k];
  }
  console.log(`| ${imp.name.padEnd(48)} | ${pad(t.raw, 7)} | ${pad(t.gzip, 9)} | ${pad(t.brotli, 8)} | ${pad(imp.target, 11)} | ${(t.gzip / imp.target).toFixed(2)} |`);
}
