// A fleet behind one shared gate (sharedGate + GateObject, js/fleet/)
// against per-isolate gates, in three parts, and a fourth for the shared
// retry budget (sharedBudget, js/fleet/shared-budget.js):
//
// 1. The outage, in virtual time (the model of www/outage.js: the package's
//    real code, a fake origin with a 50 ms round trip, C isolates × K calls in
//    flight when the origin goes down for T ms): N = 50 isolates × K = 20
//    calls, 10 s. Per-isolate gates (createGate, the default threshold) vs one
//    shared gate: each isolate a SharedGate, the object's logic (GateHub, the
//    same code GateObject runs) in-process behind an async boundary that
//    models the RPC: RPC_MS each way, arguments and answers structured-cloned.
// 2. The healthy path, measured (real time, Node): ns per `gate.run` of a task
//    that resolves at once, local gate vs shared gate (which makes no round
//    trip: counted).
// 3. The round trip to the object, measured in real workerd (miniflare): a
//    Worker calls GateObject `report` n times in a row (tests/workerd/fleet.mjs
//    /rpc): what the first failure an isolate sees, each local probe and the
//    probe's outcome cost.
// 4. The retry budget, in the same virtual time: N = 50 isolates × K = 20
//    calls against an origin down for 10 s (for 2 s, and healthy), no attempt limit,
//    the default budget (ttlMs 10 s, minPerSec 10, retryRatio 0.2): a
//    RetryBudget per isolate vs one sharedBudget (BudgetHub, the code
//    GateObject runs, behind the same modelled RPC). Retries sent, calls
//    that ended on a refused retry, round trips per isolate.
//
//   node bench/fleet.mjs [--quick]     (after `npm run build`); prints the table
//   npm run bench -- --only=fleet      the same, as section 9 of bench/RESULTS.md
import { build } from 'esbuild';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Miniflare } from 'miniflare';
import { boundary } from '../scripts/bundle.mjs';
import { OUTAGE_POLICIES, RTT_MS, meanOf, outageRun } from '../www/outage.js';
import { workerOptions } from '../tests/support/workerd.mjs';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
export const POINT = { C: 50, K: 20, T: 10_000 };
/** The modelled one-way latency of an RPC to the object (virtual time), ms. */
export const RPC_MS = 5;

