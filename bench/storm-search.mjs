// The search behind "a better default" (issue 6): is there a retry policy
// that, in Brooker's retry-storm model (www/storm.js), makes ≤ 0.8× full
// jitter's calls at N = 100 while finishing no later, and is no worse (calls
// and time) at N = 10?
//
//   node bench/storm-search.mjs [--seeds=200] [--steps=1500]
//
// A client in the model observes one thing: how many times it has failed
// (every other quantity it sees — hop times, its own draws — carries no
// information about the number of competitors). So every policy it can run is
// a window table w(k) plus a draw shape, and the search covers exactly that:
//   1. a grid over full jitter (base, factor, cap) and decorrelated jitter;
//   2. a local search over free per-failure windows w(1..12) and per-failure
//      draw shapes (wait = w(k)·U^p(k)), started from the grid's best point,
//      minimising the worse of the N = 10 ratios subject to the N = 100
//      targets (penalty).
// Policies here are plain JS functions (this explores schedules, it does not
// measure the library); the chosen point is re-measured with the real
// calculator in bench/RESULTS.md's storm table.
import { simulate, mulberry32 as rng } from '../www/storm.js';

const arg = (name, dflt) => {
  const a = process.argv.find((s) => s.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : dflt;
};
const SEEDS = arg('seeds', 200),
  STEPS = arg('steps', 1500);

/** Mean calls and time of `policy(k, rand, state)` over SEEDS runs. */
function run(policy, clients) {
  let calls = 0,
    time = 0;
  for (let r = 0; r < SEEDS; r++) {
    const seed = 1000 + r * 7919;
    const out = simulate({
      clients,
      seed,
      makeBackoff: (i) => {
        const rand = rng(seed * 1000 + i),
          st = {};
        return (k) => policy(k, rand, st);
      },
    });
    calls += out.calls;
    time += out.timeMs;
  }
  return { calls: calls / SEEDS, time: time / SEEDS };
}

const Ns = [10, 25, 50, 100];
const fullJitter = (b, f, cap) => (k, r) => Math.min(cap, b * f ** (k - 1)) * r();
const ref = Object.fromEntries(Ns.map((N) => [N, run(fullJitter(10, 2, 2000), N)]));
const ratios = (policy, only = Ns) =>
  Object.fromEntries(
    only.map((N) => {
      const x = run(policy, N);
      return [N, [x.calls / ref[N].calls, x.time / ref[N].time]];
    }),
  );
const meets100 = ([c, t]) => c <= 0.8 && t <= 1;
const fmt = (res) =>
  Object.entries(res)
    .map(([N, [c, t]]) => `N=${N} ${c.toFixed(2)}/${t.toFixed(2)}`)
    .join('  ');

console.log(
  `reference full jitter (base 10, ×2, cap 2000), ${SEEDS} seeds: ` +
    Ns.map((N) => `N=${N} ${ref[N].calls.toFixed(0)} calls/${ref[N].time.toFixed(0)} ms`).join(', '),
);
console.log('ratios below are calls/time relative to it\n');

// 1. Grid.
const grid = [];
for (const b of [10, 20, 30, 40, 50, 60])
  for (const f of [1.6, 1.8, 2, 2.5, 3])
    for (const cap of [1000, 1500, 2000]) {
      grid.push({ name: `full jitter base ${b} ×${f} cap ${cap}`, policy: fullJitter(b, f, cap), w: [b, f, cap] });
    }
for (const b of [5, 10, 20, 30])
  for (const f of [2, 3, 4])
    for (const cap of [1000, 1500, 2000]) {
      grid.push({
        name: `decorrelated base ${b} ×${f} cap ${cap}`,
        policy: (_k, r, st) => (st.prev = Math.min(cap, b + r() * (f * (st.prev ?? b) - b))),
      });
    }
const feasible = [];
for (const g of grid) {
  const r100 = ratios(g.policy, [100]);
  if (!meets100(r100[100])) continue;
  feasible.push({ ...g, res: { ...ratios(g.policy, [10, 25, 50]), ...r100 } });
}
const worst10 = (res) => Math.max(...res[10]);
feasible.sort((x, y) => worst10(x.res) - worst10(y.res));
console.log(`1. grid: ${grid.length} policies, ${feasible.length} meet the N=100 targets; best five by their worse N=10 ratio:`);
for (const g of feasible.slice(0, 5)) console.log(`   ${g.name.padEnd(36)} ${fmt(g.res)}`);

// 2. Free window table + draw shape, from the best full-jitter grid point.
const start = feasible.find((g) => g.w) ?? { w: [10, 2, 2000] };
const [b0, f0, c0] = start.w;
let ws = Array.from({ length: 12 }, (_, i) => Math.min(c0, b0 * f0 ** i)),
  ps = ws.map(() => 1);
const table = (w, p) => (k, r) => {
  const i = Math.min(k, w.length) - 1;
  return w[i] * r() ** p[i];
};
const score = (w, p) => {
  const res = ratios(table(w, p), [100, 10]);
  const [c, t] = res[100];
  return { s: Math.max(...res[10]) + 10 * Math.max(0, c - 0.79) + 10 * Math.max(0, t - 0.98), res };
};
let best = score(ws, ps),
  s = 7;
const u = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
for (let it = 0; it < STEPS; it++) {
  const w = ws.slice(),
    p = ps.slice(),
    j = Math.floor(u() * w.length),
    m = Math.exp((u() - 0.5) * 0.8),
    x = u();
  if (x < 0.4) w[j] *= m;
  else if (x < 0.7) for (let i = j; i < w.length; i++) w[i] *= m;
  else p[j] = Math.min(4, Math.max(0.25, p[j] * m));
  const sc = score(w, p);
  if (sc.s < best.s) {
    best = sc;
    ws = w;
    ps = p;
  }
}
const final = ratios(table(ws, ps));
console.log(`\n2. local search, ${STEPS} steps over 12 windows and 12 draw shapes; best found:`);
console.log(`   windows ${ws.map((x) => x.toFixed(0)).join(', ')} ms; shapes ${ps.map((x) => x.toFixed(2)).join(', ')}`);
console.log(`   ${fmt(final)}`);
console.log(`   target at N=100 ${meets100(final[100]) ? 'met' : 'missed'}; N=10 ${Math.max(...final[10]) <= 1 ? 'no worse' : 'worse'}`);
