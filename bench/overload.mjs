// Overload: a server with a fixed capacity (a token bucket of R requests per
// second; beyond it, 429 with Retry-After: 1) and C clients that each want
// more than R/C. Compared in one run, in virtual time (@sinonjs/fake-timers:
// the real package code and the real @smithy/util-retry code, their
// Date.now and setTimeout faked, so a 30 s scenario runs in a second):
//
//   - no limiter: withBackoff (maxAttempts 3, the default schedule);
//   - ours: the same, through a gate with `limit: 'adaptive'` per client
//     (one gate per client: each client is its own isolate);
//   - AWS: @smithy/util-retry's AdaptiveRetryStrategy (3 attempts), the loop
//     the SDK's retry middleware runs around each request.
//
// Each client sends its calls one after another (closed loop); a call ends
// in a success or in a failure once its attempts are spent. Reported, as
// means of RUNS runs (jitter is random, so runs differ): goodput
// (successful calls per second), 429s received, p50/p99 latency of
// successful calls; and the range of the per-run ratios to AWS.
//
//   node bench/overload.mjs [--json]   (run.mjs section 'overload')
import FakeTimers from '@sinonjs/fake-timers';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  adaptiveGate,
  bucketServer,
  firstSends,
  LATENCY_MS as M_LATENCY_MS,
  oursClient,
  overloadRun,
  pct,
  runOut,
  STEP_SPEC,
  sdkClient,
} from '../www/overload.js';
import { RPC_MS, fakeNamespace, fleetLib } from './fleet.mjs';

const R = 100; // server capacity, req/s
const BURST = 10; // server bucket size
const C = 10; // clients
const LATENCY_MS = 20; // server time per request
const SECONDS = 30;
const RUNS = Number(process.env.RUNS) || 20; // each scenario, interleaved; a single run's 429 count varies by ±20 %

/** The server: a token bucket of R/s (burst R/10 = BURST); 429 with Retry-After: 1 beyond it. */
const server = () => bucketServer(() => R);

/** A fetch function answering from `srv` after LATENCY_MS (virtual). */
const fetchOf = (srv) => () =>
  new Promise((resolve) =>
    setTimeout(() => {
      const status = srv.handle();
      resolve(new Response(null, { status, headers: status === 429 ? { 'retry-after': '1' } : {} }));
    }, LATENCY_MS),
  );

/** Runs C closed-loop clients of `call` for SECONDS of virtual time. */
async function scenario(name, makeClient) {
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_700_000_000_000 });
  try {
    const srv = server();
    const end = Date.now() + SECONDS * 1000;
    const lat = [];
    let failed = 0;
    const hubs = new Map(); // (the shared limiter's objects: one per scenario run)
    const clients = Array.from({ length: C }, () => makeClient(fetchOf(srv), hubs));
    const loops = clients.map(async (call) => {
      while (Date.now() < end) {
        const t = Date.now();
        const ok = await call();
        if (Date.now() > end) break;
        if (ok) lat.push(Date.now() - t);
        else failed++;
      }
    });
    await runOut(clock, loops, SECONDS);
    return {
      name,
      goodput: lat.length / SECONDS,
      throttled: srv.throttled,
      failed,
      p50: pct(lat, 50),
      p99: pct(lat, 99),
    };
  } finally {
    clock.uninstall();
  }
}

