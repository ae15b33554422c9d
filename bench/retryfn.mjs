// retry(fn) against p-retry on a function that succeeds at once: what the
// retry wrapper costs per call when nothing fails (no I/O: the function
// returns a resolved promise). Interleaved rounds, order rotated each
// round; reported: median ns per call and the median per-round ratio to
// p-retry (min and max too). Prints a markdown table.
//
//   node bench/retryfn.mjs [rounds]     after `npm run build`
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH, ensurePeers } from './peers.mjs';

ensurePeers();
const [{ default: pRetry }, { retry }] = await Promise.all([import('p-retry'), import('wasm-backoff')]);

const ROUNDS = Number(process.argv[2] ?? 31);
const N = 20_000;
const work = () => Promise.resolve(1);
const contenders = {
  'p-retry': () => pRetry(work),
  'retry (wasm-backoff)': () => retry(work),
  'retry, maxElapsedMs + timeoutMs': () => retry(work, { maxElapsedMs: 10_000, timeoutMs: 1000 }),
  'bare call': work,
};

async function sample(f) {
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await f();
  return Number(process.hrtime.bigint() - t) / N;
}

const names = Object.keys(contenders);
for (const n of names) for (let i = 0; i < 3; i++) await sample(contenders[n]); // warm up
const ns = Object.fromEntries(names.map((n) => [n, []]));
const ratio = Object.fromEntries(names.map((n) => [n, []]));
for (let r = 0; r < ROUNDS; r++) {
  const order = names.map((_, i) => names[(i + r) % names.length]);
  const got = {};
  for (const n of order) got[n] = await sample(contenders[n]);
  for (const n of names) {
    ns[n].push(got[n]);
    ratio[n].push(got[n] / got['p-retry']);
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
console.log(
  `ns per call of a function that resolves at once (${ROUNDS} rounds × ${N} calls, p-retry ${pkgVersion('p-retry')}; ratio = ns / p-retry's ns in the same round: lower is faster)\n`,
);
console.log('| contender | median ns/call | ratio to p-retry (median) | min | max |');
console.log('|---|---:|---:|---:|---:|');
for (const n of names) {
  const r = ratio[n];
  console.log(
    `| ${n} | ${median(ns[n]).toFixed(0)} | ${median(r).toFixed(2)} | ${Math.min(...r).toFixed(2)} | ${Math.max(...r).toFixed(2)} |`,
  );
}

function pkgVersion(name) {
  return JSON.parse(readFileSync(join(BENCH, 'node_modules', name, 'package.json'), 'utf8')).version;
}
