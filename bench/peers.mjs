// The libraries compared, in one place: what each one's typical import is
// (for the size and cold-start sections) and what its first usable call is.
// The delay functions of the peers (calculator and storm sections) live next
// to their use, in calc.mjs and storm-peers.mjs.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH = dirname(fileURLToPath(import.meta.url));
export const ROOT = join(BENCH, '..');
export const PKG = join(ROOT, 'pkg');

/** The peers, as dev-dependencies of bench/ (exact versions in bench/package.json). */
export const PEER_PACKAGES = ['ky', 'p-retry', 'fetch-retry', 'cockatiel', 'exponential-backoff', '@smithy/util-retry'];

/**
 * Each library's typical import. `entry` is the module source a user would
 * write (bundled with esbuild for the browser, run as-is in Node); it must
 * export `first(url)`, an async function making the first usable call: one
 * fetch of `url` for the fetch wrappers, one delay for the calculators.
 * `ours` rows name the pkg/ directory whose browser entry and .wasm a browser
 * downloads instead of a bundle (`form: 'bundler'`: its bundler.js, the wasm
 * inlined; `sizeOnly`: measured in the size section only; `bundled`: an
 * esbuild bundle of `entry`, exactly as the peers are measured).
 */
export function libraries() {
  const libs = [
    {
      name: 'wasm-backoff/backoff',
      what: '`new Backoff().next()`',
      ours: 'backoff',
      entry: `import { Backoff } from 'wasm-backoff/backoff';
export async function first() { return new Backoff().next(); }`,
    },
    {
      name: 'wasm-backoff',
      what: '`fetchWithBackoff(url)`',
      ours: '.',
      entry: `import { fetchWithBackoff } from 'wasm-backoff';
export async function first(url) { return (await fetchWithBackoff(url)).text(); }`,
    },
    {
      name: 'wasm-backoff (bundler form)',
      what: '`fetchWithBackoff(url)`, the `module` condition: wasm inlined as base64',
      ours: '.',
      form: 'bundler',
      sizeOnly: true,
      entry: `import { fetchWithBackoff } from 'wasm-backoff';
export async function first(url) { return (await fetchWithBackoff(url)).text(); }`,
    },
    {
      name: 'wasm-backoff (bundled with the app)',
      what: '`fetchWithBackoff(url)`, bundled by esbuild as the peers are (the `module` condition: one file, wasm inlined)',
      ours: '.',
      bundled: true,
      entry: `import { fetchWithBackoff } from 'wasm-backoff';
export async function first(url) { return (await fetchWithBackoff(url)).text(); }`,
    },
    {
      name: 'wasm-backoff/query',
      what: '`queryRetry().retryDelay(0, error)` (TanStack Query and SWR; the small module)',
      ours: 'query',
      entry: `import { queryRetry } from 'wasm-backoff/query';
export async function first() { return queryRetry().retryDelay(0, new Error('x')); }`,
    },
    {
      name: 'wasm-backoff/stream',
      what: '`fetchWithBackoff(url, undefined, { idleTimeoutMs })` (bodies that stream; the small module)',
      ours: 'stream',
      sizeOnly: true,
      entry: `import { fetchWithBackoff } from 'wasm-backoff/stream';
export async function first(url) { return (await fetchWithBackoff(url, undefined, { idleTimeoutMs: 5000 })).text(); }`,
    },
    {
      name: 'wasm-backoff/budget',
      what: '`new RetryBudget().withdraw()` (plain JS, no wasm)',
      ours: 'budget',
      entry: `import { RetryBudget } from 'wasm-backoff/budget';
export async function first() { return new RetryBudget().withdraw(); }`,
    },
    {
      name: 'wasm-backoff/hedge',
      what: '`hedge({ delayMs: 50 })`, for the `hedge` option (plain JS, no wasm)',
      ours: 'hedge',
      entry: `import { hedge } from 'wasm-backoff/hedge';
export async function first() { return hedge({ delayMs: 50 }).maxHedges; }`,
    },
    {
      name: 'wasm-backoff/failover',
      what: '`failover([...])`, for the `endpoints` option (plain JS, no wasm)',
      ours: 'failover',
      entry: `import { failover } from 'wasm-backoff/failover';
export async function first() { return failover(['https://a.example', 'https://b.example']).endpoints.length; }`,
    },
    {
      name: 'wasm-backoff/gate',
      what: "`createGate().run('k', fn)` (the gate module)",
      ours: 'gate',
      entry: `import { createGate } from 'wasm-backoff/gate';
export async function first() { return createGate().run('k', async () => 1); }`,
    },
    {
      name: 'wasm-backoff/stats',
      what: '`backoffStats({}, 3)` (the queue module)',
      ours: 'stats',
      entry: `import { backoffStats } from 'wasm-backoff/stats';
export async function first() { return backoffStats({}, 3); }`,
    },
    {
      name: 'wasm-backoff/queue',
      what: 'import only (the queue module: instantiates the wasm)',
      ours: 'queue',
      entry: `import * as q from 'wasm-backoff/queue';
export async function first() { return Object.keys(q).length; }`,
    },
  ];
  libs.push(
    {
      name: 'ky',
      what: '`ky(url).text()`',
      entry: `import ky from 'ky';
export async function first(url) { return ky(url).text(); }`,
    },
    {
      name: 'p-retry',
      what: '`pRetry(() => fetch(url))`',
      entry: `import pRetry from 'p-retry';
export async function first(url) { return pRetry(() => fetch(url).then((r) => r.text())); }`,
    },
    {
      name: 'fetch-retry',
      what: '`fetchRetry(fetch)(url)`',
      entry: `import fetchRetry from 'fetch-retry';
export async function first(url) { return (await fetchRetry(fetch)(url)).text(); }`,
    },
    {
      name: 'cockatiel',
      what: '`retry(handleAll, { backoff: new ExponentialBackoff() }).execute(() => fetch(url))`',
      entry: `import { retry, handleAll, ExponentialBackoff } from 'cockatiel';
export async function first(url) {
  return retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() }).execute(() => fetch(url).then((r) => r.text()));
}`,
    },
    {
      name: 'exponential-backoff',
      what: '`backOff(() => fetch(url))`',
      entry: `import { backOff } from 'exponential-backoff';
export async function first(url) { return backOff(() => fetch(url).then((r) => r.text())); }`,
    },
    {
      name: '@smithy/util-retry',
      what: '`new StandardRetryStrategy()`: token + first delay',
      entry: `import { StandardRetryStrategy } from '@smithy/util-retry';
export async function first() {
  const s = new StandardRetryStrategy();
  await s.acquireInitialRetryToken('bench');
  return s.retryBackoffStrategy.computeNextBackoffDelay(0);
}`,
    },
  );
  return libs;
}

