// The benchmark suite: this package and its peers, measured side by side in
// one run, written to bench/RESULTS.md.
//
//   npm run bench                  everything (a few minutes), writes bench/RESULTS.md
//   npm run bench -- --quick       a fast smoke run (seconds; few samples, figures
//                                  not meaningful), written to $TMPDIR/wasm-backoff-RESULTS.md
//   options: --only=size,calls,alloc,cold,throughput,retryfn,otel,calc,storm,outage,overload,limiter,waits,queue,fleet,hedge,failover,reconnect,quota,demo
//            --seeds=<n> (storm)
//            --outage=<file> (instead of bench/outage.mjs, to test that hook)
//            --build (run scripts/build.sh first)   --out=<file>
//
// Before measuring: builds pkg/ if it is not built, installs bench/'s
// dev-dependencies (the peers, exact versions) if missing. Sections live in
// size.mjs, cold.mjs, throughput.mjs (spawned), calc.mjs, storm.mjs (+
// storm-policies.mjs for our rows, storm-peers.mjs for the peers'),
// bench/outage.mjs when it exists (see outageSection), queue.mjs, fleet.mjs,
// hedge.mjs, failover.mjs, reconnect.mjs, quota.mjs and demo.mjs.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import { BENCH, ROOT, ensureBuilt, ensurePeers, version, PEER_PACKAGES } from './peers.mjs';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const QUICK = args.has('quick');
const ALL = [
  'size',
  'calls',
  'alloc',
  'cold',
  'throughput',
  'retryfn',
  'otel',
  'calc',
  'storm',
  'outage',
  'overload',
  'limiter',
  'waits',
  'queue',
  'fleet',
  'stream',
  'hedge',
  'failover',
  'reconnect',
  'quota',
  'demo',
];
const only = args.get('only')?.split(',') ?? ALL;
for (const s of only) if (!ALL.includes(s)) throw new RangeError(`--only: unknown section ${s} (one of ${ALL.join(', ')})`);
const partial = QUICK || args.has('only');
const OUT = args.get('out') ?? (partial ? join(os.tmpdir(), 'wasm-backoff-RESULTS.md') : join(BENCH, 'RESULTS.md'));
const log = (m) => process.stderr.write(m + '\n');

const started = new Date();
const t0 = Date.now();
const build = ensureBuilt(args.has('build'));
ensurePeers();

const tmp = mkdtempSync(join(os.tmpdir(), 'wasm-backoff-bench-'));
const sections = [];
const timings = [];
let chromiumVersion;
const load0 = os.loadavg();

async function section(key, title, fn) {
  if (!only.includes(key)) return;
  const s0 = Date.now();
  log(`[bench] ${title} …`);
  try {
    const lines = await fn();
    if (lines) sections.push(`## ${title}`, '', ...lines, '');
  } catch (e) {
    // A failing section is reported, not hidden, and does not stop the others.
    process.exitCode = 1;
    log(`[bench] ${title} FAILED: ${e.stack ?? e}`);
    sections.push(`## ${title}`, '', `**This section failed in this run:** \`${String(e.message ?? e).split('\n')[0]}\``, '');
  }
  timings.push(`${key} ${((Date.now() - s0) / 1000).toFixed(0)} s`);
}

