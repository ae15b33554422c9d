// Prototypes of package-side fixes for issue #7, made on a COPY of the packed
// package (never pkg/ or js/): the stock tarball is unpacked into a temp dir,
// entries are rebuilt from build.sh's staging dir (target/js/pkg,
// target/js/backoff: the glue and js/ sources of that very build, checked by
// rebuilding the stock entry byte for byte) with prototypes/*.js, and the copy
// is re-packed. Results are cached under target/bundler-cache/variants/.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { deflateRawSync } from 'node:zlib';
import path from 'node:path';
import { CACHE, HERE, ROOT, gzipBytes, pack } from './harness.mjs';

/**
 * name -> {about, app (options for appSource), patch}. `patch(copy)` edits the
 * unpacked copy; `entries` lists which built files a browser loads.
 */
export const VARIANTS = {
  stock: { about: 'pkg/ as packed: index.js fetches ./wasm_backoff_bg.wasm via new URL(…, import.meta.url), top-level await' },
  'a-embed-tla': {
    about: '(a) wasm as base64 inside index.js, `await WebAssembly.compile(bytes)` (top-level await kept)',
    entry: 'embed-tla.js',
  },
  'a-embed-sync': {
    about: '(a) wasm as base64 inside index.js, `new WebAssembly.Module(bytes)`: synchronous, no top-level await',
    entry: 'embed-sync.js',
  },
  'a-embed-deflate': {
    about: '(a) wasm deflated + base64 inside index.js, DecompressionStream then `await WebAssembly.compile` (top-level await kept)',
    entry: 'embed-deflate.js',
  },
  'b-lazy': {
    about: '(b) no top-level await, wasm still by URL, `ready` promise; the stock app (new Backoff() at start-up) as is',
    entry: 'lazy.js',
    fullOnly: true,
  },
  'b-lazy+await-ready': {
    about: '(b) same package as b-lazy; the app adds `await ready` before new Backoff()',
    same: 'b-lazy',
    app: { awaitReady: true },
  },
  'd-import-wasm': {
    about: "(d) what esbuild's --loader:.wasm=file needs: index.js does `import wasmUrl from './wasm_backoff_bg.wasm'`",
    entry: 'import-wasm.js',
  },
  'c-cond-browser': {
    about: '(c) exports["."].browser -> bundler.js (= a-embed-sync); default stays the URL entry',
    condition: 'browser',
  },
  'c-cond-module': {
    about: '(c) exports["."].module -> bundler.js (= a-embed-sync); default stays the URL entry',
    condition: 'module',
  },
};

const ESBUILD = ['node_modules/.bin/esbuild', 'tests/bundlers/node_modules/.bin/esbuild']
  .map((p) => path.join(ROOT, p))
  .find((p) => existsSync(p));

// The flags scripts/build.sh bundles each entry with.
function bundle(entry, outfile) {
  execFileSync(
    ESBUILD,
    [
      entry,
      '--bundle',
      '--minify',
      '--format=esm',
      '--target=es2022',
      '--platform=neutral',
      '--external:node:fs',
      '--external:./wasm_backoff_bg.wasm',
      '--log-level=warning',
      `--outfile=${outfile}`,
    ],
    { stdio: 'pipe' },
  );
}

/**
 * Copies build.sh's staging dirs (target/js/pkg, target/js/backoff: the glue
 * and the js/ sources of the last build) into `tmp`, and checks they are the
 * sources of the packed entries by rebuilding each stock index.js byte for
 * byte. Resolves to {'': dir, backoff: dir}; throws if pkg/ and the staging
 * dirs are from different builds (a build ran in between: retry).
 */
