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
import { RPC_MS, fakeNamespace, fleetLib } from './fleet.mjs';

const R = 100; // server capacity, req/s
const BURST = 10; // server bucket size
const C = 10; // clients
const LATENCY_MS = 20; // server time per request
const SECONDS = 30;
const RUNS = Number(process.env.RUNS) || 20; // each scenario, interleaved; a single run's 429 count varies by ±20 %

/** The server: a token bucket of R/s; 429 with Retry-After: 1 beyond it. */
function server() {
  let tokens = BURST;
  let at = Date.now();
  const s = { ok: 0, throttled: 0 };
  s.handle = () => {
    const now = Date.now();
    tokens = Math.min(BURST, tokens + ((now - at) / 1000) * R);
    at = now;
    if (tokens >= 1) {
      tokens -= 1;
      s.ok++;
      return 200;
    }
    s.throttled++;
    return 429;
  };
  return s;
}

/** A fetch function answering from `srv` after LATENCY_MS (virtual). */
const fetchOf = (srv) => () =>
  new Promise((resolve) =>
    setTimeout(() => {
      const status = srv.handle();
      resolve(new Response(null, { status, headers: status === 429 ? { 'retry-after': '1' } : {} }));
    }, LATENCY_MS),
  );

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};

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
    let done = false;
    const all = Promise.all(loops).then(() => (done = true));
    await clock.tickAsync(SECONDS * 1000);
    // (calls still waiting at the end: their clients stop after them)
    while (!done) await clock.tickAsync(1000);
    await all;
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

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await overload();
  if (process.argv.includes('--json')) console.log(JSON.stringify(rows));
  else console.log(table(rows).join('\n'));
}
