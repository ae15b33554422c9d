// The package the way users get it: `npm pack pkg/`, then `npm install
// ./wasm-backoff-x.y.z.tgz` into a fresh project, then the package imported BY
// NAME (or by its node_modules path in a browser) from that project in every
// runtime the README promises: Node 20 (ESM and require), Deno, Bun, workerd
// (bundled as wrangler does), a module Web Worker, a module Service Worker and
// a page under a strict CSP; and its types under `tsc --strict`.
//
//   node --test tests/install/          (needs a built pkg/: bash scripts/build.sh)
//
// The fresh project is cached under target/install-cache/<sha256 of the
// tarball>/ (WASM_BACKOFF_INSTALL_CACHE overrides the directory; the 3 most
// recently used are kept): a second run with an unchanged package skips
// `npm install`. The fixtures (tests/install/fixtures/ → the project root and
// www/, tests/install/types/ → types/) are copied into it on every run.
// Deno, Bun, miniflare, esbuild and playwright-core come from the root
// node_modules; TypeScript 5.9 and 7, @types/node and @cloudflare/workers-types
// from tests/install/package.json (`npm ci --prefix tests/install`, run by the
// types tests themselves when missing).
//
// Cold (nothing cached) ≈ 20–40 s, warm ≈ 18 s on 2 cores; a good part is tsc
// (14 programs: TypeScript's own lib files are not checked, the package's are;
// TypeScript 5.9's 7 in this process, TypeScript 7's as `tsc` processes).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startScripted } from '../server/scripted.mjs';
import { serve } from '../../scripts/serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
const PKG = path.join(ROOT, 'pkg');
const CACHE = path.resolve(process.env.WASM_BACKOFF_INSTALL_CACHE ?? path.join(ROOT, 'target', 'install-cache'));
const KEEP = 3; // cached projects kept (the newest ones)
const bin = (...p) => path.join(ROOT, 'node_modules', ...p);

// What the tarball must hold. Required: the main entry's files (and the
// small wasm module beside them) and the same five in the directory of every
// subpath entry of `exports` (./backoff, ./gate, …). Allowed besides:
// whatever package.json points at (exports, main, module, types) and the
// files those reference by a relative path (the shared chunks and the .wasm
// they load, node.cjs → node.mjs, a .d.ts → ../index.d.ts), README*/LICENSE*.
// Nothing else: no source maps, sources, tests or build leftovers.
const ENTRY_FILES = ['index.d.ts', 'index.js', 'node.cjs', 'node.mjs', 'workerd.js'];
function requiredFiles(pj) {
  const files = ['package.json', 'wasm_backoff_bg.wasm', ...ENTRY_FILES];
  for (const [key, target] of Object.entries(pj.exports ?? {})) {
    if (key === '.' || typeof target !== 'object') continue; // ./package.json, ./wasm_backoff_bg.wasm
    if (key.endsWith('/sync')) continue; // the bundler.js of an entry, already required
    files.push(...ENTRY_FILES.map((f) => `${key.slice(2)}/${f}`));
  }
  return files.sort();
}

/** [where, path] of every string package.json points at (exports conditions, main, module, types…). */
function packageTargets(pj) {
  const targets = [];
  const walk = (v, where) => {
    if (typeof v === 'string') targets.push([where, path.posix.normalize(v)]);
    else if (v && typeof v === 'object') for (const [k, w] of Object.entries(v)) walk(w, `${where}.${k}`);
  };
  walk(pj.exports, 'exports');
  for (const k of ['main', 'module', 'types', 'typings', 'browser']) if (pj[k] !== undefined) walk(pj[k], k);
  return targets;
}

