// The packed wasm-backoff in fresh app projects, built by each bundler at its
// defaults, served from 127.0.0.1 and run in headless Chromium (issue #7,
// part B). Used by bundlers.test.mjs; Node built-ins and playwright-core only.
//
// A "project" is a directory holding only what a user would write (package.json,
// main.js, index.html for Vite) plus `npm install <tarball>` of the package;
// the bundlers themselves come from tests/bundlers/node_modules (their
// versions are pinned in tests/bundlers/package.json). Installed projects are
// cached under target/bundler-cache/projects/<tarball sha256>-<bundler
// versions hash>/<bundler>/, so a warm run only builds and runs.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { serve } from '../../scripts/serve.mjs';

const run = promisify(execFile);

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const CACHE = process.env.BUNDLER_CACHE ?? path.join(ROOT, 'target/bundler-cache');

/** The executable of package `pkg`'s bin `name` (not node_modules/.bin, where vite6 and webpack582 shadow vite and webpack). */
function bin(pkg, name = pkg) {
  const dir = path.join(HERE, 'node_modules', pkg);
  const b = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).bin;
  return path.join(dir, typeof b === 'string' ? b : b[name]);
}
const TOOLS = ['vite', 'webpack', 'webpack-cli', 'esbuild', 'rollup', '@rollup/plugin-node-resolve', 'vite6', 'webpack582'];

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');
const { NODE_ENV, ...inherited } = process.env; // each bundler picks its own default mode
const ENV = { ...inherited, NO_COLOR: '1', FORCE_COLOR: '0' };

