// Issue #7, part B: the packed package in a fresh app, built by Vite, webpack 5,
// esbuild and Rollup (+ @rollup/plugin-node-resolve) with no plugin and no
// configuration, must run in headless Chromium: `new Backoff({preset:'flume'})
// .next()` is 250 and a fetch the scripted server fails once (503, then 200)
// is retried, the server seeing exactly 2 requests, with no page error, under
// the CSP the README promises (script-src 'self' 'wasm-unsafe-eval').
//
//   node --test tests/bundlers/                       the stock package (pkg/ as `npm pack` makes it)
//   WB_BUNDLERS=rollup,esbuild node --test tests/bundlers/
//   WB_BUNDLERS=all                                   adds Vite 6, webpack 5.82 and esbuild --target=es2020,
//                                                     whose defaults reject top-level await
//
// Needs a built pkg/ (bash scripts/build.sh) and Debian's /usr/bin/chromium;
// installs tests/bundlers' dev dependencies if missing. Fresh projects are
// cached in target/bundler-cache (by tarball sha256 and bundler versions), so
// a warm run only builds and runs. The matrix is printed at the end and
// written to target/bundler-cache/matrix.md.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startScripted } from '../server/scripted.mjs';
import {
  BUNDLERS,
  CACHE,
  ROOT,
  appSource,
  build,
  csp,
  distBytes,
  ensureTools,
  forgetInstalls,
  launch,
  pack,
  project,
  pruneCache,
  runPage,
  staticServer,
  toolVersions,
} from './harness.mjs';
import { VARIANTS, variantTarball } from './variants.mjs';

const pick = (env, all, dflt) => {
  const v = process.env[env];
  if (!v) return dflt;
  if (v === 'all') return all;
  const names = v.split(',').map((s) => s.trim());
  for (const n of names) if (!all.includes(n)) throw new Error(`${env}: unknown '${n}' (one of ${all.join(', ')})`);
  return names;
};
const variants = pick('WB_VARIANTS', Object.keys(VARIANTS), ['stock']);
const bundlers = pick(
  'WB_BUNDLERS',
  Object.keys(BUNDLERS),
  Object.keys(BUNDLERS).filter((b) => !BUNDLERS[b].optIn),
);

let srv, site, browser, stock, versions, versionsKey, tmp;
const rows = [];
const started = Date.now();

before(async () => {
  if (!existsSync(path.join(ROOT, 'pkg/index.js'))) throw new Error('pkg/ is not built: bash scripts/build.sh');
  await ensureTools();
  versions = toolVersions();
  versionsKey = createHash('sha256').update(JSON.stringify(versions)).digest('hex').slice(0, 12);
  tmp = mkdtempSync(path.join(os.tmpdir(), 'wb-bundlers-'));
  stock = await pack(path.join(ROOT, 'pkg'), tmp);
  srv = await startScripted();
  site = await staticServer();
  browser = await launch();
  // Every build starts now, two at a time, while earlier tests run their pages.
  for (const v of variants) for (const b of bundlers) prepare(v, b).catch(() => {});
});

after(async () => {
  await browser?.close();
  await site?.close();
  await srv?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  forgetInstalls();
  if (rows.length) report();
  pruneCache();
});

let n = 0;
for (const variant of variants) {
  for (const bundler of bundlers) {
    test(`${variant} × ${bundler}`, { timeout: 240_000 }, async () => {
      const row = { variant, bundler, pass: false, reason: '' };
      rows.push(row);
      try {
        await check(row);
      } catch (e) {
        row.reason ||= `harness: ${String(e.message).split('\n')[0]}`;
        throw e;
      }
    });
  }
}

