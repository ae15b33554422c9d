// Hedging against a long tail: one request in 20 (in arrival order: exactly
// 5 %) is answered after SLOW_MS, the others after about FAST_MS. N calls,
// CONCURRENCY at a time, through withBackoff without hedging, then with
// `hedge({ delayMs })` at the 95th percentile the unhedged run measured
// (nearest rank: with exactly 5 % slow, the slowest of the fast answers).
// Measured: p50, p95, p99 and max latency, p99 ÷ p50, requests per call.
// Target (issue 27): p99 ≤ 3× the median with ≤ 1.1× the requests.
//
// Two settings. Virtual time (@sinonjs/fake-timers over the shipped
// package's code, a fake origin whose fast answers take 10-30 ms, uniform,
// seeded): exact and reproducible, at full scale (20 ms / 2 s) at no
// waiting. Real time over real HTTP: a server on
// 127.0.0.1 in a process of its own (20 ms / 2 s): what a loaded machine
// adds (its noise sets the measured p95, hence the hedge's delay).
//
//   node bench/hedge.mjs     after `npm run build`; prints the table (bench/run.mjs puts it in RESULTS.md)
import { fileURLToPath } from 'node:url';
import { spawn } from 'node:child_process';
import os from 'node:os';
import FakeTimers from '@sinonjs/fake-timers';

const N = 600;
const CONCURRENCY = 5;

/** The server: per path, request k (0-based) waits SLOW if k % 20 === 7, else FAST; GET /count?path=… answers the count. */
const SERVER = `
import http from 'node:http';
const [fast, slow] = process.argv.slice(-2).map(Number);
const counts = new Map();
const srv = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  if (u.pathname === '/count') return res.end(String(counts.get(u.searchParams.get('path')) ?? 0));
  const k = counts.get(u.pathname) ?? 0;
  counts.set(u.pathname, k + 1);
  const t = setTimeout(() => res.end('ok'), k % 20 === 7 ? slow : fast);
  res.on('close', () => clearTimeout(t));
});
srv.listen(0, '127.0.0.1', () => console.log(srv.address().port));
process.stdin.on('end', () => process.exit(0)).resume();
`;

/** Starts the server process; resolves with its URL, count(path) and close(). */
function start(fast, slow) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', SERVER, String(fast), String(slow)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (d) => {
      const url = `http://127.0.0.1:${String(d).trim()}`;
      resolve({
        url,
        count: (path) =>
          fetch(`${url}/count?path=${path}`)
            .then((r) => r.text())
            .then(Number),
        close: () => child.stdin.end(),
      });
    });
  });
}

/** One run: N calls through `f`; returns their latencies (sorted) and the requests the server saw. */
async function measure(srv, path, f, now = () => performance.now()) {
  const lat = [];
  let next = 0;
  const worker = async () => {
    while (next < N) {
      next++;
      const t0 = now();
      const res = await f(srv.url + path);
      await res.arrayBuffer();
      lat.push(now() - t0);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return { lat: lat.sort((a, b) => a - b), requests: await srv.count(path) };
}

/**
 * The fake origin of the virtual runs, as `start` answers: per path,
 * request k waits SLOW if k % 20 === 7, else 10-30 ms × scale (seeded); an
 * abort rejects at once and clears its timer.
 */
function fakeOrigin(scale) {
  const counts = new Map();
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const send = (/** @type {string} */ url, /** @type {RequestInit=} */ init) => {
    const path = new URL(url).pathname;
    const k = counts.get(path) ?? 0;
    counts.set(path, k + 1);
    const ms = (k % 20 === 7 ? 2000 : 10 + 20 * rand()) * scale;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve(new Response('ok')), ms);
      init?.signal?.addEventListener('abort', () => (clearTimeout(t), reject(init.signal?.reason)));
    });
  };
  return { url: 'http://origin.test', send, count: async (/** @type {string} */ p) => counts.get(p) ?? 0 };
}