/** js/fleet/ and the gate, bundled for Node (sharedGate is in the workerd build only). */
export async function fleetLib(dir) {
  await build({
    stdin: {
      contents:
        "export { sharedGate } from './js/fleet/shared-gate.js'; export { GateHub } from './js/fleet/hub.js'; export { createGate } from './js/gate/index.js'; export { sharedBudget, BudgetHub } from './js/fleet/shared-budget.js'; export { RetryBudget } from './js/budget.js';",
      resolveDir: ROOT,
      loader: 'js',
    },
    outfile: join(dir, 'fleet.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    external: ['node:fs'],
    define: { WASM: JSON.stringify('./wasm_backoff_gate.wasm') },
    plugins: [boundary('gate', 'node')],
    logLevel: 'warning',
  });
  copyFileSync(join(ROOT, 'pkg/wasm_backoff_gate.wasm'), join(dir, 'wasm_backoff_gate.wasm'));
  const fleet = await import(pathToFileURL(join(dir, 'fleet.mjs')).href);
  const main = await import(pathToFileURL(join(ROOT, 'pkg/node.mjs')).href);
  return { ...main, ...fleet };
}

/**
 * A namespace whose objects are GateHubs (or `Hub`s with `methods`) in this
 * process, behind a modelled RPC (RPC_MS each way, structured clones); `hubs`
 * collects them.
 */
export function fakeNamespace(GateHub, hubs, rpcMs = RPC_MS, methods = ['report', 'admit', 'probed', 'lease']) {
  const later = () => new Promise((r) => setTimeout(r, rpcMs));
  return {
    idFromName: (name) => name,
    get(name) {
      if (!hubs.has(name)) hubs.set(name, new GateHub());
      const hub = hubs.get(name);
      const call =
        (m) =>
        async (...args) => {
          if (rpcMs > 0) await later();
          const answer = structuredClone(await hub[m](...structuredClone(args)));
          if (rpcMs > 0) await later();
          return answer;
        };
      return Object.fromEntries(methods.map((m) => [m, call(m)]));
    },
  };
}

/** The shared gate's row of the outage model: every client (isolate) of a run shares `state.hubs`. */
function sharedPolicy(state) {
  return {
    id: 'shared',
    name: 'one shared gate (GateObject)',
    modules: [],
    client: ({ withBackoff, sharedGate, GateHub }, origin, schedule, seed) => {
      const gate = sharedGate(fakeNamespace(GateHub, state.hubs), { ...schedule, maxQueued: Infinity, seed });
      state.gates.push(gate);
      const f = withBackoff(origin, { ...schedule, maxAttempts: Infinity, gate });
      return (url, k) => f(url, undefined, seed === undefined ? undefined : { seed: seed + k });
    },
  };
}

/** Means over `runs` seeded runs of both rows, with the shared row's round trips. */
async function outage(lib, runs) {
  const perIsolate = { ...OUTAGE_POLICIES.find((p) => p.id === 'gate'), name: 'a gate per isolate (createGate)' };
  const per = [];
  const shared = [];
  const rpcs = [];
  for (let run = 0; run < runs; run++) {
    per.push(await outageRun(POINT, perIsolate, lib, { run }));
    const state = { hubs: new Map(), gates: [] };
    shared.push(await outageRun(POINT, sharedPolicy(state), lib, { run }));
    const sum = { report: 0, admit: 0, probed: 0 };
    for (const g of state.gates) for (const m of Object.keys(sum)) sum[m] += g.rpcs[m];
    rpcs.push(sum);
  }
  const mean = (k) => rpcs.reduce((s, r) => s + r[k], 0) / runs;
  return { per: meanOf(per), shared: meanOf(shared), rpcs: { report: mean('report'), admit: mean('admit'), probed: mean('probed') } };
}

/** The budget's points: the outage of the gate's rows, a shorter one, and none (a healthy origin: what the budget costs then). */
export const BUDGET_POINTS = [POINT, { ...POINT, T: 2_000 }, { ...POINT, T: 0 }];

/** The budget rows of the outage model: a RetryBudget per isolate, or one sharedBudget (`state.hubs`, `state.budgets`). */
function budgetPolicy(shared, state) {
  return {
    id: shared ? 'shared-budget' : 'budget',
    modules: [],
    client: ({ withBackoff, RetryBudget, sharedBudget, BudgetHub }, origin, schedule, seed) => {
      const budget = shared ? sharedBudget(fakeNamespace(BudgetHub, state.hubs, RPC_MS, ['budget'])) : new RetryBudget();
      state.budgets.push(budget);
      const f = withBackoff(origin, { ...schedule, maxAttempts: Infinity, budget });
      return (url, k) => f(url, undefined, seed === undefined ? undefined : { seed: seed + k });
    },
  };
}

/** Means over `runs` seeded runs of both budget rows at `point`, with the shared row's round trips per isolate. */
async function budgetOutage(lib, runs, point) {
  const rows = {};
  for (const shared of [false, true]) {
    const all = [];
    let rpcs = 0;
    for (let run = 0; run < runs; run++) {
      const state = { hubs: new Map(), budgets: [] };
      all.push(await outageRun(point, budgetPolicy(shared, state), lib, { run }));
      for (const b of state.budgets) rpcs += b.rpcs ?? 0;
    }
    rows[shared ? 'shared' : 'per'] = { ...meanOf(all), rpcs: rpcs / runs / point.C };
  }
  return rows;
}

/** ns per gate.run of a task that resolves at once (median of `rounds` samples of `n` calls each, interleaved). */
async function healthy(lib, rounds, n) {
  const hubs = new Map();
  const local = lib.createGate();
  const shared = lib.sharedGate(fakeNamespace(lib.GateHub, hubs, 0));
  const task = () => 1;
  const sample = async (g) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await g.run('https://api.example', task);
    return Number(process.hrtime.bigint() - t0) / n;
  };
  await sample(local);
  await sample(shared);
  const a = [];
  const b = [];
  for (let r = 0; r < rounds; r++) {
    a.push(await sample(local));
    b.push(await sample(shared));
  }
  const med = (xs) => xs.sort((x, y) => x - y)[xs.length >> 1];
  const rpcs = Object.values(shared.rpcs).reduce((s, x) => s + x, 0);
  return { local: med(a), shared: med(b), rpcs, calls: (rounds + 1) * n };
}