const memo = new Map();
const once = (key, fn) => (memo.has(key) ? memo.get(key) : (memo.set(key, fn()), memo.get(key)));
let running = 0;
const waiting = [];
async function limited(fn, max = 2) {
  while (running >= max) await new Promise((r) => waiting.push(r));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** The variant's tarball, its installed project and the bundler's build (memoised, two builds at a time). */
function prepare(variant, bundler) {
  return once(`${variant}\0${bundler}`, async () => {
    const tarball = await once(variant, () => variantTarball(variant, stock));
    return limited(async () => {
      const { dir, cached } = await project(bundler, tarball, versionsKey, '');
      return { tarball, cached, b: await build(bundler, dir, appSource()) };
    });
  });
}

/** Builds (or takes the build of) one (package, bundler) pair and runs it, filling in `row` for the matrix. */
async function check(row) {
  const { variant, bundler } = row;
  const t0 = Date.now();
  const { tarball, cached, b } = await prepare(variant, bundler);
  row.packageBytes = tarball.bytes['.'];
  row.cached = cached;
  row.files = b.files;
  if (!b.ok) {
    row.reason = `build fails: ${firstError(b.out)}`;
    assert.fail(`${bundler} could not build the app:\n${b.out.slice(-4000)}`);
  }
  row.bytes = distBytes(b.dist, b.files);

  const route = `/flaky/${++n}`;
  srv.script(route, [{ status: 503 }, { status: 200, body: 'ok' }]);
  const target = srv.url + route;
  const r = await runPage(browser, site, b.dist, target, csp(srv.url));
  const got = {
    next: r.result?.next,
    status: r.result?.status,
    body: r.result?.body,
    error: r.result?.error,
    requests: srv.count(route),
    problems: r.problems,
  };
  const want = { next: 250, status: 200, body: 'ok', error: undefined, requests: 2, problems: [] };
  row.ms = Date.now() - t0;
  try {
    assert.deepEqual(got, want);
    row.pass = true;
  } catch (e) {
    // Same page without the CSP: does the policy cause the failure?
    const route2 = `/flaky/${++n}`;
    srv.script(route2, [{ status: 503 }, { status: 200, body: 'ok' }]);
    const noCsp = await runPage(browser, site, b.dist, srv.url + route2, null);
    const passesWithoutCsp =
      noCsp.result?.next === 250 && noCsp.result?.status === 200 && noCsp.problems.length === 0 && srv.count(route2) === 2;
    row.reason = diagnose(r, got, b.files) + (passesWithoutCsp ? ' (passes WITHOUT the CSP)' : '');
    e.message =
      `${variant} × ${bundler}: ${row.reason}\n` +
      `dist/: ${b.files.join(', ')}\n404s: ${r.misses.join(', ') || 'none'}\n` +
      `without the CSP: ${passesWithoutCsp ? 'passes' : 'fails too'}\n${e.message}`;
    throw e;
  }
}

function firstError(out) {
  const line = out.split('\n').find((l) => /error|Error|ERROR|✘/.test(l)) ?? out.trim().split('\n')[0] ?? '';
  return line.trim().slice(0, 160);
}

/** One short reason for the matrix. */
function diagnose(r, got, files) {
  const missedWasm = r.misses.find((m) => m.endsWith('.wasm'));
  if (missedWasm) {
    const emitted = files.some((f) => f.endsWith('.wasm'));
    return `the page fetches ${missedWasm} (404): the bundler ${emitted ? 'emitted the .wasm elsewhere' : 'did not emit the .wasm'}`;
  }
  const pe = r.problems.find((p) => p.startsWith('pageerror'));
  if (pe) return pe.slice(0, 200);
  if (got.error) return `app caught: ${got.error.split('\n')[0].slice(0, 200)}`;
  if (r.problems.length) return r.problems[0].slice(0, 200);
  return `result ${JSON.stringify(r.result)}; server saw ${got.requests} requests`;
}

function report() {
  const cols = bundlers;
  const lines = [];
  lines.push(
    `tools: ${Object.entries(versions ?? {})
      .map(([k, v]) => `${k}@${v}`)
      .join(', ')}; stock tarball sha256 ${stock?.sha256.slice(0, 16)}`,
  );
  lines.push('');
  lines.push(`| package | ${cols.join(' | ')} |`);
  lines.push(`|---|${cols.map(() => '---').join('|')}|`);
  for (const v of variants) {
    const cells = cols.map((c) => {
      const row = rows.find((x) => x.variant === v && x.bundler === c);
      if (!row) return '–';
      return row.pass ? `pass (${row.bytes.totalGz} B gz)` : `FAIL: ${row.reason}`;
    });
    lines.push(`| ${v} | ${cells.join(' | ')} |`);
  }
  lines.push('');
  lines.push('Bytes a browser downloads from the unbundled package (entry the bundlers resolve for `.`; GNU gzip -9 -n):');
  lines.push('');
  lines.push('| package | entry | files (entry, chunks, wasm) | total gz |');
  lines.push('|---|---|---:|---:|');
  for (const v of variants) {
    const row = rows.find((x) => x.variant === v && x.packageBytes);
    if (!row) continue;
    const b = row.packageBytes;
    lines.push(`| ${v} | ${b.entry} | ${b.files} | ${b.totalGz} |`);
  }
  lines.push('');
  lines.push('Bundled app output (everything in dist/ but index.html; js gz + wasm gz):');
  lines.push('');
  lines.push(`| package | ${cols.join(' | ')} |`);
  lines.push(`|---|${cols.map(() => '---:').join('|')}|`);
  for (const v of variants) {
    const cells = cols.map((c) => {
      const row = rows.find((x) => x.variant === v && x.bundler === c);
      return row?.bytes ? `${row.bytes.jsGz} + ${row.bytes.wasmGz} = ${row.bytes.totalGz}` : '–';
    });
    lines.push(`| ${v} | ${cells.join(' | ')} |`);
  }
  lines.push('');
  const fresh = rows.filter((r) => r.cached === false).length;
  lines.push(`${rows.length} runs, ${fresh} fresh project installs, ${((Date.now() - started) / 1000).toFixed(1)} s in this file`);
  const text = lines.join('\n');
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(path.join(CACHE, 'matrix.md'), text + '\n');
  console.log('\n' + text);
}
