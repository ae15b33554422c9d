// A simulated outage: how hard do retrying clients hit an origin that is
// down, and how fast do they drain once it is back? Per-request backoff
// (full jitter) against the backoff gate (one gate per client, keyed by
// origin), both with the package's default schedule: exponential, full
// jitter, base 100 ms, cap 20 s, and no attempt limit (so every call ends
// in success and the drain is measured for all of them).
//
//   node bench/outage.mjs          after `npm run build`; writes bench/OUTAGE.md
//
// Real code, virtual time: the shipped package (pkg/node.mjs: the wasm
// calculator, the wasm gate, the JavaScript fetch driver) runs unchanged;
// only `setTimeout`, `clearTimeout` and `Date.now` are replaced by a virtual
// clock, and `fetch` by a fake origin that answers after a fixed round trip.
// Each timer fires at its exact virtual time, with every promise reaction
// run before the next one, so a simulated minute takes a fraction of a
// second and results do not depend on the machine.
//
// The model: C clients each have K calls in flight to the origin when it
// goes down at t = 0 (those first tries were sent before the outage; they
// are counted apart). The origin answers 503 to every request that reaches
// it before t = T and 200 after; a round trip is RTT ms (the request reaches
// the origin halfway). Reported, per policy: requests sent during the
// outage (retries, or the gate's probes), everything the origin received
// before T (first tries included), and the drain: the time from T until the
// last call has succeeded (and the median call's). Each point is the mean of
// RUNS runs with fresh random seeds.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withBackoff } from '../pkg/node.mjs';
import { createGate } from '../pkg/gate/node.mjs';
import { Heap } from '../www/storm.js';

const RTT = 50;
const RUNS = 10;
const POINTS = [
  { C: 100, K: 20, T: 10_000 },
  { C: 100, K: 20, T: 60_000 },
  { C: 1000, K: 5, T: 10_000 },
  { C: 10, K: 100, T: 10_000 },
];

// ---- virtual time -------------------------------------------------------
const real = { setTimeout, clearTimeout, now: Date.now, setImmediate };
let now = 0;
let seq = 0;
const heap = new Heap(); // of [at, seq, fn]: earliest first, FIFO among equal times
const cancelled = new Set();
function virtualise() {
  globalThis.setTimeout = (fn, ms = 0, ...args) => {
    const id = ++seq;
    heap.push([now + Math.max(0, Number(ms) || 0), id, () => fn(...args)]);
    return id;
  };
  globalThis.clearTimeout = (id) => id !== undefined && cancelled.add(id);
  Date.now = () => now;
}
function restore() {
  globalThis.setTimeout = real.setTimeout;
  globalThis.clearTimeout = real.clearTimeout;
  Date.now = real.now;
}
const settle = () => new Promise((r) => real.setImmediate(r));
/** Runs timers in time order, letting every promise reaction run between two, until `done()`. */
async function runUntil(done) {
  await settle();
  while (!done()) {
    if (!heap.size) throw new Error('simulation stalled: nothing scheduled');
    const [at, id, fn] = heap.pop();
    if (cancelled.delete(id)) continue;
    now = at;
    fn();
    await settle();
  }
}

// ---- one run --------------------------------------------------------------
async function simulate({ C, K, T }, gated) {
  now = 0;
  seq = 0;
  heap.items.length = 0;
  cancelled.clear();
  const c = { first: 0, sentDuring: 0, receivedDown: 0, sent: 0 };
  const firsts = new Set();
  const origin = (input) => {
    // The first try of each call was sent before the outage.
    const first = !firsts.has(input);
    if (first) firsts.add(input);
    else if (now < T) c.sentDuring++;
    c.sent++;
    const down = now + RTT / 2 < T;
    if (down) c.receivedDown++;
    return new Promise((resolve) => setTimeout(() => resolve(new Response(null, { status: down ? 503 : 200 })), RTT));
  };
  const finished = [];
  let pending = C * K;
  for (let i = 0; i < C; i++) {
    const f = withBackoff(
      origin,
      gated ? { maxAttempts: Infinity, gate: createGate({ maxQueued: Infinity, ...gated }) } : { maxAttempts: Infinity },
    );
    for (let k = 0; k < K; k++) {
      f(`http://origin.test/item?c=${i}&k=${k}`).then((res) => {
        if (res.status !== 200) throw new Error(`call ended with ${res.status}`);
        finished.push(now);
        pending--;
      });
    }
  }
  await runUntil(() => pending === 0);
  finished.sort((a, b) => a - b);
  return { ...c, drain: finished.at(-1) - T, median: finished[finished.length >> 1] - T };
}