export async function overload() {
  const { withBackoff } = await import('wasm-backoff');
  const { createGate } = await import('wasm-backoff/gate');
  // The fleet's shared limiter (workerd build only): js/fleet/ bundled for Node, its object in-process.
  const dir = mkdtempSync(join(os.tmpdir(), 'wb-overload-'));
  const { sharedGate, GateHub } = await fleetLib(dir);
  rmSync(dir, { recursive: true, force: true });
  const { AdaptiveRetryStrategy } = await import('@smithy/util-retry');
  const clients = [
    [
      'no limiter (withBackoff, 3 attempts)',
      (f) => {
        const g = withBackoff(f, { maxAttempts: 3 });
        return async () => (await g('http://origin/')).status === 200;
      },
    ],
    [
      "ours: gate `limit: 'adaptive'` (3 attempts)",
      (f) => {
        // consecutive: Infinity: the limiter alone, no breaker.
        const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
        const g = withBackoff(f, { maxAttempts: 3, gate });
        return async () => (await g('http://origin/')).status === 200;
      },
    ],
    [
      'AWS: @smithy/util-retry AdaptiveRetryStrategy (3 attempts)',
      (f) => {
        const strategy = new AdaptiveRetryStrategy(async () => 3);
        return async () => {
          let token = await strategy.acquireInitialRetryToken('origin');
          for (;;) {
            const res = await f();
            if (res.status === 200) {
              strategy.recordSuccess(token);
              return true;
            }
            try {
              token = await strategy.refreshRetryTokenForRetry(token, {
                errorType: 'THROTTLING',
                retryAfterHint: new Date(Date.now() + 1000),
              });
            } catch {
              return false;
            }
          }
        };
      },
    ],
    [
      `ours, one limiter for the fleet: sharedGate \`limit: 'adaptive'\` (its GateObject in-process, ${RPC_MS} ms RPC)`,
      (f, hubs) => {
        const gate = sharedGate(fakeNamespace(GateHub, hubs), { limit: 'adaptive', consecutive: Infinity });
        const g = withBackoff(f, { maxAttempts: 3, gate });
        return async () => (await g('http://origin/')).status === 200;
      },
    ],
  ];
  const runs = clients.map(() => []);
  for (let r = 0; r < RUNS; r++) for (const [i, [name, make]] of clients.entries()) runs[i].push(await scenario(name, make));
  const mean = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
  return runs.map((xs) => ({
    name: xs[0].name,
    ...Object.fromEntries(['goodput', 'throttled', 'failed', 'p50', 'p99'].map((k) => [k, mean(xs, k)])),
    runs: xs.map(({ goodput, throttled }) => ({ goodput, throttled })),
  }));
}

export function table(rows) {
  const aws = rows[2];
  const ours = rows[1];
  const range = (f) => {
    const xs = ours.runs.map((_, i) => f(i));
    return `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;
  };
  const lines = [
    `Server: token bucket of ${R} req/s (burst ${BURST}), 429 + \`Retry-After: 1\` beyond; ${C} clients in closed loops, ${LATENCY_MS} ms per request, ${SECONDS} s of virtual time (@sinonjs/fake-timers over the real package code and the real @smithy/util-retry code).`,
    '',
    `Means of ${RUNS} runs per client (interleaved; random jitter, so runs differ).`,
    '',
    '| client | goodput (ok/s) | 429s received | calls failed | p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.goodput.toFixed(1)} | ${r.throttled.toFixed(1)} | ${r.failed.toFixed(1)} | ${r.p50.toFixed(0)} | ${r.p99.toFixed(0)} |`,
    ),
    '',
    `Ours vs AWS adaptive (means): goodput ${(ours.goodput / aws.goodput).toFixed(2)}× (target ≥ 1), 429s ${(ours.throttled / Math.max(1, aws.throttled)).toFixed(2)}× (target ≤ 0.5); per run, goodput ${range((i) => ours.runs[i].goodput / aws.runs[i].goodput)}, 429s ${range((i) => ours.runs[i].throttled / Math.max(1, aws.runs[i].throttled))}.`,
    `One limiter for the fleet vs one per client (means): goodput ${(rows[3].goodput / ours.goodput).toFixed(2)}×, 429s ${(rows[3].throttled / Math.max(1, ours.throttled)).toFixed(2)}×.`,
  ];
  return lines;
}

// ---------------------------------------------------------------------------
// The scenario matrix (issue 24): the adaptive limiter in every traffic shape
// its users produce, ours and the AWS SDK's in the same run, in virtual time.
//
//   node bench/overload.mjs --matrix [--rows=REGEXP] [--seed=N] [--json]   (run.mjs section 'limiter')
//
// --rows runs the rows whose name matches; --seed makes each run
// reproducible (Math.random seeded, each of our calls seeded): the demo's
// overload view is `--rows='^step.*, RA' --seed=1`. The model, the server
// and both clients are www/overload.js, shared with the demo.
//   node bench/overload.mjs --http [--json]     (real time, 127.0.0.1: the shared shape)
//
// Shapes: one limiter shared by `callers` closed loops ("shared ×N": one gate
// with `limit: 'adaptive'` behind withBackoff; the SDK: one
// AdaptiveRetryStrategy, i.e. one DefaultRateLimiter, shared by the callers,
// its retry delay slept as its middleware does); one limiter per client
// ("per client ×10"); the fleet's (ours: sharedGate, ten isolates; the SDK has
// none, so its row is per client); calls with a deadline (maxElapsedMs 300;
// the SDK's calls race a 300 ms timer and send nothing after it); a capacity
// that halves at 10 s and doubles at 20 s. Each with the server's 429 naming
// `Retry-After: 1` and without. A call is 3 attempts at most.

