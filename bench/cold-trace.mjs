// 2 (notes). Where the Chromium cold start of `fetchWithBackoff` goes, step
// by step, and how other loader designs would fare (issue 23): the same
// fresh-context method as cold.mjs (its server, interleaved rounds), with
// performance marks in instrumented builds of the entry and Resource Timing
// for every fetch.
//
//   node bench/cold-trace.mjs [rounds=25] [--only=name,name]
//   node bench/cold-trace.mjs --probe [rounds=25]
//
// --probe: in-page costs, each in a fresh context (the first WebAssembly
// compile of the context, a tiny module's, the real one's sync and async;
// the base64 decodes).
// Needs a built pkg/ (bash scripts/build.sh). Contenders:
// - p-retry, bare fetch, /budget: references (p-retry's esbuild bundle, as in cold.mjs).
// - `pkg`: pkg/index.js as built, unbundled; `pkg bundled`: the esbuild bundle
//   of the package (the `module` condition), as cold.mjs measures them.
// - The designs: js/entries/main.js bundled as pkg/index.js is, with another
//   loader (LOADERS below, each with marks L0 … Linst), served unbundled
//   (`<design>`) or bundled with the app (`<design> bundled`).
// Every bundle gets marks at its first and last statement (E0, E1); the
// page marks the first call and the moment `fetch` is called for /ok.
// Prints the step table (medians, ms) and the gzip -9 of what each downloads.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { build } from 'esbuild';
import { boundary } from '../scripts/bundle.mjs';
import { startServer } from './cold.mjs';
import { BENCH, PKG, ROOT, median } from './peers.mjs';

const args = process.argv.slice(2);
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 25);
const only = args
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const WASM = join(PKG, 'wasm_backoff_bg.wasm');

// The decode both inline loaders use (js/load/inline.js's).
const DECODE = `const decode = (s) => { if (Uint8Array.fromBase64) return Uint8Array.fromBase64(s); const b = atob(s), u = new Uint8Array(b.length); for (let i = 0; i < b.length; i++) u[i] = b.charCodeAt(i); return u; };`;
/** Loader designs (#load), each exporting `w`; `I` is js/load/instantiate.js's. */
const LOADERS = {
  // Today's browser.js: compileStreaming of a second fetch, under top-level await.
  streaming: `const r = fetch(new URL(WASM, import.meta.url)); r.then(() => performance.mark('Lresp'));
const m = await WebAssembly.compileStreaming(r); performance.mark('Lcompiled');`,
  // The bytes first, then a synchronous compile.
  'fetch+sync': `const r = await fetch(new URL(WASM, import.meta.url)); performance.mark('Lresp');
const b = await r.arrayBuffer(); performance.mark('Lbody');
const m = new WebAssembly.Module(b); performance.mark('Lcompiled');`,
  // The bytes, then WebAssembly.compile (off the main thread).
  'fetch+async': `const r = await fetch(new URL(WASM, import.meta.url)); performance.mark('Lresp');
const b = await r.arrayBuffer(); performance.mark('Lbody');
const m = await WebAssembly.compile(b); performance.mark('Lcompiled');`,
  // The .wasm inlined as base64 (inline.js's before issue 23), decoded with the atob loop.
  'inline (atob loop)': `import s from '#wasm-base64';
const b = atob(s), u = new Uint8Array(b.length); for (let i = 0; i < b.length; i++) u[i] = b.charCodeAt(i); performance.mark('Lbody');
const m = new WebAssembly.Module(u); performance.mark('Lcompiled');`,
  // The same, decoded with Uint8Array.fromBase64 where the browser has it.
  inline: `import s from '#wasm-base64'; ${DECODE}
const u = decode(s); performance.mark('Lbody');
const m = new WebAssembly.Module(u); performance.mark('Lcompiled');`,
  // Inline base64, compiled with WebAssembly.compile.
  'inline async': `import s from '#wasm-base64'; ${DECODE}
const u = decode(s); performance.mark('Lbody');
const m = await WebAssembly.compile(u); performance.mark('Lcompiled');`,
  // The .wasm inlined in hex (js/load/inline.js's since issue 23), Uint8Array.fromHex.
  'inline hex': `import s from '#wasm-hex';
const u = Uint8Array.fromHex(s); performance.mark('Lbody');
const m = new WebAssembly.Module(u); performance.mark('Lcompiled');`,
  // Inlined deflate-raw + base64 (smaller), inflated by DecompressionStream.
  'inline deflate': `import s from '#wasm-deflate'; ${DECODE}
const b = await new Response(new Blob([decode(s)]).stream().pipeThrough(new DecompressionStream('deflate-raw'))).arrayBuffer(); performance.mark('Lbody');
const m = new WebAssembly.Module(b); performance.mark('Lcompiled');`,
};

