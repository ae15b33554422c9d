// Bundles js/ into pkg/: for each of the two wasm modules, every runtime
// form of every subpath entry (js/entries/*.js), with esbuild's code
// splitting, so the subpaths of one module share one chunk (the glue, the
// loader, the calculator): a page importing two of them loads the module
// once. Except the small module's browser form: each of its entries is one
// file (fewer fetches in a row before the first call). Run by scripts/build.sh after the wasm modules are built:
//
//   node scripts/bundle.mjs [--only small|full|<entry>] [--dev]
//
// --dev: unminified, with the sources' names (for debugging and test:js).
import { build } from 'esbuild';
import { readFileSync, writeFileSync, readdirSync, rmSync, mkdirSync, copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAGE = join(ROOT, 'target/js');
const PKG = join(ROOT, 'pkg');

/** The two modules: their wasm file in pkg/ and their subpath entries (pkg/ folder → source). */
export const MODULES = {
  small: { wasm: 'wasm_backoff_bg.wasm', entries: { '.': 'main', backoff: 'backoff' } },
  full: { wasm: 'wasm_backoff_full.wasm', entries: { gate: 'gate', stats: 'stats', queue: 'queue' } },
  // Plain JavaScript: no module to load.
  js: { wasm: '', entries: { budget: 'budget' } },
};

/** The runtime forms: the loader each uses and the file name of its entries. */
const FORMS = {
  browser: { load: 'browser', file: 'index', ext: '.js' },
  node: { load: 'node', file: 'node', ext: '.mjs' },
  workerd: { load: 'workerd', file: 'workerd', ext: '.js' },
  bundler: { load: 'inline', file: 'bundler', ext: '.js' },
};

/** Resolves the loader's `#…` imports for one module and form. */
export function boundary(mod, form) {
  const name = MODULES[mod].wasm;
  return {
    name: 'wasm-backoff-boundary',
    setup(b) {
      b.onResolve({ filter: /^#load$/ }, () => ({ path: join(ROOT, 'js/load', `${FORMS[form].load}.js`) }));
      // The queue's Durable Object classes: real in workerd, stand-ins elsewhere (nothing for browsers to download).
      b.onResolve({ filter: /^#edge$/ }, () => ({
        path: join(ROOT, 'js/queue', form === 'workerd' ? 'durable.js' : 'durable-elsewhere.js'),
      }));
      // The fleet's shared gate (GateObject, sharedGate): in workerd's /gate only; nothing elsewhere.
      b.onResolve({ filter: /^#fleet$/ }, () => ({
        path: join(ROOT, 'js/fleet', form === 'workerd' ? 'workerd.js' : 'elsewhere.js'),
      }));
      b.onResolve({ filter: /^#wasm$/ }, () => ({ path: `./${name}`, external: true }));
      // The bytes in hex (js/load/inline.js): two chars per byte keep the
      // binary's repeats byte-aligned, so gzip finds them; base64's groups
      // of three bytes hide them. gzip -9, small module 3.2 KB against 3.8,
      // full 10.8 against 13.1.
      b.onResolve({ filter: /^#wasm-hex$/ }, () => ({ path: 'hex', namespace: 'wasm-hex' }));
      b.onLoad({ filter: /.*/, namespace: 'wasm-hex' }, () => ({
        contents: `export default ${JSON.stringify(readFileSync(join(PKG, name)).toString('hex'))};`,
        loader: 'js',
      }));
    },
  };
}

export async function bundle(mod, { dev = false } = {}) {
  const { entries } = MODULES[mod];
  // The previous build's chunks of this module (content-hashed names).
  for (const f of readdirSync(PKG)) if (f.startsWith(`${mod}-`)) rmSync(join(PKG, f));
  for (const [form, { file, ext }] of Object.entries(FORMS)) {
    const entryPoints = Object.entries(entries).map(([dir, src]) => ({
      in: join(ROOT, 'js/entries', `${src}.js`),
      out: dir === '.' ? file : `${dir}/${file}`,
    }));
    const options = {
      outdir: PKG,
      bundle: true,
      format: 'esm',
      target: 'es2022',
      platform: 'neutral',
      minify: !dev,
      chunkNames: `${mod}-[hash]`,
      outExtension: { '.js': ext },
      external: ['node:fs', 'cloudflare:workers'],
      plugins: [boundary(mod, form)],
      logLevel: 'warning',
    };
    // (the .wasm is in pkg/: named from the file that loads it)
    const wasmFrom = (/** @type {string} */ out) => JSON.stringify(`${out.includes('/') ? '../' : './'}${MODULES[mod].wasm}`);
    if (mod === 'small' && form === 'browser') {
      // A page's entry of the small module is one file (then the .wasm): a
      // chain of two fetches, not three, to the first call. Its two entries
      // (`wasm-backoff`, `/backoff`) then each carry the calculator, which
      // a page importing both downloads twice (~1.8 KB gzip); the other
      // forms, and the full module's subpaths (often used together), share
      // a chunk.
      for (const e of entryPoints) await build({ ...options, entryPoints: [e], define: { WASM: wasmFrom(e.out) } });
    } else {
      await build({ ...options, entryPoints, splitting: true, define: { WASM: JSON.stringify(`./${MODULES[mod].wasm}`) } });
    }
  }
  for (const dir of Object.keys(entries)) {
    mkdirSync(join(PKG, dir), { recursive: true });
    copyFileSync(join(ROOT, 'js/node.cjs'), join(PKG, dir, 'node.cjs'));
  }
}

/** The modules `--only <name>` names (a module, or an entry: main, backoff, budget, gate, …); all without it. */
function modulesOf(args) {
  if (!args.includes('--only')) return Object.keys(MODULES);
  const only = args[args.indexOf('--only') + 1];
  const mods = Object.keys(MODULES).filter((m) => m === only || only in MODULES[m].entries || (only === 'main' && m === 'small'));
  if (mods.length === 0) {
    const names = Object.entries(MODULES).flatMap(([m, { entries }]) => [m, ...Object.keys(entries).map((e) => (e === '.' ? 'main' : e))]);
    throw new Error(`--only takes one of ${names.join(', ')}, not ${only}`);
  }
  return mods;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const mods = modulesOf(args);
  // scripts/build.sh asks which modules to build before building them.
  if (args.includes('--print-modules')) {
    console.log(mods.join(' '));
  } else {
    const dev = args.includes('--dev');
    for (const m of mods) await bundle(m, { dev });
    writeFileSync(join(STAGE, 'bundled'), mods.join(' ') + '\n');
  }
}