const M_SECONDS = Number(process.env.SECONDS) || 30;

/** The rows: [label, { groups, callers (per group), cap(t s), ra, deadline, fleet }]. */
export function matrixRows(only) {
  const rows = [];
  for (const ra of [true, false]) {
    const w = ra ? 'RA' : 'no RA';
    rows.push([`shared ×1, 20 req/s, ${w}`, { groups: 1, callers: 1, cap: () => 20, ra }]);
    // (at 1000 req/s, 10 ms a request: 20 callers could send 2000)
    for (const c of [50, 200, 1000]) {
      const latency = c === 1000 ? 10 : M_LATENCY_MS;
      rows.push([`shared ×20, ${c} req/s${c === 1000 ? ' (10 ms)' : ''}, ${w}`, { groups: 1, callers: 20, cap: () => c, ra, latency }]);
    }
    for (const c of [200, 1000]) rows.push([`shared ×100, ${c} req/s, ${w}`, { groups: 1, callers: 100, cap: () => c, ra }]);
    rows.push([`per client ×10, 200 req/s, ${w}`, { groups: 10, callers: 1, cap: () => 200, ra }]);
    rows.push([`fleet ×10, 200 req/s, ${w}`, { groups: 10, callers: 1, cap: () => 200, ra, fleet: true }]);
    rows.push([`deadline 300 ms, shared ×30, 20 req/s, ${w}`, { groups: 1, callers: 30, cap: () => 20, ra, deadline: 300 }]);
    // (the demo's overload view: this row with RA, www/overload.js's STEP_SPEC)
    rows.push([`step 200→100→200 req/s, shared ×20, ${w}`, { ...STEP_SPEC, ra }]);
  }
  return only ? rows.filter(([name]) => only.test(name)) : rows;
}

/**
 * Runs one row for one client kind in virtual time (the model: www/overload.js,
 * shared with the demo's overload view). `make(fetchFn, hubs, seed)` returns a
 * group's call function `(url, deadline) => Promise<boolean>`; `seed`: a
 * reproducible run (the demo's view is the step row with `RA` and seed 1).
 */
const matrixRun = (spec, make, opts) => overloadRun(spec, make, { FakeTimers, seconds: M_SECONDS, ...opts });

export async function matrix({
  only,
  seed,
  pauseRows = /shared ×20, 200 req\/s, RA|per client ×10, 200 req\/s, RA|fleet ×10, 200 req\/s, RA/,
} = {}) {
  const { withBackoff } = await import('wasm-backoff');
  const { createGate } = await import('wasm-backoff/gate');
  const dir = mkdtempSync(join(os.tmpdir(), 'wb-overload-'));
  const { sharedGate, GateHub } = await fleetLib(dir);
  rmSync(dir, { recursive: true, force: true });
  const { AdaptiveRetryStrategy } = await import('@smithy/util-retry');
  const local = oursClient(withBackoff, adaptiveGate(createGate));
  const fleet = oursClient(withBackoff, (hubs) => sharedGate(fakeNamespace(GateHub, hubs), { limit: 'adaptive', consecutive: Infinity }));
  const sdk = sdkClient(AdaptiveRetryStrategy);
  const out = [];
  for (const [name, spec] of matrixRows(only)) {
    const row = { name, step: !!spec.step, capacity: spec.cap(0) };
    row.ours = await matrixRun(spec, spec.fleet ? fleet : local, { seed });
    row.sdk = await matrixRun(spec, sdk, { seed });
    if (spec.fleet) row.perClient = await matrixRun({ ...spec, fleet: false }, local, { seed });
    if (pauseRows?.test(name)) row.pauseAll = await matrixRun(spec, spec.fleet ? fleet : local, { pauseAll: true, seed });
    process.stderr.write(
      `[overload] ${name}: ours ${row.ours.goodput.toFixed(1)} ok/s ${row.ours.throttled} 429s; SDK ${row.sdk.goodput.toFixed(1)} ok/s ${row.sdk.throttled} 429s\n`,
    );
    out.push(row);
  }
  return out;
}

const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const ratio = (a, b) => (b > 0 ? `${(a / b).toFixed(2)}×` : a > 0 ? '∞' : '–');