try {
  let bundles;
  await section('size', '1. Size: what a browser downloads', async () => {
    const { sizeSection } = await import('./size.mjs');
    const r = sizeSection({ dir: tmp });
    bundles = r.bundles;
    return r.lines;
  });

  await section('calls', '1a. Wasm calls per fetch', async () => {
    // In a fresh process: it wraps the module's exports before the package loads.
    return execFileSync(process.execPath, [join(BENCH, 'calls.mjs')], { cwd: ROOT, encoding: 'utf8' })
      .trimEnd()
      .split('\n');
  });

  await section('alloc', '1b. Allocation: `new Backoff()` + `next()` with many objects alive', async () => {
    if (!existsSync(join(BENCH, 'alloc.mjs'))) return null;
    const { allocSection } = await import('./alloc.mjs');
    return allocSection({ quick: QUICK, before: process.env.WASM_BACKOFF_BEFORE });
  });

  await section('cold', '2. Cold start: from `import` to the first usable call', async () => {
    const { cold } = { cold: await import('./cold.mjs') };
    if (!bundles) bundles = (await import('./size.mjs')).sizeSection({ dir: tmp }).bundles;
    const n = QUICK ? 2 : 15;
    const r = await cold.coldSection({ samples: n, browserSamples: n, bundles, libDir: tmp, log });
    chromiumVersion = r.chromiumVersion;
    return r.lines;
  });

  await section('throughput', '3. Wrapper overhead: requests/s when the first attempt succeeds', async () => {
    const md = join(tmp, 'throughput.md');
    const extra = QUICK ? ['--rounds=3', '--seq=100', '--conc=500'] : ['--seq-rounds=41', '--conc-rounds=19'];
    await run(process.execPath, [join(BENCH, 'throughput.mjs'), `--out=${md}`, ...extra]);
    // Its own file starts with a title; nest its sections under ours.
    const lines = readFileSync(md, 'utf8').split('\n');
    while (lines.length && (lines[0].startsWith('# ') || !lines[0].trim())) lines.shift();
    while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
    return lines.map((l) => (l.startsWith('## ') ? `#${l}` : l));
  });

  await section('retryfn', '3b. retry(fn) against p-retry: ns per call of a function that resolves at once', async () => {
    return (
      await run(process.execPath, [join(BENCH, 'retryfn.mjs'), String(QUICK ? 3 : 31)], { stdio: ['ignore', 'pipe', 'inherit'] })
    ).split('\n');
  });

  await section('otel', '3c. Telemetry: wrapper overhead with wasm-backoff/otel (bench/otel.mjs)', async () => {
    const argv = QUICK ? ['3', '100'] : ['41', '300'];
    return (await run(process.execPath, [join(BENCH, 'otel.mjs'), ...argv], { stdio: ['ignore', 'pipe', 'inherit'] })).split('\n');
  });

  await section('calc', '4. Calculator: ns per delay', async () => {
    // In a fresh process: after the other sections this one's heap (playwright,
    // bundles) made allocation-heavy contenders several times slower.
    return (await run(process.execPath, [join(BENCH, 'calc.mjs'), String(QUICK ? 3 : 41)], { stdio: ['ignore', 'pipe', 'inherit'] })).split(
      '\n',
    );
  });

  await section('storm', "5. Retry storm: Brooker's optimistic-concurrency model", async () => {
    const { stormSection } = await import('./storm.mjs');
    const seeds = Number(args.get('seeds') ?? (QUICK ? 20 : 400));
    return (await stormSection({ seeds, log: QUICK ? () => {} : log })).lines;
  });

  await section('outage', '6. Outage gate (bench/outage.mjs)', outageSection);
  await section('overload', '7. Overload: adaptive rate limiting against AWS adaptive mode (bench/overload.mjs)', async () => {
    // Spawned: fake timers replace the globals of the process they run in.
    const out = await run(process.execPath, [join(BENCH, 'overload.mjs'), '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const { table } = await import('./overload.mjs');
    return table(JSON.parse(out));
  });

  await section('limiter', '7a. The adaptive limiter in every traffic shape (bench/overload.mjs --matrix, --http)', async () => {
    // Spawned, as above; then the shared shape in real time against the scripted server.
    const env = { ...process.env, ...(QUICK ? { SECONDS: '5' } : {}) };
    const rows = await run(process.execPath, [join(BENCH, 'overload.mjs'), '--matrix', '--json'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env,
    });
    const http = await run(process.execPath, [join(BENCH, 'overload.mjs'), '--http', '--json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const { matrixTable, httpTable } = await import('./overload.mjs');
    return [...matrixTable(JSON.parse(rows)), '', ...httpTable(JSON.parse(http))];
  });

  await section('waits', '7b. Two bases: the wait after throttling and after a transient failure (bench/waits.mjs)', async () => {
    // Spawned: fake timers replace the globals of the process they run in.
    const env = { ...process.env, ...(QUICK ? { RUNS: '1', SEEDS: '5' } : {}) };
    const out = await run(process.execPath, [join(BENCH, 'waits.mjs'), '--json'], { stdio: ['ignore', 'pipe', 'inherit'], env });
    const { table } = await import('./waits.mjs');
    return table(JSON.parse(out));
  });

  await section('queue', '8. Task queue: a pass with 10^3, 10^4 and 10^5 records in each store', async () => {
    const { queueSection } = await import('./queue.mjs');
    return queueSection({ quick: QUICK, log });
  });

  await section('fleet', '9. Fleet: a shared gate and a shared budget (GateObject) vs per isolate (bench/fleet.mjs)', async () => {
    const { fleetSection } = await import('./fleet.mjs');
    return fleetSection({ quick: QUICK, log });
  });

  await section('stream', '10. Streams: idle timeout, replay buffer, resume (bench/stream.mjs)', async () => {
    // In a fresh process, with a GC to call: the replay buffer's part measures retained memory.
    const argv = ['--expose-gc', join(BENCH, 'stream.mjs'), ...(QUICK ? ['--quick'] : [])];
    return (await run(process.execPath, argv, { stdio: ['ignore', 'pipe', 'inherit'] })).trim().split('\n');
  });

  await section('demo', '12. Demo: a control change and the first load in Chromium (bench/demo.mjs)', async () => {
    const { demoSection } = await import('./demo.mjs');
    return demoSection({ rounds: QUICK ? 1 : 7, log });
  });

  await section('hedge', '13. Hedging: a 5 % tail of 2 s answers (bench/hedge.mjs)', async () => {
    const { hedgeSection } = await import('./hedge.mjs');
    const lib = { ...(await import('../pkg/node.mjs')), ...(await import('../pkg/hedge/node.mjs')) };
    return hedgeSection(lib);
  });

  await section('failover', '14. Failover: the primary down 10 s, a healthy secondary (bench/failover.mjs)', async () => {
    const { failoverSection, POLICIES } = await import('./failover.mjs');
    const { loadLib } = await import('../www/outage.js');
    return failoverSection(await loadLib((m) => import(`../pkg/${m ? `${m}/` : ''}node.mjs`), POLICIES), QUICK ? { runs: 1 } : undefined);
  });

  await section('reconnect', '15. Reconnect storm: 10,000 clients of one restarted server (bench/reconnect.mjs)', async () => {
    const out = join(tmp, 'RECONNECT.md');
    execFileSync(process.execPath, [join(BENCH, 'reconnect.mjs'), `--runs=${QUICK ? 2 : 10}`, `--out=${out}`], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    // (its own file's title dropped; its scenarios become sub-headings)
    return readFileSync(out, 'utf8')
      .split('\n')
      .slice(2)
      .map((l) => (l.startsWith('## ') ? `#${l}` : l));
  });

  await section('quota', '16. Quotas against an API with published limits (bench/quota.mjs)', async () => {
    const { measure, table } = await import('./quota.mjs');
    const rows = await measure();
    const check = rows
      .filter((r) => r.name.includes('quota'))
      .map((r) => `- ${r.shape}: ${r.ratio429.toFixed(3)}× the 429s, ${r.goodRatio.toFixed(3)}× the goodput of the defaults`);
    return [
      table(rows),
      '',
      'With `limit: quota(...)`, against the defaults on the same calls (target: ≤ 0.1× the 429s at ≥ 0.95× the goodput):',
      '',
      ...check,
    ];
  });
} finally {
  rmSync(tmp, { recursive: true, force: true });
}

// ------------------------------------------------------------------ header
chromiumVersion ??= (() => {
  try {
    return execFileSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'not found';
  }
})();
const cpus = os.cpus();
const osName = (() => {
  try {
    return /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))[1];
  } catch {
    return os.type();
  }
})();
const load1 = os.loadavg();
const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
const header = [
  '# Benchmarks: wasm-backoff and its peers',
  '',
  `Produced by \`${command}\` (bench/run.mjs) on ${started.toISOString().replace(/\.\d+Z$/, 'Z')}, in ${((Date.now() - t0) / 1000).toFixed(0)} s (${timings.join(', ')}).${QUICK ? ' **Quick smoke run: too few samples for the figures to mean anything.**' : ''}`,
  '',
  `- Machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${osName} (${os.platform()} ${os.release()} ${os.arch()})`,
  `- Node ${process.version}; Chromium ${chromiumVersion.replace(/^Chromium\s*/, '')} (headless, Debian's, via playwright-core ${version('playwright-core')})`,
  `- Load average (1 min) at the start ${load0[0].toFixed(2)}, at the end ${load1[0].toFixed(2)}: others may share this machine; every comparison is interleaved within the run, so ratios hold up better than absolute figures.`,
  `- wasm-backoff ${version('wasm-backoff')} from pkg/ (${build}); peers (bench/'s dev-dependencies only): ${PEER_PACKAGES.map((p) => `${p} ${version(p)}`).join(', ')}; esbuild ${version('esbuild')}.`,
  '',
  'Every figure is a median over interleaved, repeated samples and comes with its ratio to the reference named under its table; no absolute time stands alone.',
  '',
];
// The before/after record of past reworks (static: measured once, on builds that no longer exist).
const history = existsSync(join(BENCH, 'HISTORY.md')) && !partial ? ['', readFileSync(join(BENCH, 'HISTORY.md'), 'utf8')] : [];
writeFileSync(OUT, [...header, ...sections, ...history].join('\n'));
log(`[bench] wrote ${relative(process.cwd(), OUT) || OUT} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
process.exit(process.exitCode ?? 0);

// ------------------------------------------------------------------ helpers
/** Runs a child to completion; resolves with its stdout when piped. */
function run(cmd, argv, opts = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, argv, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], ...opts });
    let out = '';
    p.stdout?.on('data', (d) => (out += d));
    p.on('error', reject);
    p.on('exit', (c) => (c === 0 ? resolve(out.trimEnd()) : reject(new Error(`${relative(ROOT, argv[0])} exited with ${c}`))));
  });
}

/**
 * bench/outage.mjs (owned by the outage-gate work) when it exists: imported in
 * a child process; whatever it prints to stdout is its table. If it prints
 * nothing on import but exports `table` (or a default function), that is
 * called with { quick } and the string it returns (or resolves to) is used.
 * BENCH_QUICK=1 is set in the environment for quick runs.
 */
async function outageSection() {
  const file = args.get('outage') ?? join(BENCH, 'outage.mjs'); // --outage=<file>: to test this hook
  if (!existsSync(file)) return null; // no section until the file exists
  const code = `let printed = false;
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (...a) => { printed = true; return write(...a); };
const m = await import(${JSON.stringify(new URL(`file://${file}`).href)});
const f = m.table ?? m.default;
if (!printed && typeof f === 'function') {
  const t = await f({ quick: ${QUICK} });
  if (typeof t === 'string') write(t);
  else if (Array.isArray(t)) write(t.join('\\n'));
}`;
  const out = await new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', code], {
      cwd: ROOT,
      env: { ...process.env, ...(QUICK ? { BENCH_QUICK: '1' } : {}) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let s = '';
    const timer = setTimeout(() => p.kill('SIGTERM'), 5 * 60_000);
    p.stdout.on('data', (d) => (s += d));
    p.on('error', reject);
    p.on('exit', (c, sig) => {
      clearTimeout(timer);
      c === 0 ? resolve(s) : reject(new Error(`bench/outage.mjs exited with ${c ?? sig}`));
    });
  });
  const text = out.trim();
  return text ? text.split('\n').map((l) => (/^#{1,2} /.test(l) ? `##${l}` : l)) : ['bench/outage.mjs ran but printed no table.'];
}