/** ms per round trip from a Worker to its GateObject in miniflare (median of `rounds` samples of `n` each). */
async function roundTrip(rounds, n) {
  const options = (name) => ({ ...workerOptions('fleet.mjs', { NAME: name, ORIGIN: 'http://127.0.0.1:9', BASE_MS: '100' }), name });
  const mf = new Miniflare({
    workers: [
      { ...options('host'), durableObjects: { GATES: { className: 'GateObject', useSQLite: true } } },
      { ...options('a'), durableObjects: { GATES: { className: 'GateObject', scriptName: 'host' } } },
    ],
  });
  try {
    const w = await mf.getWorker('a');
    // Timed here, around requests of n and of 0 round trips (workerd's own clock only moves at some I/O).
    const time = async (k, key = 'bench') => {
      const t0 = performance.now();
      await (await w.fetch(`http://worker/rpc?key=${key}&n=${k}`)).json();
      return performance.now() - t0;
    };
    await time(n);
    // The first round trip to an object that has not started yet (a new key: a new object).
    const cold = [];
    for (let r = 0; r < 3; r++) {
      const base = await time(0);
      cold.push((await time(1, `cold-${r}`)) - base);
    }
    const xs = [];
    for (let r = 0; r < rounds; r++) {
      const base = await time(0);
      xs.push((await time(n)) - base);
    }
    xs.sort((x, y) => x - y);
    return { median: xs[xs.length >> 1] / n, min: xs[0] / n, max: xs.at(-1) / n, n: rounds * n, cold: cold.sort((x, y) => x - y)[1] };
  } finally {
    await mf.dispose();
  }
}