/** Which targets of issue 24 a row meets (a list of the missed ones). */
function missed(r) {
  const o = r.ours;
  const s = r.sdk;
  const m = [];
  if (!r.step && o.goodput < 0.9 * r.capacity) m.push('goodput < 0.9× capacity');
  if (o.goodput < s.goodput) m.push('goodput < SDK');
  if (o.throttled > 0.5 * s.throttled) m.push('429s > 0.5× SDK');
  if (o.p99 > s.p99) m.push('p99 > SDK');
  if (o.failed > s.failed) m.push('failed > SDK');
  if (r.step) {
    // ≥ 0.8× the new capacity within 5 s of the step up (at 20 s)
    const back = o.perSecond.slice(20, 25).some((n) => n >= 0.8 * 200);
    if (!back) m.push('not ≥ 0.8× capacity within 5 s of the step up');
  }
  return m;
}

export function matrixTable(rows) {
  const seconds = rows.find((r) => !r.step)?.ours.seconds ?? M_SECONDS;
  const lines = [
    `Virtual time (@sinonjs/fake-timers over the real package code and the real @smithy/util-retry ${'`'}AdaptiveRetryStrategy${'`'}/${'`'}DefaultRateLimiter${'`'}), ${seconds} s per run (the step rows 30 s), one run per row, ${M_LATENCY_MS} ms per request; the server is a token bucket of the row's capacity (burst a tenth of it), 429 beyond (${'`'}Retry-After: 1${'`'} in the RA rows). Ours: ${'`'}withBackoff(fetch, { maxAttempts: 3, gate: createGate({ limit: 'adaptive', consecutive: Infinity }) })${'`'}; the fleet row: ${'`'}sharedGate${'`'} (its GateObject in-process, ${RPC_MS} ms RPC). The SDK: one ${'`'}AdaptiveRetryStrategy${'`'} per limiter, 3 attempts, its retry delay slept. Goodput: successful calls per second over the whole run (warm-up included); latency: of successful calls; wait: the longest from a call's start to its first send.`,
    '',
    '| shape | ours ok/s | SDK ok/s | goodput ratio | ours 429s | SDK 429s | 429 ratio | of which in the first second, ours/SDK | ours failed | SDK failed | ours p50/p99 ms | SDK p50/p99 ms | ours longest wait ms | SDK longest wait ms | targets missed |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const r of rows) {
    const o = r.ours;
    const s = r.sdk;
    const m = missed(r);
    lines.push(
      `| ${r.name} | ${f1(o.goodput)} | ${f1(s.goodput)} | ${ratio(o.goodput, s.goodput)} | ${o.throttled} | ${s.throttled} | ${ratio(o.throttled, s.throttled)} | ${o.throttledPerSecond[0]}/${s.throttledPerSecond[0]} | ${o.failed} | ${s.failed} | ${f0(o.p50)}/${f0(o.p99)} | ${f0(s.p50)}/${f0(s.p99)} | ${f0(o.longest)} | ${f0(s.longest)} | ${m.length ? m.join('; ') : 'all met'} |`,
    );
  }
  const fleetRows = rows.filter((r) => r.perClient);
  if (fleetRows.length) {
    lines.push('', 'The fleet against a limiter per isolate (ours, same run): goodput and 429s (targets: ≥ 0.95×, ≤ 0.5×).', '');
    for (const r of fleetRows) {
      lines.push(
        `- ${r.name}: fleet ${f1(r.ours.goodput)} ok/s, ${r.ours.throttled} 429s; per isolate ${f1(r.perClient.goodput)} ok/s, ${r.perClient.throttled} 429s: goodput ${ratio(r.ours.goodput, r.perClient.goodput)}, 429s ${ratio(r.ours.throttled, r.perClient.throttled)}.`,
      );
    }
  }
  const pauseRows = rows.filter((r) => r.pauseAll);
  if (pauseRows.length) {
    lines.push(
      '',
      "Whom a server-named wait pauses (the same rows, same run): the shipped rule (the call that got it waits before its retry; other calls keep their token times) against the old one (every call to the target waits until the named time: the benchmark's fetch holds every send until then).",
      '',
    );
    for (const r of pauseRows) {
      lines.push(
        `- ${r.name}: this call only ${f1(r.ours.goodput)} ok/s, ${r.ours.throttled} 429s, ${r.ours.failed} failed, p99 ${f0(r.ours.p99)} ms; every call ${f1(r.pauseAll.goodput)} ok/s, ${r.pauseAll.throttled} 429s, ${r.pauseAll.failed} failed, p99 ${f0(r.pauseAll.p99)} ms.`,
      );
    }
  }
  for (const r of rows.filter((x) => x.step)) {
    lines.push('', `Rate over time, ${r.name} (successful calls per second; capacity 200, 100 from 10 s, 200 from 20 s):`, '');
    lines.push(`- ours: ${r.ours.perSecond.join(' ')}`, `- SDK:  ${r.sdk.perSecond.join(' ')}`);
  }
  return lines;
}

