// 7. Allocation under load: the cost of `new Backoff()` + `next()` as a
// function of how many Backoff objects are alive (the issue's target: flat
// within 2× from 10^3 to 10^6 live objects).
//
// One fresh Node process per (variant, N): it imports the package, creates N
// live Backoffs (`new Backoff({ seed: i })`, kept in an array), then times
// M = 20 000 iterations of `const b = new Backoff(); b.next(); b.free?.()`,
// 5 repetitions (the event loop turns between them, so finalizers may run).
// Variants:
// - current, `b.free()`: pkg/node.mjs, the slot released at once;
// - current, no free(): the same, the objects left to the GC's registry;
// - before (--before): an older pkg/node.mjs, new + next only (an old one may
//   have no free(); wasm-bindgen's FinalizationRegistry frees its objects).
// The wasm memory is read by wrapping WebAssembly.Instance in the child and
// keeping the exported Memory (both packages use `new WebAssembly.Instance`).
//
//   node bench/alloc.mjs [--quick] [--before <path to an old pkg/node.mjs>]
//   (--quick: N = 10^3 and 10^5 only; any child is capped at 120 s)
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const SELF = fileURLToPath(import.meta.url);
const CURRENT = new URL('../pkg/node.mjs', import.meta.url).href;
const M = 20_000;
const REPS = 5;
const CAP_MS = 120_000;
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const fmt = (x, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '–');
const MiB = (b) => b / 2 ** 20;

/** In the child: one (variant, N) measurement, printed as JSON. */
async function child(variant, n, spec) {
  const mems = [];
  WebAssembly.Instance = new Proxy(WebAssembly.Instance, {
    construct(T, args, nt) {
      const inst = Reflect.construct(T, args, nt);
      mems.push(...Object.values(inst.exports).filter((x) => x instanceof WebAssembly.Memory));
      return inst;
    },
  });
  const { Backoff } = await import(spec);
  const wasm = () => mems.reduce((s, m) => s + m.buffer.byteLength, 0);
  let sink = new Backoff().next();
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const live = [];
  for (let i = 0; i < n; i++) live.push(new Backoff({ seed: i }));
  const setupMs = performance.now() - t0;
  const rssSetup = process.memoryUsage().rss - rss0;
  const wasmSetup = wasm();
  const free = variant === 'free';
  const ns = [];
  for (let r = 0; r < REPS; r++) {
    await sleep(0);
    const t = performance.now();
    for (let i = 0; i < M; i++) {
      const b = new Backoff();
      sink += b.next();
      if (free) b.free();
    }
    ns.push(((performance.now() - t) * 1e6) / M);
  }
  sink += live[n - 1].next(); // keeps the N objects (and `sink`) alive to the end
  const out = { ns, setupMs, rssSetup, wasmSetup, wasmEnd: wasm(), rssEnd: process.memoryUsage().rss - rss0, sink };
  process.stdout.write(JSON.stringify(out));
}

/** In the parent: one child, retried while pkg/ is missing (a rebuild in progress). */
async function measure(variant, n, spec, log) {
  for (let attempt = 1; ; attempt++) {
    const t = performance.now();
    try {
      const out = execFileSync(process.execPath, ['--max-old-space-size=8192', SELF, '--child', variant, String(n), spec], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        timeout: CAP_MS,
        killSignal: 'SIGKILL',
      });
      log(`[alloc] ${variant} N=${n}: ${((performance.now() - t) / 1e3).toFixed(1)} s`);
      return JSON.parse(out);
    } catch (e) {
      if (e.code === 'ETIMEDOUT' || e.signal === 'SIGKILL') return { timeout: true };
      const why = String(e.stderr || e.message);
      if (attempt < 6 && /ERR_MODULE_NOT_FOUND|ENOENT/.test(why)) {
        log(`[alloc] ${variant} N=${n}: package missing, retrying in 5 s`);
        await sleep(5000);
        continue;
      }
      return {
        error:
          why
            .trim()
            .split('\n')
            .find((l) => /Error/.test(l)) ?? why.split('\n')[0],
      };
    }
  }
}