/** Files reachable from package.json through relative references, read from the installed package `dir`. */
function reachableFiles(dir, pj) {
  const seen = new Set(['package.json']);
  const queue = packageTargets(pj).map(([, p]) => p);
  while (queue.length) {
    const f = queue.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    let text;
    try {
      text = readFileSync(path.join(dir, f), 'utf8');
    } catch {
      continue; // missing: reported by 'every path package.json points at is in the tarball'
    }
    const refs = f.endsWith('.d.ts')
      ? [...text.matchAll(/from\s+['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1].replace(/\.(m|c)?js$/, '.d.$1ts'))
      : /\.[mc]?js$/.test(f)
        ? [...text.matchAll(/(["'`])(\.{1,2}\/[^"'`\s]+?\.(?:m?js|cjs|wasm|json))\1/g)].map((m) => m[2])
        : [];
    for (const r of refs) queue.push(path.posix.join(path.posix.dirname(f), r));
  }
  return seen;
}
const ALWAYS_ALLOWED = /^(README|LICEN[CS]E|COPYING|NOTICE)[^/]*$/i;

// The policy of the browser pages (every response of the static server): the
// README's script-src, plus a connect-src that reaches the scripted server.
const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self' http://127.0.0.1:*";

/** Runs a command; resolves {stdout, stderr}, rejects with both in the message. */
function run(cmd, args, { cwd, env, timeout = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, env: { ...process.env, ...env }, timeout, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) {
        const how = err.killed ? `killed after ${timeout} ms` : `exit code ${err.code}`;
        reject(new Error(`${path.basename(cmd)} ${args.join(' ')} (${how})\n--- stdout\n${stdout}\n--- stderr\n${stderr}`));
      } else resolve({ stdout, stderr });
    });
  });
}

/** Rejects after `ms` if `promise` has not settled (so a hung runtime fails the test instead of the run). */
function within(ms, what, promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The last stdout line of a fixture script, parsed. */
const lastJson = (stdout) => JSON.parse(stdout.trim().split('\n').pop());

const ctx = {}; // filled by before(): pack, tarball, sha256, project, cold, srv

// ---- pack, install (or reuse), copy the fixtures, start the scripted server ----
before(async () => {
  for (const f of ['index.js', 'node.mjs', 'workerd.js', 'wasm_backoff_bg.wasm', 'backoff/index.js']) {
    if (!existsSync(path.join(PKG, f))) throw new Error(`pkg/${f} is missing: build the package first (bash scripts/build.sh)`);
  }
  const packDir = await fs.mkdtemp(path.join(os.tmpdir(), 'wasm-backoff-pack-'));
  ctx.packDir = packDir;
  const { stdout } = await run('npm', ['pack', PKG, '--json', '--pack-destination', packDir], { cwd: packDir });
  [ctx.pack] = JSON.parse(stdout);
  ctx.tarball = path.join(packDir, ctx.pack.filename);
  ctx.sha256 = createHash('sha256')
    .update(await fs.readFile(ctx.tarball))
    .digest('hex');

  const project = path.join(CACHE, ctx.sha256.slice(0, 24));
  ctx.project = project;
  ctx.cold = !existsSync(path.join(project, '.installed'));
  if (ctx.cold) {
    // Install next to the final place, then rename: a concurrent run never sees half a project.
    await fs.mkdir(CACHE, { recursive: true });
    const staging = `${project}.tmp-${process.pid}`;
    await fs.rm(staging, { recursive: true, force: true });
    await fs.mkdir(staging, { recursive: true });
    await fs.copyFile(ctx.tarball, path.join(staging, ctx.pack.filename));
    await fs.writeFile(
      path.join(staging, 'package.json'),
      JSON.stringify({ name: 'fresh-project', private: true, type: 'module' }, null, 2) + '\n',
    );
    const t0 = Date.now();
    // With the optional peer dependency of wasm-backoff/otel, as its users install it (the version of our devDependencies).
    const api = `@opentelemetry/api@${JSON.parse(await fs.readFile(new URL('../../package.json', import.meta.url), 'utf8')).devDependencies['@opentelemetry/api']}`;
    await run('npm', ['install', `./${ctx.pack.filename}`, api, '--prefer-offline', '--no-audit', '--no-fund', '--no-update-notifier'], {
      cwd: staging,
      timeout: 120_000,
    });
    ctx.installMs = Date.now() - t0;
    await fs.writeFile(path.join(staging, '.installed'), `${ctx.pack.id} sha256 ${ctx.sha256}\n`);
    if (existsSync(path.join(project, '.installed'))) {
      // Another run finished the same install meanwhile (and may be using it): keep its project.
      await fs.rm(staging, { recursive: true, force: true });
    } else {
      await fs.rm(project, { recursive: true, force: true }); // a half-made leftover, if any
      await fs.rename(staging, project);
    }
  }
  const now = new Date();
  await fs.utimes(project, now, now); // most recently used
  await pruneCache(project);

  // Fixtures: scripts at the project root (so bare specifiers resolve from its
  // node_modules), the browser files in www/, the .ts files in types/.
  await fs.cp(path.join(HERE, 'fixtures'), project, { recursive: true, force: true });
  await fs.cp(path.join(HERE, 'types'), path.join(project, 'types'), { recursive: true, force: true });

  ctx.srv = await startScripted();
});

after(async () => {
  await ctx.srv?.close();
  if (ctx.packDir) await fs.rm(ctx.packDir, { recursive: true, force: true });
});

/** Keeps the KEEP most recently used cached projects (and always `current`). */
async function pruneCache(current) {
  const entries = [];
  for (const name of await fs.readdir(CACHE)) {
    const p = path.join(CACHE, name);
    if (p === current) continue;
    const st = await fs.stat(p).catch(() => null);
    // Leftover staging dirs of runs that died more than an hour ago go too.
    if (name.includes('.tmp-')) {
      if (st && Date.now() - st.mtimeMs > 3600_000) await fs.rm(p, { recursive: true, force: true });
      continue;
    }
    if (st?.isDirectory()) entries.push({ p, t: st.mtimeMs });
  }
  entries.sort((a, b) => b.t - a.t);
  for (const { p } of entries.slice(KEEP - 1)) await fs.rm(p, { recursive: true, force: true });
}

const kib = (n) => `${n} B (${(n / 1024).toFixed(1)} KiB)`;

// ---- 1. the tarball ----
describe('npm pack', { timeout: 30_000 }, () => {
  test('the tarball holds exactly the published files', (t) => {
    const files = ctx.pack.files.map((f) => f.path).sort();
    t.diagnostic(
      `${ctx.pack.filename}: packed ${kib(ctx.pack.size)}, unpacked ${kib(ctx.pack.unpackedSize)}, ${ctx.pack.entryCount} files, sha256 ${ctx.sha256}`,
    );
    for (const f of ctx.pack.files) t.diagnostic(`  ${String(f.size).padStart(6)} B  ${f.path}`);
    t.diagnostic(
      ctx.cold
        ? `fresh project installed in ${ctx.installMs} ms: ${ctx.project}`
        : `fresh project reused from the cache (same tarball): ${ctx.project}`,
    );
    const dir = path.join(ctx.project, 'node_modules/wasm-backoff');
    const pj = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const required = requiredFiles(pj);
    assert.deepEqual(
      required.filter((f) => !files.includes(f)),
      [],
      'required files missing from the tarball',
    );
    const reachable = reachableFiles(dir, pj);
    const extra = files.filter((f) => !ALWAYS_ALLOWED.test(f) && !required.includes(f) && !reachable.has(f));
    assert.deepEqual(extra, [], 'files in the tarball that neither package.json nor an entry refers to');
    const junk = files.filter((f) => /\.(map|rs|tgz|log|orig|rej|tsbuildinfo)$|(^|\/)(tests?|src|target|node_modules)\/|(^|\/)\./.test(f));
    assert.deepEqual(junk, [], 'no source maps, sources, tests or build leftovers');
    const beyond = files.filter((f) => !required.includes(f) && !ALWAYS_ALLOWED.test(f));
    if (beyond.length) t.diagnostic(`also shipped (referenced from package.json): ${beyond.join(', ')}`);
  });

  test('every path package.json points at is in the tarball', () => {
    const pj = JSON.parse(readFileSync(path.join(ctx.project, 'node_modules/wasm-backoff/package.json'), 'utf8'));
    const targets = packageTargets(pj);
    const files = new Set(ctx.pack.files.map((f) => f.path));
    const missing = targets.filter(([, p]) => !files.has(p));
    assert.deepEqual(missing, [], 'exports/main/module/types targets missing from the tarball');
    // Every .d.ts that is referenced resolves its relative imports inside the tarball.
    for (const d of [...files].filter((f) => f.endsWith('.d.ts'))) {
      const text = readFileSync(path.join(ctx.project, 'node_modules/wasm-backoff', d), 'utf8');
      for (const [, spec] of text.matchAll(/from\s+['"](\.[^'"]+)['"]/g)) {
        const target = path.posix.join(path.posix.dirname(d), spec).replace(/\.js$/, '.d.ts');
        assert.ok(files.has(target), `${d} imports ${spec}, but ${target} is not in the tarball`);
      }
    }
  });

  test('the tarball ships a README and the licence text (license: MIT)', () => {
    const files = ctx.pack.files.map((f) => f.path);
    const missing = [];
    if (!files.some((f) => /^README/i.test(f))) missing.push('README.md (the npm page of the package is empty without it)');
    if (!files.some((f) => /^LICEN[CS]E/i.test(f))) missing.push('LICENSE (MIT requires the notice in every copy)');
    assert.deepEqual(missing, [], 'pkg/ has no README or licence files, so npm publishes none');
  });
});

// ---- 2. runtimes, each importing the installed package by name ----

/** Scripts `route` as 503 then 200 'ok', runs a fixture, checks it recovered with exactly 2 requests. */
async function retriedFetch(t, route, cmd, args, { env, resolvedTail, exportsOf } = {}) {
  ctx.srv.script(route, [{ status: 503 }, { status: 200, body: 'ok' }]);
  const before = ctx.srv.count(route);
  const { stdout, stderr } = await run(cmd, [...args, ctx.srv.url + route], { cwd: ctx.project, env });
  const r = lastJson(stdout);
  t.diagnostic(`${path.basename(cmd)} ${args.join(' ')} → ${JSON.stringify(r)}`);
  const warnings = stderr.split('\n').filter((l) => l.trim() && !/ExperimentalWarning|--trace-warnings/.test(l));
  if (warnings.length) t.diagnostic(`stderr: ${warnings.join(' | ')}`);
  assert.equal(r.status, 200);
  assert.equal(r.body, 'ok');
  assert.equal(r.retries, 1, 'one retry');
  assert.equal(r.first, 250, "new Backoff({preset:'flume', seed:1}).next()");
  assert.equal(ctx.srv.count(route) - before, 2, 'the scripted server saw 2 requests (503, then 200)');
  if (resolvedTail) assert.ok(String(r.resolved).endsWith(resolvedTail), `resolved to ${r.resolved}, expected …${resolvedTail}`);
  if (exportsOf) assert.deepEqual(r.exports, exportsOf);
  return r;
}

/** Runs fixtures/entries.mjs: every `exports` entry, by name, with import and require. */
async function allEntries(t, cmd, args, env) {
  const { stdout } = await run(cmd, args, { cwd: ctx.project, env });
  const r = lastJson(stdout);
  t.diagnostic(JSON.stringify(r));
  for (const [spec, { import: imp, require: req }] of Object.entries(r)) {
    assert.ok(Array.isArray(imp), `import('${spec}') failed: ${imp}`);
    assert.ok(Array.isArray(req), `require('${spec}') failed: ${req}`);
    assert.deepEqual(req, imp, `${spec}: require and import give the same exports`);
    // (wasm-backoff/budget, /hedge, /failover and /testing are plain JavaScript, no module; /query, /undici, /outbox, /otel: their own)
    const MARKERS = {
      budget: 'RetryBudget',
      query: 'queryRetry',
      undici: 'retryGlobalFetch',
      outbox: 'Outbox',
      otel: 'instrument',
      hedge: 'hedge',
      failover: 'failover',
      testing: 'virtualClock',
      auth: 'auth',
      dedupe: 'dedupe',
      cache: 'staleIfError',
      quota: 'quota',
      sse: 'EventSource',
      ws: 'WebSocket',
    };
    const marker = MARKERS[/^wasm-backoff\/(\w+)/.exec(spec)?.[1]] ?? 'Backoff';
    assert.ok(imp.includes(marker), `${spec} exports ${marker}`);
  }
  ctx.runtimeExports ??= r;
  return r;
}

describe('Node 20', { timeout: 120_000 }, () => {
  test('every entry in exports loads by name with import and with require', (t) => allEntries(t, process.execPath, ['entries.mjs']));
  test('ESM: import { Backoff, fetchWithBackoff } from "wasm-backoff"', (t) =>
    retriedFetch(t, '/node-esm', process.execPath, ['esm.mjs'], { resolvedTail: '/node_modules/wasm-backoff/node.mjs' }));
  test('CommonJS: require("wasm-backoff")', (t) =>
    retriedFetch(t, '/node-cjs', process.execPath, ['cjs.cjs'], { resolvedTail: '/node_modules/wasm-backoff/node.cjs' }));
  test('ESM: import * from "wasm-backoff/backoff" (the calculator alone)', (t) =>
    retriedFetch(t, '/node-backoff-esm', process.execPath, ['backoff.mjs'], {
      resolvedTail: '/node_modules/wasm-backoff/backoff/node.mjs',
      exportsOf: ['Backoff'],
    }));
  test('CommonJS: require("wasm-backoff/backoff")', (t) =>
    retriedFetch(t, '/node-backoff-cjs', process.execPath, ['backoff.cjs'], {
      resolvedTail: '/node_modules/wasm-backoff/backoff/node.cjs',
      exportsOf: ['Backoff'],
    }));
});

// Deno resolves bare specifiers (and npm: ones) from the project's own
// node_modules with --node-modules-dir=manual (the project's package.json is
// found from the working directory); --cached-only and an empty DENO_DIR prove
// it never goes to the registry.
describe('Deno', { timeout: 120_000 }, () => {
  const DENO = bin('.bin', 'deno');
  const denoArgs = (script) => ['run', '--cached-only', '--node-modules-dir=manual', '--allow-read', '--allow-net=127.0.0.1', script];
  const env = () => ({ DENO_DIR: path.join(ctx.project, '.deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' });
  test('import { Backoff, fetchWithBackoff } from "wasm-backoff"', (t) =>
    retriedFetch(t, '/deno-esm', DENO, denoArgs('esm.mjs'), { env: env(), resolvedTail: '/node_modules/wasm-backoff/node.mjs' }));
  test('every entry in exports loads by name with import and with require', (t) => allEntries(t, DENO, denoArgs('entries.mjs'), env()));
  test('import * from "wasm-backoff/backoff"', (t) =>
    retriedFetch(t, '/deno-backoff', DENO, denoArgs('backoff.mjs'), {
      env: env(),
      resolvedTail: '/node_modules/wasm-backoff/backoff/node.mjs',
      exportsOf: ['Backoff'],
    }));
});

// Bun's npm package moves its binary into place with an install script; if
// npm skipped that script, the binary is still in the platform package
// (the same lookup as tests/package/runtimes.test.mjs).
describe('Bun', { timeout: 120_000 }, () => {
  const platformBun = bin('@oven', 'bun-linux-x64', 'bin', 'bun');
  const BUN = existsSync(platformBun) ? platformBun : bin('.bin', 'bun');
  const env = { NO_COLOR: '1', BUN_RUNTIME_TRANSPILER_CACHE_PATH: '0' };
  test('import { Backoff, fetchWithBackoff } from "wasm-backoff"', (t) =>
    retriedFetch(t, '/bun-esm', BUN, ['--no-install', 'esm.mjs'], { env, resolvedTail: '/node_modules/wasm-backoff/node.mjs' }));
  test('require("wasm-backoff")', (t) =>
    retriedFetch(t, '/bun-cjs', BUN, ['--no-install', 'cjs.cjs'], { env, resolvedTail: '/node_modules/wasm-backoff/node.cjs' }));
  test('every entry in exports loads by name with import and with require', (t) =>
    allEntries(t, BUN, ['--no-install', 'entries.mjs'], env));
  test('import * from "wasm-backoff/backoff"', (t) =>
    retriedFetch(t, '/bun-backoff', BUN, ['--no-install', 'backoff.mjs'], {
      env,
      resolvedTail: '/node_modules/wasm-backoff/backoff/node.mjs',
      exportsOf: ['Backoff'],
    }));
});

// workerd does not resolve bare specifiers: a worker is bundled first. This is
// what wrangler does: esbuild with the workerd/worker conditions, every .wasm
// left external as a CompiledWasm module, copied next to the bundle under a
// content-hashed name (so the two entries' same-named wasm files stay apart).
describe('workerd (miniflare)', { timeout: 90_000 }, () => {
  test('a worker importing "wasm-backoff" and "wasm-backoff/backoff" by name, bundled like wrangler', async (t) => {
    const { build } = await import('esbuild');
    const { Miniflare } = await import('miniflare');
    const outdir = path.join(ctx.project, 'dist-workerd');
    await fs.rm(outdir, { recursive: true, force: true });
    await fs.mkdir(outdir, { recursive: true });
    const wasmFiles = [];
    const wasmAsModules = {
      name: 'wasm-as-compiled-modules',
      setup(b) {
        b.onResolve({ filter: /\.wasm$/ }, async (args) => {
          const file = path.resolve(args.resolveDir, args.path);
          const bytes = await fs.readFile(file);
          const name = `${createHash('sha1').update(bytes).digest('hex').slice(0, 16)}-${path.basename(file)}`;
          await fs.writeFile(path.join(outdir, name), bytes);
          wasmFiles.push(`${path.relative(ctx.project, file)} → ${name}`);
          return { path: `./${name}`, external: true };
        });
      },
    };
    const result = await build({
      entryPoints: [path.join(ctx.project, 'worker-cf.mjs')],
      absWorkingDir: ctx.project,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      conditions: ['workerd', 'worker'],
      outfile: path.join(outdir, 'worker.mjs'),
      plugins: [wasmAsModules],
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs).filter((p) => p.includes('wasm-backoff'));
    t.diagnostic(`bundled: ${inputs.join(', ')}; wasm modules: ${wasmFiles.join(', ')}`);
    assert.deepEqual(
      // (and the chunk the two entries share: one small module for both)
      inputs.filter((p) => !/\/small-[^/]+\.js$/.test(p)).sort(),
      ['node_modules/wasm-backoff/backoff/workerd.js', 'node_modules/wasm-backoff/workerd.js'],
      'the workerd condition picked workerd.js for both entries',
    );

    const route = '/workerd';
    ctx.srv.script(route, [{ status: 503 }, { status: 200, body: 'ok' }]);
    const before = ctx.srv.count(route);
    const mf = new Miniflare({
      modules: true,
      scriptPath: path.join(outdir, 'worker.mjs'),
      modulesRoot: outdir,
      modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
      compatibilityDate: '2025-07-01',
      bindings: { ORIGIN: ctx.srv.url },
    });
    try {
      // workerd that cannot start the worker (e.g. a wasm module that does not
      // match its glue) leaves dispatchFetch waiting forever.
      const res = await within(30_000, 'miniflare dispatchFetch', mf.dispatchFetch(`http://worker.test${route}`));
      const text = await res.text();
      t.diagnostic(`worker → ${res.status} ${text}`);
      assert.equal(res.status, 200, text);
      const r = JSON.parse(text);
      assert.equal(r.status, 200);
      assert.equal(r.body, 'ok');
      assert.equal(r.retries, 1);
      assert.equal(r.first, 250);
      assert.equal(r.smallFirst, 250);
      assert.deepEqual(r.smallExports, ['Backoff']);
      assert.equal(ctx.srv.count(route) - before, 2, 'the scripted server saw 2 requests (503, then 200)');
    } finally {
      await within(30_000, 'miniflare dispose', mf.dispose()).catch((e) => t.diagnostic(String(e)));
    }
  });
});

// ---- browsers: a static server for the fresh project, Chromium ----

/** Serves <project>/www at / and <project>/node_modules at /node_modules, every response with CSP. */
function serveProject(project) {
  return serve({
    mounts: [
      ['/node_modules/', path.join(project, 'node_modules')],
      ['/', path.join(project, 'www')],
    ],
    csp: CSP,
    routes: {},
    hidden: null,
  });
}

describe('Chromium (pages served with a strict CSP)', { timeout: 120_000 }, () => {
  const b = {};
  before(async () => {
    const { launch } = await import('../support/browser.mjs');
    Object.assign(b, await serveProject(ctx.project));
    b.browser = await launch();
  });
  after(async () => {
    await b.browser?.close();
    b.server?.close();
  });

  /**
   * Opens `page` (a fresh browser context: no service worker left over) with
   * ?api=<scripted server>, waits for window.result, and returns it with the
   * console errors that are not the expected 503 of the scripted origin.
   */
  async function openAndWait(t, pageName, params = {}) {
    const context = await b.browser.newContext();
    const page = await context.newPage();
    const problems = [];
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(String(e)));
    try {
      await page.goto(`${b.url}/${pageName}?${new URLSearchParams({ api: ctx.srv.url, ...params })}`);
      let result;
      try {
        await page.waitForFunction(() => window.result !== undefined, null, { timeout: 15_000 });
        result = await page.evaluate(() => window.result);
      } catch (e) {
        result = { error: `no result from ${pageName}: ${e.message.split('\n')[0]}` };
      }
      const unexpected = problems.filter((p) => !/Failed to load resource: the server responded with a status of 503/.test(p));
      t.diagnostic(`${pageName} → ${JSON.stringify(result)}${problems.length ? `; console: ${problems.join(' | ')}` : ''}`);
      return { result, unexpected };
    } finally {
      await context.close();
    }
  }

  function checkRetried(result, unexpected, route, before) {
    assert.equal(result.error, undefined, result.error + (unexpected.length ? `\nconsole: ${unexpected.join(' | ')}` : ''));
    assert.deepEqual(unexpected, [], 'no console errors');
    assert.equal(result.status, 200);
    assert.equal(result.body, 'ok');
    assert.equal(result.retries, 1);
    assert.equal(result.first, 250);
    assert.equal(ctx.srv.count(route) - before, 2, 'the scripted server saw 2 requests (503, then 200)');
  }

  test("page under CSP script-src 'self' 'wasm-unsafe-eval': both entries in a plain module script, retried cross-origin fetch", async (t) => {
    ctx.srv.script('/csp', [{ status: 503 }, { status: 200, body: 'ok' }]);
    const before = ctx.srv.count('/csp');
    const { result, unexpected } = await openAndWait(t, 'csp.html');
    checkRetried(result, unexpected, '/csp', before);
    assert.equal(result.smallFirst, 250);
    assert.deepEqual(result.smallExports, ['Backoff']);
    assert.deepEqual(result.violations, [], 'no securitypolicyviolation event');
  });

  test('module Web Worker: imports the package, retried fetch', async (t) => {
    ctx.srv.script('/worker', [{ status: 503 }, { status: 200, body: 'ok' }]);
    const before = ctx.srv.count('/worker');
    const { result, unexpected } = await openAndWait(t, 'worker.html');
    checkRetried(result, unexpected, '/worker', before);
  });

  async function serviceWorker(t, script, route) {
    ctx.srv.script(`/${route}`, [{ status: 503 }, { status: 200, body: 'ok' }]);
    const before = ctx.srv.count(`/${route}`);
    const { result, unexpected } = await openAndWait(t, 'sw.html', { sw: script, route });
    const entry = readFileSync(path.join(ctx.project, 'node_modules/wasm-backoff/index.js'), 'utf8');
    if (result.error && script === 'sw.js' && /await WebAssembly\.compile/.test(entry)) {
      // Chromium refuses to start a service worker whose module graph has a
      // top-level await (the HTML spec forbids it in service workers), and
      // the browser entry index.js awaits compileStreaming at top level.
      result.error += ' (the browser entry index.js has a top-level await, which service workers forbid)';
    }
    checkRetried(result, unexpected, `/${route}`, before);
    assert.equal(result.servedBy, 'wasm-backoff service worker');
  }

  test("module Service Worker importing the 'wasm-backoff/sync' entry (bundler.js) by path: intercepts the page's fetch('/api/sw'), forwards it with fetchWithBackoff", (t) =>
    serviceWorker(t, 'sw.js', 'sw'));

  test('module Service Worker importing "wasm-backoff" by name, bundled with esbuild (platform browser): same', async (t) => {
    const { build } = await import('esbuild');
    const result = await build({
      entryPoints: [path.join(ctx.project, 'sw-bundled.mjs')],
      absWorkingDir: ctx.project,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      outfile: path.join(ctx.project, 'www', 'sw-bundled.js'),
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs).filter((p) => p.includes('wasm-backoff'));
    t.diagnostic(`esbuild picked ${inputs.join(', ')}`);
    await serviceWorker(t, 'sw-bundled.js', 'sw-bundled');
  });
});

// ---- 3. types, against the installed tarball ----

/** TypeScript 5.9's compiler API and TypeScript 7's tsc (tests/install's dev dependencies). */
const TS59 = path.join(HERE, 'node_modules', 'typescript', 'lib', 'typescript.js');
const TS7 = path.join(HERE, 'node_modules', 'typescript-7', 'bin', 'tsc');
/** @type {Promise<any> | undefined} */
let ts59;
const typescript59 = () => {
  if (!existsSync(TS59)) throw new Error(`${TS59} is missing: npm install --prefix tests/install`);
  return (ts59 ??= import(pathToFileURL(TS59).href).then((m) => m.default));
};

/** TypeScript 5.9's own lib files, each parsed once for every program. */
const libFiles = new Map();
/**
 * What `tsc -p config` reports, from TypeScript 5.9's API in this process: a `tsc` process for each of
 * the 7 programs loaded the compiler and parsed lib.dom.d.ts again (18 s of CPU for the 7, against 10).
 * Only TypeScript's own lib files are shared between programs (global scripts, the same for every
 * config here); everything else, the package's .d.ts included, is read and checked per program.
 * @param {string} config
 */
async function inProcess(config) {
  const ts = await typescript59();
  const libDir = path.dirname(ts.getDefaultLibFilePath({}));
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(config, ts.sys.readFile).config, ts.sys, path.dirname(config));
  const host = ts.createCompilerHost(parsed.options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (file, lang, ...rest) => {
    if (path.dirname(file) !== libDir) return read(file, lang, ...rest);
    const key = `${file}\0${typeof lang === 'object' ? lang.languageVersion : lang}`;
    if (!libFiles.has(key)) libFiles.set(key, read(file, lang, ...rest));
    return libFiles.get(key);
  };
  const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options, host });
  const found = [...ts.getConfigFileParsingDiagnostics(parsed), ...parsed.errors, ...ts.getPreEmitDiagnostics(program)];
  return ts.formatDiagnostics(found, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ctx.project, getNewLine: () => '\n' });
}

/**
 * TypeScript 7's `tsc -p config --pretty false` (a native program: a process each costs little): its
 * exit code is the verdict (a failure rejects, with its output); what it prints else, a diagnostic of `t`.
 * @param {string} config
 * @param {import('node:test').TestContext} t
 */
async function tsc7(config, t) {
  const { stdout } = await run(process.execPath, [TS7, '-p', config, '--pretty', 'false'], { cwd: ctx.project, timeout: 150_000 });
  if (stdout.trim()) t.diagnostic(stdout.trim());
  return '';
}

/** Each TypeScript checked against: its version, the file it needs, and its check of a tsconfig (its errors, '' when none). */
const TYPESCRIPTS = [
  ['5.9', TS59, inProcess],
  ['7', TS7, tsc7],
];

/**
 * Writes tsconfig.<name>.json (strict, no emit, the DOM unless `compilerOptions` say otherwise) and
 * checks it with `check` (TYPESCRIPTS'); its errors fail the test.
 */
async function tsc(t, check, name, compilerOptions, files) {
  const config = path.join(ctx.project, `tsconfig.${name}.json`);
  await fs.writeFile(
    config,
    JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'es2022',
          lib: ['es2022', 'dom', 'dom.iterable'],
          types: [],
          skipLibCheck: false, // the package's own .d.ts files are checked too
          // (not TypeScript's own lib.*.d.ts: checking lib.dom.d.ts again in every run was half of each run's time)
          skipDefaultLibCheck: true,
          ...compilerOptions,
        },
        files: [files].flat(),
      },
      null,
      2,
    ),
  );
  const errors = await check(config, t);
  if (errors) throw new Error(`tsc -p ${config}\n${errors}`);
}