/** The section's lines (bench/run.mjs, section 9). */
export async function fleetSection({ quick = false, log = () => {} } = {}) {
  const dir = mkdtempSync(join(os.tmpdir(), 'wasm-backoff-fleet-'));
  try {
    const lib = await fleetLib(dir);
    const runs = quick ? 2 : 10;
    log(`[fleet] outage, ${runs} runs per row`);
    const o = await outage(lib, runs);
    log(`[fleet] retry budget, ${runs} runs per row`);
    const budgets = [];
    for (const p of BUDGET_POINTS) budgets.push([p, await budgetOutage(lib, runs, p)]);
    log('[fleet] healthy path');
    const h = await healthy(lib, quick ? 3 : 21, quick ? 2000 : 20_000);
    log('[fleet] round trip in miniflare');
    const rt = await roundTrip(quick ? 3 : 11, quick ? 200 : 1000);
    const f = (x) => Math.round(x).toLocaleString('en-US');
    const row = (name, x, ratio) => `| ${name} | ${f(x.sentDuring)} | ${f(x.receivedDown)} | ${f(x.drain)} | ${f(x.median)} | ${ratio} |`;
    // (the short outage's row: what each budget carries through it)
    const [shortPoint, shortRow] = budgets.find(([p]) => p.T && p.T < POINT.T) ?? budgets[0];
    const short = { T: shortPoint.T, ...shortRow };
    const calls = shortPoint.C * shortPoint.K;
    const carried = (/** @type {{ failed: number }} */ x) => `${Math.round((100 * (calls - x.failed)) / calls)} %`;
    return [
      `Virtual time (www/outage.js: the package's real code, a fake origin with a ${RTT_MS} ms round trip): N = ${POINT.C} isolates × K = ${POINT.K} calls in flight when the origin goes down for ${POINT.T / 1000} s, the default schedule (exponential, full jitter, base 100 ms) and threshold (5 failures in a row), no attempt limit; means of ${runs} seeded runs. The shared gate's object (GateHub, the code GateObject runs) is in-process behind a modelled RPC of ${RPC_MS} ms each way.`,
      '',
      '| N × K, outage | sent during the outage | received while down (incl. first tries) | drain: last call (ms after recovery) | drain: median call (ms) | sent during ÷ per-isolate |',
      '|---|---:|---:|---:|---:|---:|',
      row(`a gate per isolate (${POINT.C} × ${POINT.K}, ${POINT.T / 1000} s)`, o.per, '1×'),
      row('one shared gate (GateObject)', o.shared, `**${(o.shared.sentDuring / o.per.sentDuring).toFixed(3)}×** (target ≤ 0.1×)`),
      '',
      `Round trips to the object per run (all ${POINT.C} isolates, means): ${o.rpcs.report.toFixed(1)} \`report\`, ${o.rpcs.admit.toFixed(1)} \`admit\`, ${o.rpcs.probed.toFixed(1)} \`probed\` — ${((o.rpcs.report + o.rpcs.admit + o.rpcs.probed) / POINT.C).toFixed(1)} per isolate for the whole outage, none per call.`,
      '',
      '**The retry budget** (part 4): the same model and schedule (a 503 retried on the throttling base, 10 × base = 1 s), the calls sent with `budget` and no attempt limit: a call whose retry the budget refuses ends on its 503 (counted as failed). The default budget (window 10 s, 10 retries/s floor, ratio 0.2): one budget for the fleet allows 100 + 0.2 × 1 000 first attempts = 300 retries per window; a RetryBudget per isolate allows 104 each (5 200 for the fleet). sharedBudget: each isolate asks the object (BudgetHub behind the modelled RPC) for a slice of credit.',
      '',
      '| N × K, outage | budget | retries sent during the outage | calls that failed (of 1 000) | round trips per isolate | retries ÷ per-isolate |',
      '|---|---|---:|---:|---:|---:|',
      ...budgets.flatMap(([p, r]) => {
        const at = `${p.C} × ${p.K}, ${p.T ? `${p.T / 1000} s` : 'healthy'}`;
        const ratio = r.per.sentDuring ? `**${(r.shared.sentDuring / r.per.sentDuring).toFixed(3)}×**` : '—';
        return [
          `| ${at} | a RetryBudget per isolate | ${f(r.per.sentDuring)} | ${f(r.per.failed)} | 0 | ${r.per.sentDuring ? '1×' : '—'} |`,
          `| ${at} | one sharedBudget (GateObject) | ${f(r.shared.sentDuring)} | ${f(r.shared.failed)} | ${r.shared.rpcs.toFixed(1)} | ${ratio} |`,
        ];
      }),
      '',
      `The shared budget holds the fleet to its one budget, at about two or three round trips per isolate (its reserve at the first call, then a slice when its retries use it up; one when healthy). The cost: those 300 retries are spent early (first come, first served), so ${carried(short.shared)} of the calls outlast a ${short.T / 1000} s outage, where a RetryBudget per isolate carries ${carried(short.per)} through it, at ${(short.per.sentDuring / short.shared.sentDuring).toFixed(1)} times the retries. A budget bounds the load; a shared gate (above) is what carries calls through an outage.`,
      '',
      '| cost of consulting the shared state | measured |',
      '|---|---:|',
      `| healthy call, \`gate.run\` of a task that resolves at once: local gate → shared gate (Node, real time, median of interleaved samples) | ${f(h.local)} ns → ${f(h.shared)} ns (${h.shared >= h.local ? '+' : '−'}${f(Math.abs(h.shared - h.local))} ns; ${h.rpcs} round trips in ${f(h.calls)} calls) |`,
      `| one round trip Worker → GateObject (\`report\`) in miniflare (real workerd, local; ${rt.n.toLocaleString('en-US')} in samples of ${quick ? 200 : 1000}, each less a request of none, timed from Node) | ${rt.median.toFixed(3)} ms median (samples ${rt.min.toFixed(3)}–${rt.max.toFixed(3)} ms) |`,
      `| the first round trip to an object not started yet (a new key; median of 3) | ${rt.cold.toFixed(1)} ms |`,
      '',
      "A healthy target costs no round trip: the local gate decides. A failure costs one round trip per isolate (the failures of one macrotask are one report); while the circuit is open, each isolate's local probe costs one `admit` per round (a long poll the object answers when the fleet's probe has succeeded, or after `pollMs`), and the fleet's probe one `probed`. The latency measured here is miniflare's on one machine; Cloudflare's own (a Durable Object may be in another data centre) is larger, and is paid only at those changes.",
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lines = await fleetSection({ quick: process.argv.includes('--quick'), log: (m) => process.stderr.write(`${m}\n`) });
  console.log(lines.join('\n'));
}
