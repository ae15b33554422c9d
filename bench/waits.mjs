// Two bases (issue 26): the data behind the defaults of `baseMs` (the wait
// after a transient failure) and `throttleBaseMs` (after a 429 or 503).
//
//   - Throttling: the overload model of bench/overload.mjs (a token bucket
//     of R req/s, C closed-loop clients, 429 beyond it, with `Retry-After: 1`
//     or without any server wait), withBackoff with 3 attempts, no limiter,
//     for each candidate throttling base; virtual time
//     (@sinonjs/fake-timers over the real package code).
//   - Transient failures: Brooker's contention model (www/storm.js
//     `simulate`, as bench/storm.mjs runs it) at N = 10 and 100 clients, for
//     each candidate base (full jitter, ×2, cap 20 s: the default schedule).
//
//   node bench/waits.mjs [--json]      (run.mjs section 'waits')
import FakeTimers from '@sinonjs/fake-timers';
import { bucketServer, pct, runOut } from '../www/overload.js';
import { simulate } from '../www/storm.js';

const R = 100; // server capacity, req/s
const C = 10; // clients
const LATENCY_MS = 20;
const SECONDS = 30;
const RUNS = Number(process.env.RUNS) || 10;
const SEEDS = Number(process.env.SEEDS) || 100;

/** The throttling bases compared: 100 ms = `baseMs`, the behaviour before `throttleBaseMs`; 1000 ms = 10 × `baseMs`, the default since. */
export const THROTTLE_BASES = [100, 50, 250, 1000];
/** The transient bases compared (the AWS SDKs' 50 ms, our 100 ms, 1 s). */
export const TRANSIENT_BASES = [50, 100, 1000];

/** One throttling run: C clients of withBackoff(`options`) against the bucket; `ra`: 429s name `Retry-After: 1`. */
async function throttleRun(withBackoff, options, ra) {
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_700_000_000_000 });
  try {
    const srv = bucketServer(() => R);
    const send = () =>
      new Promise((resolve) =>
        setTimeout(() => {
          const status = srv.handle();
          resolve(new Response(null, { status, headers: status === 429 && ra ? { 'retry-after': '1' } : {} }));
        }, LATENCY_MS),
      );
    const end = Date.now() + SECONDS * 1000;
    const lat = [];
    let failed = 0;
    const loops = Array.from({ length: C }, async () => {
      const g = withBackoff(send, { maxAttempts: 3, ...options });
      while (Date.now() < end) {
        const t = Date.now();
        const ok = (await g('http://origin/')).status === 200;
        if (Date.now() > end) break;
        if (ok) lat.push(Date.now() - t);
        else failed++;
      }
    });
    await runOut(clock, loops, SECONDS);
    return { goodput: lat.length / SECONDS, throttled: srv.throttled, failed, p50: pct(lat, 50), p99: pct(lat, 99) };
  } finally {
    clock.uninstall();
  }
}

/** The throttling table's rows: means of RUNS runs per (server, base), interleaved. */
export async function throttling() {
  const { withBackoff } = await import('wasm-backoff');
  const rows = [];
  for (const ra of [true, false]) {
    const runs = THROTTLE_BASES.map(() => []);
    for (let r = 0; r < RUNS; r++) {
      for (const [i, b] of THROTTLE_BASES.entries()) runs[i].push(await throttleRun(withBackoff, { throttleBaseMs: b }, ra));
    }
    const mean = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
    for (const [i, b] of THROTTLE_BASES.entries()) {
      rows.push({ ra, base: b, ...Object.fromEntries(['goodput', 'throttled', 'failed', 'p50', 'p99'].map((k) => [k, mean(runs[i], k)])) });
    }
  }
  return rows;
}

/** The transient table's rows: Brooker's model, SEEDS seeds per (N, base). */
export async function transient() {
  const { Backoff } = await import('wasm-backoff/backoff');
  const rows = [];
  for (const clients of [10, 100]) {
    for (const baseMs of TRANSIENT_BASES) {
      let calls = 0;
      let time = 0;
      for (let r = 0; r < SEEDS; r++) {
        const seed = 1 + r * 7919;
        const out = simulate({
          clients,
          seed,
          makeBackoff: (client) => {
            const b = new Backoff({ baseMs, seed: seed * 1000 + client });
            return () => b.next() ?? 20_000;
          },
        });
        calls += out.calls;
        time += out.timeMs;
      }
      rows.push({ clients, baseMs, calls: calls / SEEDS, timeMs: time / SEEDS });
    }
  }
  return rows;
}

/** Both tables as markdown lines. */
export function table({ throttle, trans }) {
  const name = (b) => `${b} ms${b === 100 ? ' (= `baseMs`: before)' : b === 1000 ? ' (10 × `baseMs`: the default)' : ''}`;
  return [
    `Throttling: a token bucket of ${R} req/s (burst ${R / 10}); ${C} closed-loop clients of \`withBackoff\` (3 attempts, default schedule: full jitter, ×2), ${LATENCY_MS} ms per request, ${SECONDS} s of virtual time; means of ${RUNS} runs per row.`,
    '',
    '| 429 answers | throttling base | goodput (ok/s) | 429s received | calls failed | p50 ms | p99 ms |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...throttle.map(
      (r) =>
        `| ${r.ra ? '`Retry-After: 1`' : 'no server wait'} | ${name(r.base)} | ${r.goodput.toFixed(1)} | ${r.throttled.toFixed(0)} | ${r.failed.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} |`,
    ),
    '',
    `Transient failures: Brooker's contention model (www/storm.js), every client retrying until it succeeds, the default schedule on each base; means of ${SEEDS} seeds.`,
    '',
    '| clients | base | calls (writes) | completion ms |',
    '|---:|---:|---:|---:|',
    ...trans.map((r) => `| ${r.clients} | ${r.baseMs} ms | ${r.calls.toFixed(0)} | ${r.timeMs.toFixed(0)} |`),
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = { throttle: await throttling(), trans: await transient() };
  if (process.argv.includes('--json')) console.log(JSON.stringify(out, null, 1));
  else console.log(table(out).join('\n'));
}