/**
 * The shared shape in real time: 20 callers on one limiter (ours: a gate
 * with `limit: 'adaptive'`; the SDK: one AdaptiveRetryStrategy) against the
 * scripted server's token bucket on 127.0.0.1, `seconds` each, one after the other.
 */
export async function httpRun({ seconds = 8, callers = 20, rate = 200 } = {}) {
  const { startScripted } = await import('../tests/server/scripted.mjs');
  const { withBackoff } = await import('wasm-backoff');
  const { createGate } = await import('wasm-backoff/gate');
  const { AdaptiveRetryStrategy } = await import('@smithy/util-retry');
  const srv = await startScripted();
  const out = {};
  try {
    for (const [kind, make] of [
      ['ours', oursClient(withBackoff, () => createGate({ limit: 'adaptive', consecutive: Infinity }))],
      ['sdk', sdkClient(AdaptiveRetryStrategy)],
    ]) {
      const path = `/bucket-${kind}`;
      srv.script(path, { rate, burst: rate / 10, status: 429, headers: { 'retry-after': '1' } });
      let throttled = 0;
      const waits = firstSends(() => performance.now());
      const f = async (input) => {
        waits.sent(input);
        const res = await fetch(input);
        await res.arrayBuffer();
        if (res.status === 429) throttled++;
        return res;
      };
      const call = make(f);
      const t0 = performance.now();
      const end = t0 + seconds * 1000;
      const lat = [];
      let failed = 0;
      let n = 0;
      await Promise.all(
        Array.from({ length: callers }, async () => {
          while (performance.now() < end) {
            const t = performance.now();
            const id = String(n++);
            waits.start(id);
            const ok = await call(`${srv.url}${path}?c=${id}`);
            waits.end(id);
            if (performance.now() > end) break;
            if (ok) lat.push(performance.now() - t);
            else failed++;
          }
        }),
      );
      out[kind] = { goodput: lat.length / seconds, throttled, failed, p50: pct(lat, 50), p99: pct(lat, 99), longest: waits.longest };
    }
  } finally {
    await srv.close();
  }
  return { seconds, callers, rate, ...out };
}

export function httpTable(r) {
  const row = (k, x) => `| ${k} | ${f1(x.goodput)} | ${x.throttled} | ${x.failed} | ${f0(x.p50)} | ${f0(x.p99)} |`;
  return [
    `Real time, 127.0.0.1: ${r.callers} callers sharing one limiter for ${r.seconds} s each (ours, then the SDK's), against tests/server/scripted.mjs's token bucket of ${r.rate} req/s (burst ${r.rate / 10}, 429 + ${'`'}Retry-After: 1${'`'} beyond).`,
    '',
    '| client | ok/s | 429s | calls failed | p50 ms | p99 ms |',
    '|---|---:|---:|---:|---:|---:|',
    row("ours (gate `limit: 'adaptive'`, 3 attempts)", r.ours),
    row('SDK (one AdaptiveRetryStrategy, 3 attempts)', r.sdk),
    '',
    `Ours vs the SDK: goodput ${ratio(r.ours.goodput, r.sdk.goodput)}, 429s ${ratio(r.ours.throttled, r.sdk.throttled)}.`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--matrix')) {
  const only = process.argv.find((a) => a.startsWith('--rows='))?.slice(7);
  const seed = process.argv.find((a) => a.startsWith('--seed='))?.slice(7);
  const rows = await matrix({ only: only ? new RegExp(only) : undefined, seed: seed === undefined ? undefined : Number(seed) });
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows));
  else console.log(matrixTable(rows).join('\n'));
} else if (import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--http')) {
  const r = await httpRun();
  if (process.argv.includes('--json')) console.log(JSON.stringify(r));
  else console.log(httpTable(r).join('\n'));
} else if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await overload();
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows));
  else console.log(table(rows).join('\n'));
}
