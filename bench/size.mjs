// What a browser downloads for `import { Backoff } from 'wasm-backoff'`:
// the browser entry (glue + options reader, minified) and the .wasm, raw,
// `gzip -9 -n` (GNU gzip, as servers precompress) and brotli (quality 11).
// Run after a build: `npm run bench`.
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { brotliCompressSync, constants } from 'node:zlib';

const gzip9 = (file) => execFileSync('gzip', ['-9', '-n', '-c', file]).length;

const files = ['pkg/index.js', 'pkg/wasm_backoff_bg.wasm'];
const TARGET_GZIP = 6 * 1024;

const rows = files.map((f) => {
  const b = readFileSync(f);
  return {
    file: f,
    raw: b.length,
    gzip: gzip9(f),
    brotli: brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
});
const total = rows.reduce((t, r) => ({ file: 'total (Backoff)', raw: t.raw + r.raw, gzip: t.gzip + r.gzip, brotli: t.brotli + r.brotli }), { raw: 0, gzip: 0, brotli: 0 });
rows.push(total);

const pad = (s, n) => String(s).padStart(n);
console.log(`| ${'file'.padEnd(26)} | ${pad('raw B', 7)} | ${pad('gzip -9 B', 9)} | ${pad('brotli B', 8)} |`);
console.log(`|${'-'.repeat(28)}|${'-'.repeat(9)}:|${'-'.repeat(11)}:|${'-'.repeat(10)}:|`);
for (const r of rows) console.log(`| ${r.file.padEnd(26)} | ${pad(r.raw, 7)} | ${pad(r.gzip, 9)} | ${pad(r.brotli, 8)} |`);
console.log(`\ngzip total ${total.gzip} B = ${(total.gzip / 1024).toFixed(2)} KiB; target <= ${TARGET_GZIP / 1024} KiB: ${total.gzip <= TARGET_GZIP ? 'met' : 'NOT met'} (ratio ${(total.gzip / TARGET_GZIP).toFixed(2)})`);