const RESOLUTIONS = [
  ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
  ['node16', { module: 'node16', moduleResolution: 'node16' }],
];

describe('types (tsc --strict --noEmit against the installed tarball)', {
  concurrency: Math.min(4, os.availableParallelism()),
  timeout: 600_000,
}, () => {
  // TypeScript is a dev dependency of tests/install/ only: installed here from
  // its lock file when missing (a few seconds, once).
  before(async () => {
    if (TYPESCRIPTS.every(([, needs]) => existsSync(needs))) return;
    await run('npm', ['ci', '--prefer-offline', '--prefix', HERE, '--no-audit', '--no-fund', '--no-update-notifier'], {
      cwd: HERE,
      timeout: 120_000,
    });
  });

  test("each entry's .d.ts declares exactly the values it exports at run time", async (t) => {
    const runtime = ctx.runtimeExports ?? lastJson((await run(process.execPath, ['entries.mjs'], { cwd: ctx.project })).stdout);
    const ts = await typescript59();
    const specs = Object.keys(runtime);
    const file = path.join(ctx.project, 'types', 'entries.generated.ts');
    await fs.writeFile(file, specs.map((s, i) => `import * as e${i} from '${s}';\nexport { e${i} };\n`).join(''));
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipDefaultLibCheck: true, // (the package's .d.ts files are checked; TypeScript's own lib files are not)
    });
    const errors = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(errors, []);
    const checker = program.getTypeChecker();
    const imports = program.getSourceFile(file).statements.filter(ts.isImportDeclaration);
    const declared = {};
    for (const decl of imports) {
      const mod = checker.getSymbolAtLocation(decl.moduleSpecifier);
      declared[decl.moduleSpecifier.text] = checker
        .getExportsOfModule(mod)
        .filter((sym) => ((sym.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(sym) : sym).flags & ts.SymbolFlags.Value) !== 0)
        .map((sym) => sym.name)
        .sort();
    }
    t.diagnostic(`declared values: ${JSON.stringify(declared)}`);
    for (const spec of specs) assert.deepEqual(declared[spec], runtime[spec].import, `${spec}: .d.ts values vs run-time exports`);
  });

  for (const [version, , check] of TYPESCRIPTS) {
    for (const [res, options] of RESOLUTIONS) {
      // (one program for both files, two modules: each error names its file)
      test(`TypeScript ${version}, moduleResolution ${res}: types/ok.ts (every export and option) compiles, and every @ts-expect-error in types/mistakes.ts is a real error`, (t) =>
        tsc(t, check, `ts${version}.${res}.ok-mistakes`, options, ['types/ok.ts', 'types/mistakes.ts']));
    }
    // A CommonJS consumer (.cts: its imports compile to require()). With
    // module node20/nodenext TypeScript models require(esm) (Node >= 20.19,
    // the package's engines); node16 does not, and the package's only types
    // are an ES module (package.json "type": "module").
    for (const mod of ['nodenext', 'node16']) {
      test(`TypeScript ${version}, module ${mod}: a CommonJS consumer (types/require.cts) compiles`, (t) =>
        tsc(t, check, `ts${version}.${mod}.cts`, { module: mod, moduleResolution: mod }, 'types/require.cts'));
    }
    // Server-side projects have no DOM lib: only what @types/node or
    // @cloudflare/workers-types declare. skipLibCheck (tsc --init's default)
    // hides errors inside the package's .d.ts, but a type it cannot resolve
    // becomes `any` there: types/no-dom.ts checks that a wrong input still errs.
    const nodeTypes = {
      lib: ['es2022'],
      typeRoots: [path.join(HERE, 'node_modules', '@types')],
      types: ['node'],
      module: 'nodenext',
      moduleResolution: 'nodenext',
    };
    const workersTypes = {
      lib: ['es2022'],
      types: [path.join(HERE, 'node_modules', '@cloudflare', 'workers-types')],
      module: 'esnext',
      moduleResolution: 'bundler',
    };
    for (const [name, options] of [
      ['a Node project (lib es2022 + @types/node, no DOM)', nodeTypes],
      ['a Node project with skipLibCheck (lib es2022 + @types/node, no DOM)', { ...nodeTypes, skipLibCheck: true }],
      ['a Workers project (lib es2022 + @cloudflare/workers-types, no DOM)', workersTypes],
    ]) {
      test(`TypeScript ${version}, ${name}: types/no-dom.ts compiles`, (t) =>
        tsc(
          t,
          check,
          `ts${version}.nodom.${name.split(' ')[1]}${options.skipLibCheck ? '.skiplibcheck' : ''}`,
          options,
          'types/no-dom.ts',
        ));
    }
  }
});