/** In-page probes (fresh context each): ms per step. */
const PROBES = {
  // The first WebAssembly compile of a context: an empty module, then the real one.
  'compile: empty module, first in the context': async (b64) => {
    const u = Uint8Array.fromBase64(b64);
    const t = performance.now();
    new WebAssembly.Module(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]));
    const t1 = performance.now();
    new WebAssembly.Module(u);
    return { empty: t1 - t, 'real after it': performance.now() - t1 };
  },
  'compile: real module, sync (new WebAssembly.Module)': async (b64) => {
    const u = Uint8Array.fromBase64(b64);
    const t = performance.now();
    const m = new WebAssembly.Module(u);
    const t1 = performance.now();
    new WebAssembly.Instance(m);
    return { compile: t1 - t, instantiate: performance.now() - t1 };
  },
  'compile: real module, async (WebAssembly.compile)': async (b64) => {
    const u = Uint8Array.fromBase64(b64);
    const t = performance.now();
    await WebAssembly.compile(u);
    return { compile: performance.now() - t };
  },
  'decode base64': async (b64) => {
    const t = performance.now();
    const b = atob(b64);
    const u = new Uint8Array(b.length);
    for (let i = 0; i < b.length; i++) u[i] = b.charCodeAt(i);
    const t1 = performance.now();
    Uint8Array.fromBase64(b64);
    return { 'atob loop': t1 - t, fromBase64: performance.now() - t1 };
  },
};
if (args.includes('--probe')) {
  const { launch } = await import(join(ROOT, 'tests/support/browser.mjs'));
  const server = await startServer(mkdtempSync(join(tmpdir(), 'cold-probe-')));
  const browser = await launch();
  const b64 = readFileSync(WASM).toString('base64');
  const got = new Map();
  try {
    for (let r = 0; r < rounds; r++) {
      for (const [name, probe] of Object.entries(PROBES)) {
        const context = await browser.newContext();
        const page = await context.newPage();
        await page.goto(`http://127.0.0.1:${server.address().port}/`);
        for (const [k, v] of Object.entries(await page.evaluate(probe, b64)))
          got.set(`${name}: ${k}`, [...(got.get(`${name}: ${k}`) ?? []), v]);
        await context.close();
      }
    }
  } finally {
    await browser.close();
    server.close();
  }
  console.log(`| probe (${rounds} fresh contexts; timer resolution 0.1 ms) | median ms | min ms |\n|---|---:|---:|`);
  for (const [k, xs] of got) console.log(`| ${k} | ${median(xs).toFixed(1)} | ${Math.min(...xs).toFixed(1)} |`);
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'cold-trace-'));
const gzip = (file) => execFileSync('gzip', ['-9', '-n', '-c', file], { maxBuffer: 64 << 20 }).length;
const marks = { banner: { js: "performance.mark('E0');" }, footer: { js: "performance.mark('E1');" } };
const slug = (n) => n.replace(/[^a-z0-9]+/gi, '_');
const FIRST = `export async function first(url) { return (await fetchWithBackoff(url)).text(); }`;

