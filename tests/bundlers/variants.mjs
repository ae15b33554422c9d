// The package as the bundler matrix tests it: the stock tarball (pkg/ as
// `npm pack` makes it). Issue #7's prototypes of package-side fixes (wasm
// inlined, a lazy `ready` promise, export conditions) were decided and
// removed: the `module` condition's bundler.js is the one that shipped; the
// table in tests/bundlers/README.md keeps what they showed.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { gzipBytes } from './harness.mjs';

/** name -> {about}. */
export const VARIANTS = {
  stock: { about: 'pkg/ as packed: index.js and its chunk fetch ./wasm_backoff_bg.wasm via new URL(…, import.meta.url), top-level await' },
};

/** What a browser downloads for an entry of the unpacked package: the entry, the chunks it imports, the .wasm they fetch. */
export function packageBytes(copy, entryRel) {
  const files = new Set();
  const visit = (file) => {
    if (files.has(file) || !existsSync(file)) return;
    files.add(file);
    const src = readFileSync(file, 'utf8');
    for (const m of src.matchAll(/\bfrom\s*["'](\.{1,2}\/[^"']+)["']/g)) visit(path.resolve(path.dirname(file), m[1]));
    for (const m of src.matchAll(/new URL\(\s*["']([^"']+\.wasm)["']/g)) files.add(path.resolve(path.dirname(file), m[1]));
  };
  visit(path.join(copy, entryRel));
  let totalGz = 0;
  for (const f of files) totalGz += gzipBytes(f);
  return { entry: entryRel, files: files.size, totalGz };
}

/** The stock tarball with its download sizes: {file, sha256, bytes: {'.': …, './backoff': …}}. */
export async function variantTarball(name, stock) {
  if (name !== 'stock') throw new Error(`unknown variant ${name}`);
  const { execFileSync } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'wb-stock-'));
  try {
    execFileSync('tar', ['xzf', stock.file, '-C', tmp]);
    const copy = path.join(tmp, 'package');
    const bytes = { '.': packageBytes(copy, 'index.js'), './backoff': packageBytes(copy, 'backoff/index.js') };
    return { ...stock, bytes };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
