// 1. Size: what a browser downloads for each library's typical import, raw,
// `gzip -9 -n` (GNU gzip, as servers precompress) and brotli (node:zlib,
// quality 11, the maximum).
//
// - Ours: the browser entry of pkg/<entry>/ (already a minified ES module,
//   built by scripts/build.sh) plus every relative module and .wasm it loads
//   (followed through `import … from './…'` and `new URL('./….wasm',
//   import.meta.url)`), as served, unbundled.
// - Peers: a one-line entry importing their main API (peers.mjs), bundled with
//   esbuild --bundle --minify --format=esm (browser platform).
//
//   node bench/size.mjs       prints the table (bench/run.mjs puts it in RESULTS.md)
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { brotliCompressSync, constants } from 'node:zlib';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH, PKG, ROOT, libraries, version, ensurePeers, fmt } from './peers.mjs';

const gzip9 = (buf) => execFileSync('gzip', ['-9', '-n', '-c'], { input: buf, maxBuffer: 64 << 20 }).length;
const brotli = (buf) => brotliCompressSync(buf, { params: { [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY } }).length;

/** The reference row of the ratio column. */
export const SIZE_REFERENCE = 'wasm-backoff';

/** Files a browser fetches starting from `entry` (an ES module of ours). */
function closure(entry) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    if (!file.endsWith('.js') && !file.endsWith('.mjs')) return;
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) visit(resolve(dirname(file), m[1]));
    for (const m of src.matchAll(/new URL\(\s*["']([^"']+)["']\s*,\s*import\.meta\.url\s*\)/g)) visit(resolve(dirname(file), m[1]));
  };
  visit(entry);
  return [...seen];
}

/** esbuild bundle of `source` (resolved from bench/), written to `out`. */
export function bundle(source, out) {
  execFileSync(join(ROOT, 'node_modules/.bin/esbuild'), ['--bundle', '--minify', '--format=esm', '--log-level=error', `--outfile=${out}`], {
    cwd: BENCH,
    input: source,
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  return out;
}

/**
 * Measures every library; returns { lines, bundles } where bundles maps a
 * peer's name to its bundle file (reused by the Chromium cold start).
 */
export function sizeSection({ dir = mkdtempSync(join(tmpdir(), 'bench-size-')) } = {}) {
  const rows = [];
  const bundles = new Map();
  for (const lib of libraries()) {
    let files, parts;
    if (lib.ours && !lib.bundled) {
      files = closure(join(PKG, lib.ours, lib.form === 'bundler' ? 'bundler.js' : 'index.js'));
      parts = files.map((f) => relative(ROOT, f)).join(' + ');
    } else {
      const out = bundle(lib.entry, join(dir, `${lib.name.replace(/[@/]/g, '_')}.js`));
      bundles.set(lib.name, out);
      files = [out];
      parts = `esbuild bundle of \`${lib.entry.split('\n')[0]}\` (${lib.bundled ? 'pkg/' : `${lib.name} ${version(lib.name)}`})`;
    }
    const t = { raw: 0, gzip: 0, brotli: 0 };
    for (const f of files) {
      const buf = readFileSync(f);
      t.raw += buf.length;
      t.gzip += gzip9(buf);
      t.brotli += brotli(buf);
    }
    rows.push({ name: lib.name, ours: !!lib.ours, parts, ...t });
  }
  const ref = rows.find((r) => r.name === SIZE_REFERENCE);
  const lines = [
    '| library (import) | what is downloaded | raw B | gzip -9 B | brotli B | gzip ratio | brotli ratio |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.ours ? `**${r.name}**` : r.name} | ${r.parts} | ${r.raw} | ${r.gzip} | ${r.brotli} | ${fmt(r.gzip / ref.gzip)} | ${fmt(r.brotli / ref.brotli)} |`,
    ),
    '',
    `Ratios: to \`${SIZE_REFERENCE}\` (\`import { fetchWithBackoff } from 'wasm-backoff'\`: its entry (one file) and the small .wasm), per compression. Ours are summed per file (each file compressed on its own, as a server sends them); a peer is one bundle. Each subpath family has its own wasm module (small: \`wasm-backoff\`, \`/backoff\`, \`/query\`; gate: \`/gate\`; queue: \`/queue\`, \`/stats\`), each with the calculator: a page pays for the gate or the queue only when it imports it, and one importing both downloads the calculator twice.`,
    '',
    ...budgetLines(rows),
  ];
  return { lines, bundles, rows };
}

/**
 * The package's size budgets (gzip -9 B), each against its row: issue 23's,
 * restored by issue 35 (the budgets had been raised to fit what features
 * cost; a target is not raised to fit): `wasm-backoff` ≤ 8 192 B in the
 * browser form, and bundled with an app never above ky (a peer's name: its
 * row in the same run), `/backoff` ≤ 5 120 B, `/gate` ≤ 15 360 B. A row over
 * its budget says by how much.
 * @type {[string, number | string][]}
 */
export const BUDGETS = [
  ['wasm-backoff', 8_192],
  ['wasm-backoff (bundled with the app)', 'ky'],
  ['wasm-backoff/backoff', 5_120],
  ['wasm-backoff/gate', 15_360],
];

/** @param {{ name: string, gzip: number }[]} rows */
function budgetLines(rows) {
  const ky = rows.find((r) => r.name === 'ky');
  return [
    '| import | gzip -9 B | budget B | left B | ÷ ky |',
    '|---|---:|---:|---:|---:|',
    ...BUDGETS.map(([name, budget]) => {
      const r = rows.find((x) => x.name === name);
      const max = typeof budget === 'number' ? budget : rows.find((x) => x.name === budget)?.gzip;
      if (!r || max === undefined) return `| ${name} | — | ${budget} | — | — |`;
      const left = max - r.gzip;
      const label = typeof budget === 'number' ? String(max) : `${max} (${budget})`;
      return `| ${name} | ${r.gzip} | ${label} | ${left < 0 ? `**${left} (over)**` : left} | ${ky ? fmt(r.gzip / ky.gzip) : '—'} |`;
    }),
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensurePeers();
  console.log(sizeSection().lines.join('\n'));
}