/** Builds one loader design as pkg/index.js is built (minified, one file, WASM a literal). */
async function design(name) {
  const out = join(dir, 'v', `${slug(name)}.js`);
  const loader = join(dir, `load-${slug(name)}.js`);
  const inst = join(ROOT, 'js/load/instantiate.js');
  writeFileSync(
    loader,
    `import { instantiate } from ${JSON.stringify(inst)};\nperformance.mark('L0');\n${LOADERS[name]}\nexport const w = instantiate(m);\nperformance.mark('Linst');\n`,
  );
  const deflated = JSON.stringify(deflateRawSync(readFileSync(WASM), { level: 9 }).toString('base64'));
  const base64 = JSON.stringify(readFileSync(WASM).toString('base64'));
  await build({
    entryPoints: [join(ROOT, 'js/entries/main.js')],
    outfile: out,
    bundle: true,
    format: 'esm',
    target: 'es2022',
    platform: 'neutral',
    minify: true,
    ...marks,
    define: { WASM: JSON.stringify('/pkg/wasm_backoff_bg.wasm') },
    logLevel: 'warning',
    plugins: [
      {
        name: 'design',
        setup(b) {
          b.onResolve({ filter: /^#load$/ }, () => ({ path: loader }));
          b.onResolve({ filter: /^#wasm-base64$/ }, () => ({ path: 'b', namespace: 'base64' }));
          b.onLoad({ filter: /.*/, namespace: 'base64' }, () => ({ contents: `export default ${base64};`, loader: 'js' }));
          b.onResolve({ filter: /^#wasm-deflate$/ }, () => ({ path: 'z', namespace: 'deflate' }));
          b.onLoad({ filter: /.*/, namespace: 'deflate' }, () => ({ contents: `export default ${deflated};`, loader: 'js' }));
        },
      },
      boundary('small', 'browser'),
    ],
  });
  const fetchesWasm = !LOADERS[name].includes('#wasm-');
  return { file: out, gzip: gzip(out) + (fetchesWasm ? gzip(WASM) : 0) };
}

/** An esbuild bundle of `source` (resolved from bench/) with the E0/E1 marks: an app's one file. */
async function appBundle(name, source) {
  const out = join(dir, 'lib', `${slug(name)}.js`);
  await build({
    stdin: { contents: source, resolveDir: BENCH },
    bundle: true,
    format: 'esm',
    minify: true,
    outfile: out,
    ...marks,
    logLevel: 'warning',
  });
  return out;
}

/** The contenders: name → { lib (the module the page imports, in /lib/), gzip }. */
const contenders = new Map();
const lib = (name, src, gz) => {
  writeFileSync(join(dir, 'lib', `${slug(name)}.js`), src);
  contenders.set(name, { gzip: gz });
};
execFileSync('mkdir', ['-p', join(dir, 'lib'), join(dir, 'v')]);
contenders.set('p-retry', {
  gzip: gzip(
    await appBundle(
      'p-retry',
      `import pRetry from 'p-retry'; export async function first(url) { return (await pRetry(() => fetch(url))).text(); }`,
    ),
  ),
});
lib('bare fetch', 'export async function first(url) { return (await fetch(url)).text(); }', 0);
lib(
  'budget',
  `import { RetryBudget } from '/pkg/budget/index.js'; export async function first() { return new RetryBudget().withdraw(); }`,
  gzip(join(PKG, 'budget/index.js')),
);
lib('pkg', `import { fetchWithBackoff } from '/pkg/index.js'; ${FIRST}`, gzip(join(PKG, 'index.js')) + gzip(WASM));
contenders.set('pkg bundled', { gzip: gzip(await appBundle('pkg bundled', `import { fetchWithBackoff } from 'wasm-backoff'; ${FIRST}`)) });
for (const name of Object.keys(LOADERS)) {
  const d = await design(name);
  lib(name, `import { fetchWithBackoff } from '/v/${slug(name)}.js'; ${FIRST}`, d.gzip);
  if (name.startsWith('inline')) {
    const g = gzip(await appBundle(`${name} bundled`, `import { fetchWithBackoff } from ${JSON.stringify(d.file)}; ${FIRST}`));
    contenders.set(`${name} bundled`, { gzip: g });
  }
}
const names = [...contenders.keys()].filter((n) => !only || only.includes(n) || n === 'p-retry');

const server = await startServer(join(dir, 'lib'), { '/v/': join(dir, 'v') });
const base = `http://127.0.0.1:${server.address().port}`;
// TCP connections the server accepts: a request on a new connection would show here.
let connections = 0;
server.on('connection', () => connections++);
const { launch } = await import(join(ROOT, 'tests/support/browser.mjs'));
const browser = await launch();
const version = browser.version();
/** name → per-round samples */
const runs = new Map(names.map((n) => [n, []]));
try {
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + r) % names.length];
      const context = await browser.newContext();
      try {
        await context.addInitScript(() => {
          const f = globalThis.fetch;
          globalThis.fetch = function (input, init) {
            if (String(input).endsWith('/ok')) performance.mark('okcall');
            return f.call(this, input, init);
          };
        });
        const page = await context.newPage();
        await page.goto(`${base}/`);
        const c0 = connections;
        const s = await page.evaluate(
          async ([spec, url]) => {
            const t0 = performance.now();
            const { first } = await import(spec);
            const imported = performance.now() - t0;
            performance.mark('call');
            await first(url);
            const total = performance.now() - t0;
            const rt = performance.getEntriesByType('resource').map((e) => ({ path: new URL(e.name).pathname, end: e.responseEnd - t0 }));
            const m = Object.fromEntries(performance.getEntriesByType('mark').map((e) => [e.name, e.startTime - t0]));
            return { total, imported, rt, m };
          },
          [`/lib/${slug(name)}.js`, `${base}/ok`],
        );
        runs.get(name).push({ round: r, ...s, connections: connections - c0 });
      } finally {
        await context.close();
      }
    }
    process.stderr.write(`[cold-trace] round ${r + 1}/${rounds}\n`);
  }
} finally {
  await browser.close();
  server.close();
}

/** One sample's steps (ms); NaN where a step does not apply. */
function steps({ rt, m, imported, total }) {
  const end = (re) => rt.find((e) => re.test(e.path))?.end ?? NaN;
  const libEnd = end(/^\/lib\//);
  const entryEnd = end(/^\/(pkg|v)\/.*\.js$/);
  const lastJs = Number.isNaN(entryEnd) ? libEnd : entryEnd;
  const loader = m.Linst - m.L0;
  const prev = (...ks) => ks.map((k) => m[k]).find((v) => v !== undefined);
  return {
    'the app module fetched (first request of the context)': libEnd,
    'the entry fetched (a second module in a row)': entryEnd - libEnd,
    'parse + link, to the first statement': m.E0 - lastJs,
    'module code other than the loader': m.E1 - m.E0 - (loader || 0),
    'loader: .wasm fetched (a third request in a row)': m.Lresp - m.L0,
    'loader: bytes (arrayBuffer / base64 decode / inflate)': m.Lbody - prev('Lresp', 'L0'),
    'loader: compile (streaming: after the response)': m.Lcompiled - prev('Lbody', 'Lresp'),
    'loader: instantiate': m.Linst - m.Lcompiled,
    'import() settles': imported - (m.E1 ?? lastJs),
    'first call until fetch(/ok) is called': m.okcall - m.call,
    'fetch(/ok) until its response ends': end(/^\/ok$/) - m.okcall,
    'body read, promise settles': total - (end(/^\/ok$/) || imported),
  };
}
const med = (xs) => (xs.some(Number.isFinite) ? median(xs.filter(Number.isFinite)) : NaN);
const f1 = (v) => (Number.isFinite(v) ? v.toFixed(1) : '');
const ref = runs.get('p-retry');
const lines = [`| step (median ms) | ${names.join(' | ')} |`, `|---|${names.map(() => '---:').join('|')}|`];
const table = new Map(names.map((n) => [n, runs.get(n).map(steps)]));
for (const k of Object.keys(table.get(names[0])[0]))
  lines.push(`| ${k} | ${names.map((n) => f1(med(table.get(n).map((s) => s[k])))).join(' | ')} |`);
lines.push(`| **total** | ${names.map((n) => `**${f1(med(runs.get(n).map((s) => s.total)))}**`).join(' | ')} |`);
// Ratio to p-retry: of the medians, and the median of each round's own ratio (steadier under load).
lines.push(
  `| ratio to p-retry | ${names.map((n) => (med(runs.get(n).map((s) => s.total)) / med(ref.map((s) => s.total))).toFixed(2)).join(' | ')} |`,
);
lines.push(
  `| median of per-round ratios | ${names.map((n) => med(runs.get(n).map((s, i) => s.total / ref[i].total)).toFixed(2)).join(' | ')} |`,
);
lines.push(
  `| new TCP connections after the page loaded (max) | ${names.map((n) => Math.max(...runs.get(n).map((s) => s.connections))).join(' | ')} |`,
);
lines.push(`| gzip -9 B downloaded (ours: entry + .wasm) | ${names.map((n) => contenders.get(n).gzip || '').join(' | ')} |`);
console.log(`Chromium ${version}, ${rounds} rounds\n${lines.join('\n')}`);
writeFileSync(join(dir, 'samples.json'), JSON.stringify(Object.fromEntries(runs)));
console.error(`[cold-trace] samples: ${join(dir, 'samples.json')}`);
