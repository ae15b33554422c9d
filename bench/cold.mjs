// 2. Cold start: from `import` to the end of the first usable call (peers.mjs
// says which call), in a fresh runtime per sample.
//
// - Node: a fresh `node` process per sample; inside it, performance.now()
//   just before the dynamic import() of the entry and just after `first()`
//   resolves (process start-up is not counted).
// - Chromium (Debian's, through playwright-core and tests/support/browser.mjs's
//   launch()): a fresh browser context (empty HTTP cache) and page per
//   sample; performance.now() in the page before the dynamic import() and
//   after `first()`. Peers are their esbuild bundles; ours are pkg/'s browser
//   entries, unbundled, with the .wasm fetched and compiled by the entry, as
//   served from a CDN. Files come from a small static server on 127.0.0.1
//   (no CSP, no compression, keep-alive).
//
// Fetch wrappers' first call is one GET of a local `ok` resource, so the
// "bare fetch" row (no library) is the floor they all share; in Node that
// includes loading undici, which Node does lazily on the first fetch.
// Samples are interleaved: each round runs every library once, in an order
// rotated by one per round.
import http from 'node:http';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH, PKG, ROOT, libraries, median, fmt } from './peers.mjs';

export const COLD_REFERENCE = 'wasm-backoff';

const BARE = {
  name: 'bare fetch (no library)',
  what: '`fetch(url).text()`',
  entry: 'export async function first(url) { return (await fetch(url)).text(); }',
};

const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html' };

/** A static server: / (empty page), /ok, /pkg/** (pkg/), /lib/<file> (from `libDir`), and `extra`'s folders (URL prefix → folder). */
export function startServer(libDir, extra = {}) {
  const server = http.createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    if (path === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>cold start</title>');
    if (path === '/ok') return res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end('ok');
    let file;
    const dir = Object.keys(extra).find((d) => path.startsWith(d));
    if (dir) file = join(extra[dir], path.slice(dir.length));
    else if (path.startsWith('/pkg/')) file = join(PKG, path.slice(5));
    else if (path.startsWith('/lib/')) file = join(libDir, path.slice(5));
    if (!file || file.includes('..')) return res.writeHead(404).end();
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function nodeSample(file, url) {
  const code = `const t0 = performance.now(); const { first } = await import(${JSON.stringify(file)}); await first(${JSON.stringify(url)}); process.stdout.write(String(performance.now() - t0)); process.exit(0);`;
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: BENCH, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('exit', (c) =>
      c === 0 && Number.isFinite(Number(out)) ? resolve(Number(out)) : reject(new Error(`cold-start sample ${file} exited ${c}: ${out}`)),
    );
  });
}