/** The installed version of a package, looking in bench/ then the root. */
export function version(name) {
  for (const dir of [join(BENCH, 'node_modules', name), join(ROOT, 'node_modules', name)]) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    } catch {}
  }
  return '?';
}

/** Installs bench/'s dev-dependencies (the peers) when any is missing. */
export function ensurePeers() {
  const want = JSON.parse(readFileSync(join(BENCH, 'package.json'), 'utf8')).devDependencies;
  const missing = Object.keys(want).filter((p) => version(p) !== want[p] || !existsSync(join(BENCH, 'node_modules', p)));
  if (!missing.length) return;
  console.error(`[bench] installing ${missing.join(', ')} into bench/ …`);
  execFileSync('npm', ['install', '--prefix', BENCH, '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/**
 * Builds pkg/ when its output is missing. When it is merely older than its
 * sources (js/, src/, core/src/, scripts/build.sh) it is left alone — others
 * may be building the same tree — and the returned status says so, for
 * RESULTS.md; `--build` forces a build.
 */
export function ensureBuilt(force = false) {
  const outputs = ['index.js', 'node.mjs', 'wasm_backoff_bg.wasm', 'backoff/index.js', 'stats/index.js'].map((f) => join(PKG, f));
  const newest = (dir) => {
    let t = 0;
    const walk = (d) => {
      for (const e of readdirSafe(d)) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else t = Math.max(t, statSync(p).mtimeMs);
      }
    };
    walk(dir);
    return t;
  };
  const missing = outputs.some((f) => !existsSync(f));
  if (missing || force) {
    console.error(`[bench] ${missing ? 'pkg/ is not built' : '--build'}: running scripts/build.sh …`);
    execFileSync('bash', ['scripts/build.sh'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    return 'built by this run';
  }
  const src = Math.max(...['js', 'src', 'core/src'].map((d) => newest(join(ROOT, d))), statSync(join(ROOT, 'scripts/build.sh')).mtimeMs);
  const built = Math.min(...outputs.map((f) => statSync(f).mtimeMs));
  return built < src
    ? 'existing build, OLDER than some source file (run `npm run build` or `npm run bench -- --build`)'
    : 'existing build, newer than its sources';
}

function readdirSafe(d) {
  try {
    return readdirSync(d, { withFileTypes: true });
  } catch {
    return [];
  }
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

export const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '—');