/** Both runs in virtual time; `lib` has withBackoff and hedge. */
export async function virtualRuns(lib, { scale = 1 } = {}) {
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_700_000_000_000 });
  try {
    const o = fakeOrigin(scale);
    const go = (path, f) => {
      const p = measure(o, path, f, () => Date.now());
      return clock.runToLastAsync().then(async function more() {
        // (timers set by the answers of the last ones: run until every call has ended)
        for (let i = 0; i < 1000 && clock.countTimers(); i++) await clock.runToLastAsync();
        return p;
      });
    };
    return await compare(lib, o.send, (path, f) => go(path, f), scale);
  } finally {
    clock.uninstall();
  }
}

/** Nearest-rank percentile of sorted `xs`. */
const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.ceil(p * xs.length) - 1)];

/**
 * The two runs through `send` (a fetch function): without hedging, then
 * hedged at the unhedged run's 95th percentile; `run(path, f)` measures
 * one. Returns the rows and the hedge delay used.
 */
async function compare(lib, send, run, scale) {
  const plain = await run('/plain', lib.withBackoff(send));
  const delayMs = Math.round(pct(plain.lat, 0.95) * 10) / 10;
  const f = lib.withBackoff(send, { hedge: lib.hedge({ delayMs }) });
  const hedged = await run('/hedged', f);
  const row = (name, r) => ({
    name,
    p50: pct(r.lat, 0.5),
    p95: pct(r.lat, 0.95),
    p99: pct(r.lat, 0.99),
    max: r.lat.at(-1),
    perCall: r.requests / N,
  });
  return {
    FAST_MS: 20 * scale,
    SLOW_MS: 2000 * scale,
    delayMs,
    rows: [row('without hedging', plain), row(`hedge({ delayMs: ${delayMs} })`, hedged)],
  };
}

/** Both runs in real time against the server process (20 ms / 2 s × scale). */
export async function realRuns(lib, { scale = 1 } = {}) {
  const srv = await start(20 * scale, 2000 * scale);
  try {
    // (warm the connection pool: the first calls would pay the handshakes)
    await Promise.all(Array.from({ length: CONCURRENCY }, () => fetch(`${srv.url}/warm`).then((r) => r.arrayBuffer())));
    return await compare(lib, fetch, (path, f) => measure(srv, path, f), scale);
  } finally {
    srv.close();
  }
}

/** The section's lines: virtual time at full scale and at a tenth, then real time at full scale. */
export async function hedgeSection(lib) {
  const fmt = (x) => (x < 100 ? x.toFixed(1) : Math.round(x).toLocaleString('en-US'));
  const lines = [
    `One request in 20 (exactly 5 %, in arrival order) is answered after the slow delay, the others after the fast one; ` +
      `${N} calls, ${CONCURRENCY} at a time, without hedging, then hedged at the 95th percentile the unhedged run measured ` +
      `(\`node bench/hedge.mjs\`). Virtual time: @sinonjs/fake-timers over the shipped package, fast answers 10-30 ms ` +
      `(uniform, seeded) × the scale. Real time: a server on 127.0.0.1 in its own process, real HTTP. ` +
      `Target: p99 ≤ 3× the median with ≤ 1.1× the requests.`,
    '',
    '| setting, delays (fast / slow) | policy | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) | p99 ÷ p50 | requests per call |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
  ];
  const load = os.loadavg()[0];
  // (full scale in both: virtual time costs no waiting; a tenth of it would fall below the virtual clock's 1 ms step)
  for (const [name, runs, scale] of [
    ['virtual', virtualRuns, 1],
    ['real HTTP', realRuns, 1],
  ]) {
    const r = await runs(lib, { scale });
    r.rows.forEach((x, i) => {
      const label = i ? '' : `${name}, ${r.FAST_MS} ms / ${r.SLOW_MS} ms`;
      lines.push(
        `| ${label} | ${x.name} | ${fmt(x.p50)} | ${fmt(x.p95)} | ${fmt(x.p99)} | ${fmt(x.max)} | ${(x.p99 / x.p50).toFixed(2)}× | ${x.perCall.toFixed(3)} |`,
      );
    });
  }
  lines.push('', `(load average ${load.toFixed(1)} on ${os.availableParallelism()} cores at the start of the real-time run)`);
  return lines;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lib = { ...(await import('../pkg/node.mjs')), ...(await import('../pkg/hedge/node.mjs')) };
  console.log((await hedgeSection(lib)).join('\n'));
}