/** Runs `samples` rounds in Node and in Chromium; returns the markdown lines and Chromium's version. */
export async function coldSection({ samples = 15, browserSamples = samples, bundles, libDir, log = () => {} }) {
  const libs = [BARE, ...libraries().filter((l) => !l.sizeOnly)];
  // Node entries live under bench/node_modules/ so that bare specifiers resolve
  // from bench/ (peers) and the root (wasm-backoff, a file: link to pkg/).
  const nodeDir = join(BENCH, 'node_modules', '.bench-cold');
  mkdirSync(nodeDir, { recursive: true });
  const slug = (n) => n.replace(/[^a-z0-9]+/gi, '_');
  for (const lib of libs) {
    writeFileSync(join(nodeDir, `${slug(lib.name)}.mjs`), lib.entry);
    // Browser modules: peers bundled (size.mjs), ours rewritten to pkg/'s browser entries.
    const browserSrc =
      (lib.ours && !lib.bundled) || lib === BARE
        ? lib.entry.replace(/from 'wasm-backoff(\/\w+)?'/, (_, sub) => `from '/pkg${sub ?? ''}/index.js'`)
        : readFileSync(bundles.get(lib.name), 'utf8');
    writeFileSync(join(libDir, `${slug(lib.name)}.js`), browserSrc);
  }
  const server = await startServer(libDir);
  const base = `http://127.0.0.1:${server.address().port}`;
  const node = new Map(libs.map((l) => [l.name, []]));
  const chrome = new Map(libs.map((l) => [l.name, []]));
  let chromiumVersion = 'not run';
  const failures = new Map();
  const fail = (lib, e) => {
    failures.set(lib.name, (failures.get(lib.name) ?? 0) + 1);
    log(`[cold] ${lib.name} failed: ${String(e.message ?? e).split('\n')[0]}`);
    return NaN;
  };
  const med = (xs) => (xs.some(Number.isFinite) ? median(xs.filter(Number.isFinite)) : NaN);
  try {
    for (let r = 0; r < samples; r++) {
      for (let i = 0; i < libs.length; i++) {
        const lib = libs[(i + r) % libs.length];
        // A library that fails (say, an entry mid-rebuild) costs its row, not the section.
        node.get(lib.name).push(await nodeSample(join(nodeDir, `${slug(lib.name)}.mjs`), `${base}/ok`).catch((e) => fail(lib, e)));
      }
      log(`[cold] node round ${r + 1}/${samples}`);
    }
    const { launch } = await import(join(ROOT, 'tests/support/browser.mjs'));
    const browser = await launch();
    try {
      chromiumVersion = browser.version();
      for (let r = 0; r < browserSamples; r++) {
        for (let i = 0; i < libs.length; i++) {
          const lib = libs[(i + r) % libs.length];
          const context = await browser.newContext();
          try {
            const page = await context.newPage();
            await page.goto(`${base}/`);
            const ms = await page
              .evaluate(
                async ([spec, url]) => {
                  const t0 = performance.now();
                  const { first } = await import(spec);
                  await first(url);
                  return performance.now() - t0;
                },
                [`/lib/${slug(lib.name)}.js`, `${base}/ok`],
              )
              .catch((e) => fail(lib, e));
            chrome.get(lib.name).push(ms);
          } finally {
            await context.close();
          }
        }
        log(`[cold] chromium round ${r + 1}/${browserSamples}`);
      }
    } finally {
      await browser.close();
    }
  } finally {
    server.close();
    rmSync(nodeDir, { recursive: true, force: true });
  }
  const refN = med(node.get(COLD_REFERENCE));
  const refC = med(chrome.get(COLD_REFERENCE));
  const lines = [
    `| library | first usable call | Node median ms | Node ratio | Chromium median ms | Chromium ratio |`,
    '|---|---|---:|---:|---:|---:|',
    ...libs.map((l) => {
      const n = med(node.get(l.name)),
        c = med(chrome.get(l.name));
      const failed = failures.has(l.name) ? ` (${failures.get(l.name)} samples FAILED)` : '';
      return `| ${l.ours ? `**${l.name}**` : l.name}${failed} | ${l.what} | ${fmt(n, 1)} | ${fmt(n / refN)} | ${fmt(c, 1)} | ${fmt(c / refC)} |`;
    }),
    '',
    `Median over ${samples} fresh Node processes and ${browserSamples} fresh Chromium contexts per library, interleaved (each round runs every library once, order rotated per round). Ratio: to \`${COLD_REFERENCE}\` (its median). Fetch wrappers fetch a local \`ok\` over HTTP/1.1 from 127.0.0.1; the bare-fetch row is that floor (in Node it includes undici's lazy load). Our rows load the unbundled browser entry and compile the .wasm (Chromium: compileStreaming from the server; Node: the node.mjs entry, readFileSync + synchronous compile), except \`wasm-backoff (bundled with the app)\`, which like the peers is one esbuild bundle (the size section's). Peers in Chromium load their esbuild bundle. In a fresh Chromium context every module fetched in sequence costs several ms: the unbundled entry is a chain of two (the entry, one file, then the .wasm); the bundled row is the like-for-like comparison with the peers.`,
  ];
  return { lines, chromiumVersion };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { sizeSection } = await import('./size.mjs');
  const libDir = mkdtempSync(join(tmpdir(), 'bench-cold-'));
  const { bundles } = sizeSection({ dir: libDir });
  const n = Number(process.argv[2] ?? 5);
  const { lines, chromiumVersion } = await coldSection({ samples: n, bundles, libDir, log: (m) => console.error(m) });
  console.log(`Chromium ${chromiumVersion}\n` + lines.join('\n'));
}
