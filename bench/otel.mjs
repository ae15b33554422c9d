// Telemetry's cost on the happy path: requests/s of a withBackoff client
// without `wasm-backoff/otel`, with `instrument()` and no SDK (the API's
// no-op tracer and meter: what a library user pays who installed the
// instrumentation but registered nothing), and with the SDK recording
// (spans sampled and ended, metrics aggregated; nothing exported).
// The method is bench/throughput.mjs's: its server (a separate Node
// process, keep-alive, 200 `ok`), samples of a fixed number of requests,
// contenders rotated every round, the ratio to "without" taken in the same
// round (median, min and max over rounds). Then the same clients around a
// fetch that answers at once (one Response, no I/O): ns per call, the
// wrapper's own cost without the network's noise.
//
//   node bench/otel.mjs [rounds] [requests per sample]     prints markdown (bench/run.mjs: RESULTS.md §3c)
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import os from 'node:os';
import v8 from 'node:v8';
import vm from 'node:vm';
import { BENCH } from './peers.mjs';

const ROUNDS = Number(process.argv[2] ?? 41);
const N = Number(process.argv[3] ?? 300);
const CONC = 64;

const { withBackoff } = await import('wasm-backoff');
const { instrument } = await import('wasm-backoff/otel');
const { BasicTracerProvider } = await import('@opentelemetry/sdk-trace-base');
const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

/** A reader that is never collected: the SDK aggregates, nothing is exported. */
class Idle extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

const server = spawn(process.execPath, [join(BENCH, 'throughput.mjs'), '--server'], { stdio: ['pipe', 'pipe', 'inherit'] });
process.on('exit', () => server.kill('SIGTERM'));
const port = await new Promise((resolve, reject) => {
  server.once('exit', (code) => reject(new Error(`server exited (${code})`)));
  createInterface({ input: server.stdout }).once('line', (l) => resolve(Number(l)));
});
const url = `http://127.0.0.1:${port}/`;

const tracer = new BasicTracerProvider().getTracer('bench');
const meter = new MeterProvider({ readers: [new Idle()] }).getMeter('bench');
const WITHOUT = 'without otel';
const contenders = [
  [WITHOUT, withBackoff(fetch)],
  ['instrument(), no SDK (no-op)', withBackoff(fetch, instrument())],
  ['instrument(), SDK recording', withBackoff(fetch, instrument({}, { tracer, meter }))],
].map(([name, f]) => [name, () => f(url).then((r) => r.text())]);

const check = (t) => {
  if (t !== 'ok') throw new Error(`unexpected body ${JSON.stringify(t)}`);
};
const MODES = {
  sequential: async (one, n) => {
    for (let i = 0; i < n; i++) check(await one());
  },
  [`${CONC} concurrent`]: async (one, n) => {
    let next = 0;
    const worker = async () => {
      while (next++ < n) check(await one());
    };
    await Promise.all(Array.from({ length: CONC }, worker));
  },
};

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
};
const cpu = os.cpus();
const lines = [
  `Machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, Node ${process.version}. ${ROUNDS} rounds × ${N} requests per contender and mode, order rotated every round, against bench/throughput.mjs's server. Target (issue 27): with \`instrument()\` and no SDK, ≥ 0.9× the requests/s of the same client without.`,
  '',
  '| mode | contender | median req/s | ratio to without (median) | min | max |',
  '|---|---|---:|---:|---:|---:|',
];
for (const [mode, run] of Object.entries(MODES)) {
  for (const [, one] of contenders) await run(one, 3 * N); // warm-up
  const rps = new Map(contenders.map(([name]) => [name, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < contenders.length; k++) {
      const [name, one] = contenders[(k + r) % contenders.length];
      gc();
      const t0 = process.hrtime.bigint();
      await run(one, N);
      rps.get(name).push(N / (Number(process.hrtime.bigint() - t0) / 1e9));
    }
  }
  const base = rps.get(WITHOUT);
  for (const [name] of contenders) {
    const ratios = rps.get(name).map((v, i) => v / base[i]);
    const cells = [
      median(rps.get(name)).toFixed(0),
      median(ratios).toFixed(3),
      Math.min(...ratios).toFixed(2),
      Math.max(...ratios).toFixed(2),
    ];
    lines.push(`| ${mode} | ${name} | ${cells.join(' | ')} |`);
  }
}

// The wrappers' own cost: a fetch that answers at once.
const res = new Response('ok');
const instant = async () => res;
const cpu2 = [
  [WITHOUT, withBackoff(instant)],
  ['instrument(), no SDK (no-op)', withBackoff(instant, instrument())],
  ['instrument(), SDK recording', withBackoff(instant, instrument({}, { tracer, meter }))],
];
const CALLS = 20 * N;
const ns = new Map(cpu2.map(([name]) => [name, []]));
for (const [, f] of cpu2) for (let i = 0; i < CALLS; i++) await f(url);
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < cpu2.length; k++) {
    const [name, f] = cpu2[(k + r) % cpu2.length];
    gc();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) await f(url);
    ns.get(name).push(Number(process.hrtime.bigint() - t0) / CALLS);
  }
}
lines.push(
  '',
  `The wrapper's own cost: the same clients around a fetch that answers at once (one Response, no I/O), ${ROUNDS} rounds × ${CALLS} calls.`,
  '',
);
lines.push('| contender | median ns/call | added ns/call (median of per-round differences) |', '|---|---:|---:|');
for (const [name] of cpu2) {
  const d = ns.get(name).map((v, i) => v - ns.get(WITHOUT)[i]);
  lines.push(`| ${name} | ${median(ns.get(name)).toFixed(0)} | ${median(d).toFixed(0)} |`);
}
lines.push('', `Load average (1 min) at the end: ${os.loadavg()[0].toFixed(2)} on ${cpu.length} cores.`);
console.log(lines.join('\n'));
server.kill('SIGTERM');
