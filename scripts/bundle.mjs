// Bundles js/ into pkg/: for each of the wasm modules, every runtime
// form of every subpath entry (js/entries/*.js), with esbuild's code
// splitting, so the subpaths of one module share one chunk (the glue, the
// loader, the calculator): a page importing two of them loads the module
// once. Except the small module's browser form: each of its entries is one
// file (fewer fetches in a row before the first call). Run by scripts/build.sh after the wasm modules are built:
//
//   node scripts/bundle.mjs [--only small|gate|queue|js|full|<entry> | --shipped] [--dev]
//
// --dev: unminified, with the sources' names (for debugging and test:js).
import { build as esbuild } from 'esbuild';
import { minify } from 'terser';
import { readFileSync, writeFileSync, readdirSync, rmSync, mkdirSync, copyFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const STAGE = join(ROOT, 'target/js');
const PKG = join(ROOT, 'pkg');

/**
 * The modules: their wasm file in pkg/, the crate's features that build it,
 * its opt-level and their subpath entries (pkg/ folder → source). Each
 * carries the calculator; a page pays for the gate or the queue only when it
 * imports them (one importing both downloads the calculator twice, ~2.5 KB
 * gzip). The opt-level is the one whose module gzips smallest after wasm-opt
 * -Oz (measured: small "s" 2 694 B, "z" 2 850; gate "s" 7 422, "z" 7 507;
 * queue "z" 5 128, "s" 5 331): "z" outlines code into shapes gzip matches
 * worse, except in the queue.
 */
export const MODULES = {
  small: {
    wasm: 'wasm_backoff_bg.wasm',
    features: 'bare',
    opt: 's',
    entries: { '.': 'main', backoff: 'backoff', query: 'query', undici: 'undici', stream: 'stream', sse: 'sse', ws: 'ws' },
  },
  // (pass: wasm-opt's first pass, -O3 unless named: the gate's module gzips 16 B smaller after -O2)
  gate: { wasm: 'wasm_backoff_gate.wasm', features: 'bare,gate', opt: 's', pass: '-O2', entries: { gate: 'gate' } },
  queue: {
    wasm: 'wasm_backoff_queue.wasm',
    features: 'bare,queue',
    opt: 'z',
    entries: { stats: 'stats', queue: 'queue', outbox: 'outbox' },
  },
  // Plain JavaScript: no module to load.
  js: {
    wasm: '',
    features: '',
    opt: '',
    entries: {
      budget: 'budget',
      otel: 'otel',
      hedge: 'hedge',
      failover: 'failover',
      auth: 'auth',
      dedupe: 'dedupe',
      cache: 'cache',
      quota: 'quota',
      testing: 'testing',
    },
  },
  // Everything, not shipped (no entries): the module the js/ sources run on
  // in Node (js/load/dev.js: tests/engine/ …), built into target/.
  full: { wasm: 'wasm_backoff_full.wasm', features: 'bare,full', opt: 'z', entries: {} },
};

/** The runtime forms: the loader each uses and the file name of its entries. */
const FORMS = {
  browser: { load: 'browser', file: 'index', ext: '.js' },
  node: { load: 'node', file: 'node', ext: '.mjs' },
  workerd: { load: 'workerd', file: 'workerd', ext: '.js' },
  bundler: { load: 'inline', file: 'bundler', ext: '.js' },
};

/**
 * Resolves the loader's `#…` imports for one module and form; `dir` is the
 * output file's way to pkg/ ('./', or '../' from a subpath's folder).
 */
export function boundary(mod, form, dir = './') {
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
      b.onResolve({ filter: /^#wasm$/ }, () => ({ path: `${dir}${name}`, external: true }));
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

/**
 * Terser's output for each input it was given in this build: the plain-JavaScript entries are the same
 * file in every form (27 of the 101 files, 1.3 s of terser's 8.3).
 * @type {Map<string, string>}
 */
const minified = new Map();

/**
 * esbuild with `options`, then (unless `dev`) terser over each file it
 * wrote: esbuild minifies fast, terser's compressor and mangler find more
 * (two passes; its safe transforms only): measured, the main entry's
 * browser file 8,801 -> 8,466 B gzip -9, every other entry a few percent.
 * @param {import('esbuild').BuildOptions} options
 * @param {boolean} dev
 */
async function build(options, dev) {
  const r = await esbuild({ ...options, metafile: true });
  if (dev) return r;
  for (const out of Object.keys(/** @type {any} */ (r.metafile).outputs)) {
    const file = join(ROOT, out);
    const code = readFileSync(file, 'utf8');
    let min = minified.get(code);
    if (min === undefined)
      minified.set(code, (min = /** @type {string} */ ((await minify(code, { module: true, compress: { passes: 2 } })).code)));
    writeFileSync(file, min);
  }
  return r;
}

export async function bundle(mod, { dev = false } = {}) {
  const { entries } = MODULES[mod];
  if (Object.keys(entries).length === 0) return;
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
      // (@opentelemetry/api: the peer dependency of wasm-backoff/otel, never bundled)
      external: ['node:fs', 'cloudflare:workers', '@opentelemetry/api'],
      plugins: [boundary(mod, form)],
      logLevel: 'warning',
    };
    // (the .wasm is in pkg/: named from the file that loads it)
    const dirOf = (/** @type {string} */ out) => (out.includes('/') ? '../' : './');
    // One file per entry (then the .wasm), the loader in it: so the .wasm
    // is named from the entry's folder. Every browser entry is one file: a
    // chain of two fetches, not three, to the first call (in a fresh page
    // each request in a row costs several ms: bench/RESULTS.md §2), and
    // smaller alone (`/stats` 7,140 B gzip against 7,813 with a shared chunk,
    // `/queue` 12,830 against 13,440). Entries of one module then each carry
    // its calculator and loader, which a page importing two of them
    // downloads twice (~1.8 KB gzip); the other forms share a chunk.
    // `/query`, `/undici`, `/outbox` and `/otel` are one file in every form: split with the
    // other entries of their module, the code only they share would be a chunk of
    // its own, a file more for those entries. The plain-JavaScript entries
    // (`/budget`, `/otel`, `/hedge`, `/failover`, `/testing`) share only an option
    // reader: one file each in every form too.
    const one = entryPoints.length === 1 || form === 'browser' || !MODULES[mod].wasm;
    const alone = one ? entryPoints : entryPoints.filter((e) => /^(?:query|undici|outbox|otel)\//.test(e.out));
    for (const e of alone) {
      const dir = dirOf(e.out);
      const define = { WASM: JSON.stringify(`${dir}${MODULES[mod].wasm}`) };
      await build({ ...options, entryPoints: [e], define, plugins: [boundary(mod, form, dir)] }, dev);
    }
    const rest = entryPoints.filter((e) => !alone.includes(e));
    if (rest.length)
      await build({ ...options, entryPoints: rest, splitting: true, define: { WASM: JSON.stringify(`./${MODULES[mod].wasm}`) } }, dev);
  }
  for (const dir of Object.keys(entries)) {
    mkdirSync(join(PKG, dir), { recursive: true });
    copyFileSync(join(ROOT, 'js/node.cjs'), join(PKG, dir, 'node.cjs'));
  }
}

/** The modules `--only <name>` names (a module, or an entry: main, backoff, budget, gate, …); all without it. */
function modulesOf(args) {
  // (--shipped: the modules pkg/ ships, not `full`, which only the js/ sources' tests load)
  if (args.includes('--shipped')) return Object.keys(MODULES).filter((m) => m !== 'full');
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
  // scripts/build.sh asks which modules to build before building them: a line each, `name features wasm-file opt-level`.
  if (args.includes('--print-modules')) {
    for (const m of mods)
      if (MODULES[m].wasm) console.log(m, MODULES[m].features, MODULES[m].wasm, MODULES[m].opt, MODULES[m].pass ?? '-O3');
  } else {
    const dev = args.includes('--dev');
    for (const m of mods) await bundle(m, { dev });
    writeFileSync(join(STAGE, 'bundled'), mods.join(' ') + '\n');
  }
}
