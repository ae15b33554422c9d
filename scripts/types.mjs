// The package's declarations: types/ (hand-written, the source) copied into
// pkg/ (index.d.ts, <subpath>/index.d.ts), and beside each its CommonJS twin
// index.d.cts (TypeScript's node16 resolution reads .d.cts for require),
// whose relative imports name the .cjs files instead of the .js ones.
//
//   node scripts/types.mjs [out-dir]      default pkg
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'types');
const out = path.resolve(ROOT, process.argv[2] ?? 'pkg');

/** Every .d.ts under types/, relative (index.d.ts, gate/index.d.ts, …). */
const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.d.ts'));

for (const f of files) {
  const text = readFileSync(path.join(SRC, f), 'utf8');
  // `from './gate/index.js'` / `from '../index.js'` → `….cjs` (only relative specifiers).
  const cjs = text.replace(/(from\s+|import\()'(\.{1,2}\/[^']*)\.js'/g, "$1'$2.cjs'");
  mkdirSync(path.dirname(path.join(out, f)), { recursive: true });
  writeFileSync(path.join(out, f), text);
  writeFileSync(path.join(out, f.replace(/\.d\.ts$/, '.d.cts')), cjs);
}
console.log(`types/ → ${path.relative(ROOT, out) || '.'}: ${files.length} .d.ts, ${files.length} .d.cts`);