/** Commit of the git checkout holding `file`, if any (for the label). */
function commitOf(file) {
  try {
    return execFileSync('git', ['-C', dirname(file), 'rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

/** Runs every (variant, N) and returns the markdown lines. */
export async function allocSection({ quick = false, before = undefined, log = () => {} } = {}) {
  const ns = quick ? [1e3, 1e5] : [1e3, 1e5, 1e6];
  const variants = [
    { key: 'free', label: '**current**, `b.free()`', spec: CURRENT },
    { key: 'gc', label: '**current**, no free() (GC registry)', spec: CURRENT },
  ];
  if (before) {
    const file = resolve(before);
    const c = commitOf(file);
    variants.push({ key: 'old', label: `before${c ? ` (${c})` : ''}, no free()`, spec: pathToFileURL(file).href });
  }
  const rows = [];
  for (const v of variants) {
    for (const n of ns) rows.push({ v, n, ...(await measure(v.key, n, v.spec, log)) });
    // The old free-list allocator may not even set up 10^6 objects within the cap: add 4·10^5.
    const top = rows.at(-1);
    if (v.key === 'old' && top.n === 1e6 && top.timeout) rows.splice(-1, 0, { v, n: 4e5, ...(await measure(v.key, 4e5, v.spec, log)) });
  }
  const med = (r) => (r?.ns ? median(r.ns) : NaN);
  const find = (key, n) => rows.find((r) => r.v.key === key && r.n === n);
  const N = (n) => (n >= 1e3 && Math.log10(n) % 1 === 0 ? `10^${Math.log10(n)}` : n.toLocaleString('en'));
  const lines = [
    '| variant | live Backoffs | ns / (new + next [+ free]) | min–max of 5 | vs 10^3 live | vs before | setup of N: ms | wasm memory MiB (set up → end) | rss Δ MiB (set up → end) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => {
      const head = `| ${r.v.label} | ${N(r.n)} |`;
      if (r.timeout) return `${head} timeout (> ${CAP_MS / 1e3} s, setup included) | | | | | | |`;
      if (r.error) return `${head} FAILED: ${r.error} | | | | | | |`;
      const m = med(r);
      const old = r.v.key === 'old' ? NaN : med(find('old', r.n));
      return `${head} ${fmt(m, 0)} | ${fmt(Math.min(...r.ns), 0)}–${fmt(Math.max(...r.ns), 0)} | ${fmt(m / med(find(r.v.key, 1e3)))} | ${fmt(m / old)} | ${fmt(r.setupMs, 0)} | ${fmt(MiB(r.wasmSetup), 1)} → ${fmt(MiB(r.wasmEnd), 1)} | ${fmt(MiB(r.rssSetup), 0)} → ${fmt(MiB(r.rssEnd), 0)} |`;
    }),
    '',
    `One fresh Node ${process.version} process per row: it creates N live Backoffs (\`new Backoff({ seed: i })\`, kept in an array; "setup" is that loop), then times ${M.toLocaleString('en')} iterations of \`const b = new Backoff(); b.next()\` (current: \`b.free()\` too, or not: left to the FinalizationRegistry), ${REPS} times with an event-loop turn between; the table gives the median ns per iteration. "vs 10^3 live": to the same variant with 1 000 live (the target: within 2× up to 10^6); "vs before": to the before row at the same N (its objects are freed only by wasm-bindgen's FinalizationRegistry; it has no free()). Memory: the wasm linear memory (read from the instance's exported Memory, caught by wrapping \`WebAssembly.Instance\`) and the process's rss growth from just before the N objects are created, after setup and at the end. A child is killed after ${CAP_MS / 1e3} s (setup included).`,
  ];
  return lines;
}

if (process.argv[1] === SELF) {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') await child(argv[1], Number(argv[2]), argv[3]);
  else {
    const i = argv.indexOf('--before');
    const before = i >= 0 ? argv[i + 1] : undefined;
    const t0 = performance.now();
    const lines = await allocSection({ quick: argv.includes('--quick'), before, log: (m) => console.error(m) });
    console.log(lines.join('\n'));
    console.error(`[alloc] total ${((performance.now() - t0) / 1e3).toFixed(1)} s`);
  }
}