async function point(p) {
  const mean = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
  const out = {};
  for (const [name, gated] of [
    ['per-request', false],
    ['gate, trips at the 1st failure (consecutive: 1)', { consecutive: 1 }],
    ['gate, default threshold (consecutive: 5)', {}],
  ]) {
    const runs = [];
    for (let r = 0; r < RUNS; r++) runs.push(await simulate(p, gated));
    out[name] = Object.fromEntries(['sentDuring', 'receivedDown', 'drain', 'median', 'sent'].map((k) => [k, mean(runs, k)]));
  }
  return out;
}

const fmt = (x) => Math.round(x).toLocaleString('en-US');
const ratio = (a, b) => (b === 0 ? '—' : (a / b).toFixed(3) + '×');

const t0 = real.now();
virtualise();
const rows = [];
try {
  for (const p of POINTS) rows.push([p, await point(p)]);
} finally {
  restore();
}
const lines = [
  `| C × K, outage | policy | sent during the outage | received while down (incl. first tries) | drain: last call (ms after recovery) | drain: median call (ms) |`,
  `|---|---|---:|---:|---:|---:|`,
];
for (const [p, r] of rows) {
  const label = `${p.C} × ${p.K}, ${p.T / 1000} s`;
  const pr = r['per-request'];
  lines.push(`| ${label} | per-request backoff | ${fmt(pr.sentDuring)} | ${fmt(pr.receivedDown)} | ${fmt(pr.drain)} | ${fmt(pr.median)} |`);
  for (const [name, g] of Object.entries(r).slice(1)) {
    lines.push(`| | ${name} | ${fmt(g.sentDuring)} | ${fmt(g.receivedDown)} | ${fmt(g.drain)} | ${fmt(g.median)} |`);
    lines.push(
      `| | **÷ per-request** | **${ratio(g.sentDuring, pr.sentDuring)}** | ${ratio(g.receivedDown, pr.receivedDown)} | **${ratio(g.drain, pr.drain)}** | ${ratio(g.median, pr.median)} |`,
    );
  }
}
const table = lines.join('\n');
console.log(table);
console.log(`\n(${RUNS} runs per point, means; ${((real.now() - t0) / 1000).toFixed(1)} s wall clock)`);

const md = `# Outage: the backoff gate vs per-request backoff

Generated by \`node bench/outage.mjs\` (after \`npm run build\`); the method
is in the header of [\`outage.mjs\`](outage.mjs). Virtual time, the shipped
package's real code (wasm calculator and gate, JavaScript fetch driver),
a fake origin with a ${RTT} ms round trip that answers 503 until the
recovery at T and 200 after. C clients, each with K calls in flight when the
origin goes down (those first tries were sent before the outage). Both
policies use the default schedule (exponential, full jitter, base 100 ms,
cap 20 s) with no attempt limit; the gate is one per client, keyed by
origin (\`withBackoff(fetch, { gate: true })\`). Means of ${RUNS} runs.

Target: at most 0.1× the requests sent during the outage, and a drain no
worse than 1.2×.

${table}

- *sent during the outage*: requests sent from t = 0 to T: per-request
  retries, or the gate's probes (one per client per round).
- *received while down*: every request that reached the origin before T,
  the C × K first tries included (they are the same for both policies and
  bound how much any client-side policy can save).
- *drain*: from the recovery until the last call (or the median call) has
  its 200. With the gate, a client's calls are released together one round
  trip after its first successful probe.
`;
writeFileSync(fileURLToPath(new URL('./OUTAGE.md', import.meta.url)), md);