/** Runs a command; resolves to {ok, out (stdout+stderr), stdout}, never rejects. */
async function sh(cmd, args, cwd, timeout = 120_000) {
  try {
    const { stdout, stderr } = await run(cmd, args, { cwd, env: ENV, timeout, maxBuffer: 64 << 20 });
    return { ok: true, out: stdout + stderr, stdout };
  } catch (e) {
    return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}${e.killed ? '\n(killed: timeout)' : ''}` || String(e) };
  }
}

/**
 * Installs tests/bundlers' dev dependencies if any is missing. `npm install`,
 * not `npm ci`: npm 11 leaves the platform packages of the second rollup
 * (under vite6) out of the lockfile, and `npm ci` then refuses it.
 * `--prefer-offline`: the locked versions come from npm's cache without a
 * registry round trip each (a fresh clone: 6.2 s, 6.8 core-s, against
 * 8.8 s, 9.2 core-s).
 */
export async function ensureTools() {
  if (TOOLS.every((t) => existsSync(path.join(HERE, 'node_modules', t, 'package.json')))) return false;
  const r = await sh('npm', ['install', '--prefer-offline', '--prefix', HERE, '--no-audit', '--no-fund'], ROOT, 600_000);
  if (!r.ok) throw new Error(`npm install --prefix tests/bundlers failed:\n${r.out}`);
  return true;
}

/** The installed version of each tool, e.g. {vite: '8.3.8', …}. */
export function toolVersions() {
  return Object.fromEntries(
    TOOLS.map((t) => [t, JSON.parse(readFileSync(path.join(HERE, 'node_modules', t, 'package.json'), 'utf8')).version]),
  );
}

/** `npm pack` of `dir` into `dest`; resolves to {file, sha256}. */
export async function pack(dir, dest) {
  mkdirSync(dest, { recursive: true });
  const r = await sh('npm', ['pack', dir, '--pack-destination', dest, '--json', '--ignore-scripts'], ROOT);
  if (!r.ok) throw new Error(`npm pack ${dir} failed:\n${r.out}`);
  const json = JSON.parse(r.stdout);
  const file = path.join(dest, json[0].filename);
  return { file, sha256: sha256(readFileSync(file)) };
}

// ---------------------------------------------------------------- the app

/**
 * The app every bundler builds: the same source, written to the place the
 * bundler's defaults look for. It has no top-level await of its own, so any
 * top-level-await requirement comes from the package alone.
 */
export function appSource() {
  return `// A user's app: one import of the package, nothing configured.
import { fetchWithBackoff, Backoff } from 'wasm-backoff';

async function main() {
  const out = {};
  try {
    out.next = new Backoff({ preset: 'flume' }).next();
    const target = new URL(location.href).searchParams.get('target');
    const res = await fetchWithBackoff(target, undefined, { onDone: (d) => (out.done = d) });
    out.status = res.status;
    out.body = await res.text();
  } catch (e) {
    out.error = String((e && e.stack) || e);
  }
  document.body.dataset.result = JSON.stringify(out);
}
main();
`;
}

const PAGE = (script) =>
  `<!doctype html>\n<html><head><meta charset="utf-8"><title>wasm-backoff in a bundled app</title>\n${script}\n</head><body></body></html>\n`;

/**
 * The bundlers. `files` is what the user writes, `build` the command (run in
 * the project), `html` the page the harness writes into dist/ when the
 * bundler does not make one, `config` every line of configuration the
 * bundler needed beyond the command (none, so far).
 */
export const BUNDLERS = {
  vite: {
    files: (app) => ({ 'main.js': app, 'index.html': PAGE('<script type="module" src="/main.js"></script>') }),
    build: [['vite'], ['build']],
    config: 'none (index.html is the default entry; `vite build`)',
  },
  webpack: {
    // webpack 5 with no config file: entry ./src/index.js, output dist/main.js, mode production.
    files: (app) => ({ 'src/index.js': app }),
    build: [['webpack'], []],
    html: PAGE('<script defer src="main.js"></script>'),
    config: 'none (zero-config conventions: src/index.js -> dist/main.js; `webpack`)',
  },
  esbuild: {
    files: (app) => ({ 'main.js': app }),
    build: [['esbuild'], ['main.js', '--bundle', '--format=esm', '--outdir=dist']],
    html: PAGE('<script type="module" src="main.js"></script>'),
    config: 'CLI flags only: `esbuild main.js --bundle --format=esm --outdir=dist`',
  },
  'esbuild --loader:.wasm=file': {
    files: (app) => ({ 'main.js': app }),
    build: [['esbuild'], ['main.js', '--bundle', '--format=esm', '--outdir=dist', '--loader:.wasm=file']],
    html: PAGE('<script type="module" src="main.js"></script>'),
    config: 'CLI flags: `esbuild main.js --bundle --format=esm --outdir=dist --loader:.wasm=file`',
  },
  rollup: {
    // No rollup.config: the CLI form of `plugins: [nodeResolve()]`; output format defaults to 'es'.
    files: (app) => ({ 'main.js': app }),
    build: [['rollup'], ['main.js', '-d', 'dist', '-p', 'node-resolve']],
    html: PAGE('<script type="module" src="main.js"></script>'),
    config: 'CLI flags only: `rollup main.js -d dist -p node-resolve` (= plugins: [nodeResolve()])',
  },
  // Opt-in (WB_BUNDLERS=all): older or stricter defaults that reject top-level await.
  'vite@6': {
    optIn: true, // default build.target 'modules' (chrome87, es2020, …): no top-level await
    files: (app) => ({ 'main.js': app, 'index.html': PAGE('<script type="module" src="/main.js"></script>') }),
    build: [['vite6', 'vite'], ['build']],
    config: 'none (`vite build`)',
  },
  'webpack@5.82': {
    optIn: true, // experiments.topLevelAwait became the default in 5.83
    files: (app) => ({ 'src/index.js': app }),
    build: [
      'node',
      [
        '-e',
        `require(${JSON.stringify(path.join(HERE, 'node_modules/webpack582'))})({}, (e, s) => {
      if (e || s.hasErrors()) { console.error(String(e ?? s.toString({ all: false, errors: true }))); process.exit(1); }
    })`,
      ],
    ],
    html: PAGE('<script defer src="main.js"></script>'),
    config: 'none (webpack({}) through the Node API: webpack-cli 7 needs a newer webpack)',
  },
  'esbuild --target=es2020': {
    optIn: true, // a common user flag, not a default
    files: (app) => ({ 'main.js': app }),
    build: [['esbuild'], ['main.js', '--bundle', '--format=esm', '--outdir=dist', '--target=es2020']],
    html: PAGE('<script type="module" src="main.js"></script>'),
    config: 'CLI flags: `esbuild main.js --bundle --format=esm --outdir=dist --target=es2020`',
  },
};

const dirName = (bundler) => bundler.replace(/[^a-z0-9]+/gi, '-').replace(/-+$/, '');

/** Per tarball key: the promise of a project where `npm install ./wasm-backoff.tgz` ran (this run's first). */
const installs = new Map();

/** Removes this run's npm projects (what project() copied from). */
export function forgetInstalls() {
  for (const key of installs.keys()) rmSync(path.join(CACHE, 'projects', key, `.npm-${process.pid}`), { recursive: true, force: true });
  installs.clear();
}

/** A fresh project in `dir` (package.json, the tarball), with `npm install ./wasm-backoff.tgz` run in it. */
async function npmInstall(dir, name, tarball) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }, null, 2) + '\n');
  copyFileSync(tarball.file, path.join(dir, 'wasm-backoff.tgz'));
  const r = await sh('npm', ['install', './wasm-backoff.tgz', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'], dir);
  if (!r.ok) throw new Error(`npm install of the tarball into ${dir} failed:\n${r.out}`);
}

/**
 * A fresh project for `bundler` with the tarball installed (`npm install
 * ./wasm-backoff.tgz`, not a link), cached by tarball sha256 and tool
 * versions (`flavor` separates apps built from the same tarball, so they can
 * build at the same time). npm runs once per tarball: the other bundlers'
 * projects get a copy of what it installed (node_modules and the lock file;
 * the same tree npm would make there). Resolves to {dir, cached}.
 */
export async function project(bundler, tarball, versionsKey, flavor = '') {
  const key = `${tarball.sha256.slice(0, 16)}-${versionsKey}`;
  const dir = path.join(CACHE, 'projects', key, dirName(bundler) + flavor);
  if (existsSync(path.join(dir, '.installed'))) {
    const now = new Date();
    utimesSync(path.dirname(dir), now, now); // recently used: kept by pruneCache
    return { dir, cached: true };
  }
  const installed = path.join(CACHE, 'projects', key, `.npm-${process.pid}`);
  if (!installs.has(key)) installs.set(key, npmInstall(installed, 'app', tarball));
  await installs.get(key);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const name = `app-${dirName(bundler)}`;
  writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }, null, 2) + '\n');
  for (const f of ['wasm-backoff.tgz', 'node_modules']) cpSync(path.join(installed, f), path.join(tmp, f), { recursive: true });
  const lock = JSON.parse(readFileSync(path.join(installed, 'package-lock.json'), 'utf8'));
  lock.name = lock.packages[''].name = name;
  writeFileSync(path.join(tmp, 'package-lock.json'), JSON.stringify(lock, null, 2) + '\n');
  writeFileSync(path.join(tmp, '.installed'), new Date().toISOString() + '\n');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(path.dirname(dir), { recursive: true });
  renameSync(tmp, dir);
  return { dir, cached: false };
}

/** Keeps the `keep` most recently used entries of target/bundler-cache/{projects,variants} (pkg/ changes make new keys). */
export function pruneCache(keep = 24) {
  for (const sub of ['projects', 'variants']) {
    const d = path.join(CACHE, sub);
    if (!existsSync(d)) continue;
    const entries = readdirSync(d)
      .map((n) => ({ p: path.join(d, n), t: statSync(path.join(d, n)).mtimeMs }))
      .sort((a, b) => b.t - a.t);
    for (const e of entries.slice(keep)) rmSync(e.p, { recursive: true, force: true });
  }
}

/** Writes the app into the project and runs the bundler; resolves to {ok, out, files}. */
export async function build(bundler, dir, app) {
  const b = BUNDLERS[bundler];
  for (const [rel, text] of Object.entries(b.files(app))) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  const dist = path.join(dir, 'dist');
  rmSync(dist, { recursive: true, force: true });
  const [tool, args] = b.build;
  const r = await sh(tool === 'node' ? process.execPath : bin(...tool), args, dir);
  if (r.ok && b.html && existsSync(dist)) writeFileSync(path.join(dist, 'index.html'), b.html);
  return { ...r, dist, files: existsSync(dist) ? listFiles(dist) : [] };
}

function listFiles(dir, base = dir) {
  return readdirSync(dir)
    .flatMap((n) => {
      const p = path.join(dir, n);
      return statSync(p).isDirectory() ? listFiles(p, base) : [path.relative(base, p)];
    })
    .sort();
}

/** Raw and GNU `gzip -9 -n` bytes of what the page downloads from dist/ (everything but index.html). */
export function distBytes(dist, files) {
  const t = { js: 0, jsGz: 0, wasm: 0, wasmGz: 0 };
  for (const f of files) {
    if (f === 'index.html' || f.endsWith('.map')) continue;
    const p = path.join(dist, f);
    const raw = statSync(p).size;
    const gz = gzipBytes(p);
    if (f.endsWith('.wasm')) (t.wasm += raw), (t.wasmGz += gz);
    else (t.js += raw), (t.jsGz += gz);
  }
  return { ...t, totalGz: t.jsGz + t.wasmGz };
}

export const gzipBytes = (file) => execFileSync('gzip', ['-9', '-n', '-c', file]).length;

// ---------------------------------------------------------------- serving and the browser

/** The policy the README promises the package works under, plus the scripted server's origin for fetch. */
export const csp = (connect) =>
  `default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; connect-src 'self' ${connect}; object-src 'none'; base-uri 'none'`;

/** A static server (scripts/serve.mjs) for one build's directory at a time: set `state.root` and `state.policy` (null = no CSP) per run. */
export async function staticServer() {
  const state = { root: null, policy: null, misses: [] };
  const site = await serve({
    mounts: () => [['/', state.root]],
    csp: () => state.policy,
    routes: {},
    hidden: null,
    onMiss: (rel) => state.misses.push(rel),
  });
  return { url: site.url, state, close: site.close };
}

// Debian's Chromium with the flags this sandbox needs (shared with the JS tests).
export { launch } from '../support/browser.mjs';

/**
 * Opens dist/index.html in a new page and waits for the app's result (or the
 * first uncaught error). Resolves to {result, problems, misses}.
 */
export async function runPage(browser, site, dist, target, policy) {
  site.state.root = dist;
  site.state.policy = policy;
  site.state.misses = [];
  const page = await browser.newPage();
  const problems = [];
  // The scripted 503 is logged by Chromium as a failed resource; that one is expected.
  const expected = (m) => m.location().url === target && /status of 503/.test(m.text());
  page.on('console', (m) => m.type() === 'error' && !expected(m) && problems.push(`console: ${m.text()}`));
  let failed;
  const pageError = new Promise((r) => (failed = r));
  page.on('pageerror', (e) => (problems.push(`pageerror: ${e.message}`), failed()));
  try {
    await page.goto(`${site.url}/index.html?target=${encodeURIComponent(target)}`);
    await Promise.race([
      page.waitForFunction(() => document.body?.dataset.result !== undefined, null, { timeout: 15_000 }),
      pageError.then(() => page.waitForTimeout(200)),
    ]).catch((e) => problems.push(`no result: ${e.message.split('\n')[0]}`));
    const raw = await page.evaluate(() => document.body?.dataset.result).catch(() => undefined);
    return { result: raw === undefined ? undefined : JSON.parse(raw), problems, misses: [...site.state.misses] };
  } finally {
    await page.close();
  }
}
