// Failover in the outage model (www/outage.js, virtual time, the shipped
// package's real code): C clients each send a call every SPACING ms, K in
// all, from the moment the primary goes down for T ms; a secondary origin is
// healthy throughout. Compared: retrying the primary only (the default
// attempt limit, and none), and `endpoints: failover([primary, secondary])`
// without a gate and with one (per client, default threshold). Measured:
// calls that succeeded, their latency (p50, p99, max: from each call's own
// start), and the requests the primary got while it was down.
//
//   node bench/failover.mjs     after `npm run build`; prints the table (bench/run.mjs puts it in RESULTS.md)
import { fileURLToPath } from 'node:url';
import { RTT_MS, loadLib, outageRun, meanOf } from '../www/outage.js';

const PRIMARY = 'http://primary.test';
const SECONDARY = 'http://secondary.test';
/** C clients × K calls, an outage of T ms; a client's calls start S ms apart (call k at k·S): the outage meets calls all along. */
export const POINTS = [
  { C: 100, K: 20, T: 10_000, S: 1000 },
  { C: 10, K: 200, T: 10_000, S: 100 },
];
const RUNS = 5;

/**
 * A client of `withBackoff(origin, options)`: call k starts at k·S
 * (virtual) ms, seeded per call; each success's latency goes to `counts.lat`.
 */
const client =
  (options) =>
  ({ withBackoff, createGate, failover }, origin, schedule, seed, counts) => {
    const o = { ...schedule, ...options };
    if (o.endpoints) o.endpoints = failover(o.endpoints);
    if (o.gate) o.gate = createGate({ seed });
    const f = withBackoff(origin, o);
    const lat = (counts.lat ??= []);
    return async (url, k) => {
      await new Promise((r) => setTimeout(r, k * counts.S));
      const t0 = Date.now();
      const res = await f(url, undefined, seed === undefined ? undefined : { seed: seed + k });
      if (res.status === 200) lat.push(Date.now() - t0);
      return res;
    };
  };

const MODULES = ['', 'gate', 'failover'];
export const POLICIES = [
  { id: 'primary', name: 'primary only (maxAttempts 5)', modules: MODULES, client: client({}) },
  { id: 'primary-inf', name: 'primary only, no attempt limit', modules: MODULES, client: client({ maxAttempts: Infinity }) },
  { id: 'failover', name: 'failover([primary, secondary])', modules: MODULES, client: client({ endpoints: [PRIMARY, SECONDARY] }) },
  {
    id: 'failover-gate',
    name: 'failover + gate (per client, default threshold)',
    modules: MODULES,
    client: client({ endpoints: [PRIMARY, SECONDARY], gate: true }),
  },
];

/** Each policy over RUNS seeded runs: succeeded (mean), latency percentiles (all runs' calls), requests to the primary while down (mean). */
export async function failoverRows(lib, point, { runs = RUNS } = {}) {
  const rows = [];
  for (const policy of POLICIES) {
    const all = [];
    for (let run = 0; run < runs; run++) {
      let toPrimary = 0;
      const down = (/** @type {string} */ url, /** @type {number} */ at) => !url.startsWith(SECONDARY) && at < point.T && ++toPrimary > 0;
      // (the point's spacing reaches the clients through the run's counts)
      const counted = { ...policy, client: (l, o, sc, seed, c) => policy.client(l, o, sc, seed, Object.assign(c, { S: point.S })) };
      all.push({ ...(await outageRun(point, counted, lib, { run, down })), toPrimary });
    }
    const m = meanOf(all);
    const lat = all.flatMap((x) => x.lat).sort((a, b) => a - b);
    const q = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.ceil(p * lat.length) - 1)] : Number.NaN);
    rows.push({
      name: policy.name,
      succeeded: point.C * point.K - m.failed,
      calls: point.C * point.K,
      p50: q(0.5),
      p99: q(0.99),
      max: lat.at(-1) ?? Number.NaN,
      toPrimary: all.reduce((s, x) => s + x.toPrimary, 0) / all.length,
      sent: m.sent,
    });
  }
  return rows;
}

/** The section's markdown lines. */
export function failoverTable(points, { runs = RUNS } = {}) {
  const fmt = (x) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '—');
  return [
    `C clients each start a call every S ms, K in all, from the moment the primary goes down for T ms; the secondary is ` +
      `healthy; a round trip is ${RTT_MS} ms; the default schedule (exponential, full jitter, base 100 ms, cap 20 s). ` +
      `Virtual time (www/outage.js's model, the shipped package's code); latencies from each call's start, over the ` +
      `successes of ${runs} seeded runs; counts are means (\`node bench/failover.mjs\`).`,
    '',
    '| C × K every S, outage | policy | calls succeeded | latency p50 (ms) | p99 (ms) | max (ms) | requests to the primary while down | requests in all |',
    '|---|---|---:|---:|---:|---:|---:|---:|',
    ...points.flatMap(([p, rows]) =>
      rows.map(
        (r, i) =>
          `| ${i ? '' : `${p.C} × ${p.K} every ${p.S} ms, ${p.T / 1000} s`} | ${r.name} | ${fmt(r.succeeded)} of ${fmt(r.calls)} | ` +
          `${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} | ${fmt(r.toPrimary)} | ${fmt(r.sent)} |`,
      ),
    ),
  ];
}

/** Every point's rows, as the section's lines. */
export async function failoverSection(lib, opts) {
  const points = [];
  for (const p of POINTS) points.push([p, await failoverRows(lib, p, opts)]);
  return failoverTable(points, opts);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lib = await loadLib((m) => import(`../pkg/${m ? `${m}/` : ''}node.mjs`), POLICIES);
  console.log((await failoverSection(lib)).join('\n'));
}