export function snapshotStage(stock, tmp) {
  const unpacked = path.join(tmp, 'stock');
  rmSync(unpacked, { recursive: true, force: true });
  mkdirSync(unpacked, { recursive: true });
  execFileSync('tar', ['xzf', stock.file, '-C', unpacked]);
  const out = {};
  for (const sub of ['', 'backoff']) {
    const from = path.join(ROOT, 'target/js', sub || 'pkg');
    const dir = path.join(tmp, `stage-${sub || 'pkg'}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    for (const f of readdirSync(from)) if (f.endsWith('.js') || f.endsWith('.mjs')) cpSync(path.join(from, f), path.join(dir, f));
    bundle(path.join(dir, 'index.js'), path.join(tmp, 'check.js'));
    if (!readFileSync(path.join(tmp, 'check.js')).equals(readFileSync(path.join(unpacked, 'package', sub, 'index.js')))) {
      throw new Error(`target/js/${sub || 'pkg'} is not the staging dir of the packed ${sub || '.'}/index.js (a build ran in between?)`);
    }
    out[sub] = dir;
  }
  return out;
}

/** A staging dir for one prototype: the snapshot plus prototypes/*.js and the base64 of the package's .wasm. */
function stage(tmp, sub, copy, snapshot) {
  const dir = path.join(tmp, `stage-${sub || 'pkg'}`);
  cpSync(snapshot[sub], dir, { recursive: true });
  for (const f of readdirSync(path.join(HERE, 'prototypes'))) cpSync(path.join(HERE, 'prototypes', f), path.join(dir, f));
  const wasm = readFileSync(path.join(copy, sub, 'wasm_backoff_bg.wasm'));
  writeFileSync(path.join(dir, 'wasm_base64.js'), `export default ${JSON.stringify(wasm.toString('base64'))};\n`);
  const deflated = deflateRawSync(wasm, { level: 9, memLevel: 9 });
  writeFileSync(path.join(dir, 'wasm_deflate_base64.js'), `export default ${JSON.stringify(deflated.toString('base64'))};\n`);
  return dir;
}

/** What a browser downloads for `import … from 'wasm-backoff'` from the (unbundled) package: the entry, plus the .wasm if the entry fetches it. */
export function packageBytes(copy, entryRel) {
  const entry = path.join(copy, entryRel);
  const fetchesWasm = readFileSync(entry, 'utf8').includes('wasm_backoff_bg.wasm');
  const wasm = path.join(path.dirname(entry), 'wasm_backoff_bg.wasm');
  const r = { entry: entryRel, entryRaw: readFileSync(entry).length, entryGz: gzipBytes(entry), wasmGz: fetchesWasm ? gzipBytes(wasm) : 0 };
  return { ...r, totalGz: r.entryGz + r.wasmGz };
}

/**
 * The tarball of variant `name` derived from the stock tarball and the
 * staging snapshot taken with it (cached by the stock sha256); resolves to
 * {file, sha256, bytes: {'.': …, './backoff': …}}.
 */
export async function variantTarball(name, stock, snapshot) {
  const v = VARIANTS[name];
  if (v.same) return variantTarball(v.same, stock, snapshot);
  const dir = path.join(CACHE, 'variants', stock.sha256.slice(0, 16), name);
  const meta = path.join(dir, 'meta.json');
  if (name !== 'stock' && existsSync(meta)) {
    const now = new Date();
    utimesSync(path.dirname(dir), now, now); // recently used: kept by pruneCache
    return JSON.parse(readFileSync(meta, 'utf8'));
  }

  const tmp = mkdtempSync(path.join(os.tmpdir(), `wb-variant-${name}-`));
  try {
    execFileSync('tar', ['xzf', stock.file, '-C', tmp]);
    const copy = path.join(tmp, 'package');
    const pj = JSON.parse(readFileSync(path.join(copy, 'package.json'), 'utf8'));
    const entries = { '.': 'index.js', './backoff': 'backoff/index.js' };
    if (name !== 'stock') {
      for (const sub of v.fullOnly ? [''] : ['', 'backoff']) {
        if (!snapshot) throw new Error('no staging snapshot (snapshotStage) for a prototype');
        const st = stage(tmp, sub, copy, snapshot);
        const src = v.entry ?? 'embed-sync.js';
        const out = v.condition ? 'bundler.js' : 'index.js';
        bundle(path.join(st, src), path.join(copy, sub, out));
        if (v.condition) {
          const key = sub ? './backoff' : '.';
          // Insert the condition just before "default" (key order is the matching order).
          const { default: dflt, ...rest } = pj.exports[key];
          pj.exports[key] = { ...rest, [v.condition]: `./${path.posix.join(sub, out)}`, default: dflt };
          entries[key] = path.posix.join(sub, out);
        }
      }
      if (v.condition) pj.files = [...pj.files, 'bundler.js'];
      pj.description = `${pj.description} [prototype ${name}: ${v.about}]`;
      writeFileSync(path.join(copy, 'package.json'), JSON.stringify(pj, null, 2) + '\n');
    }
    const bytes = Object.fromEntries(Object.entries(entries).map(([k, rel]) => [k, packageBytes(copy, rel)]));
    if (name === 'stock') return { ...stock, bytes };
    rmSync(dir, { recursive: true, force: true });
    const result = { ...(await pack(copy, dir)), bytes };
    writeFileSync(meta, JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
