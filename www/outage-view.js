// The outage view: requests per bin (100 ms, merged to fit a long run) arriving at the origin over time and
// the counts of bench/OUTAGE.md, one line and one table row per entry of
// OUTAGE_POLICIES (www/outage.js), simulated in outage-worker.js. Adding a
// policy there adds its line and its row here, with nothing to change.
import { lineChart, fmtMs, fmtCount, tableRows, pending } from './chart.js';
import { OUTAGE_POLICIES, BIN_MS, DEFAULT_POINT, DEFAULT_RUNS } from './outage.js';
import { WorkerClient } from './worker-client.js';
import { untilNear } from './near.js';

/** Largest simulation the page runs (calls in all), to keep a run within a second or two. */
export const MAX_CALLS = 20_000;

/** About how many bins the chart draws across a run (the model's are merged to fit). */
export const CHART_BINS = 80;

/** `bins`, each run of `per` summed into one (the last may be shorter). */
export const merge = (bins, per) =>
  Array.from({ length: Math.ceil(bins.length / per) }, (_, i) => bins.slice(i * per, (i + 1) * per).reduce((a, b) => a + b, 0));

const $ = (id) => document.getElementById(id);
const ratio = (a, b) => (b === 0 ? '—' : `${+(a / b).toFixed(3)}×`);

export class OutageView {
  /** Runs a simulation once the section is near the screen (the last one asked for until then). */
  #whenNear = untilNear($('outage'), $('outage-status'));

  constructor() {
    this.worker = new WorkerClient(new URL('./outage-worker.js', import.meta.url), (e) => {
      $('outage-status').textContent = `outage worker error: ${e.message}`;
    });
  }

  /** The point, runs and schedule the view fields ask for (defaults: the benchmark's first point). */
  static settings(view) {
    const num = (v, lo, hi, d) => Math.min(hi, Math.max(lo, Number(v ?? d) || d));
    const C = Math.round(num(view.C, 1, 1000, DEFAULT_POINT.C));
    const K = Math.round(num(view.K, 1, Math.max(1, Math.floor(MAX_CALLS / C)), DEFAULT_POINT.K));
    const T = Math.round(num(view.T, 0.1, 120, DEFAULT_POINT.T / 1000) * 1000);
    return { point: { C, K, T }, runs: Math.round(num(view.runs, 1, 10, DEFAULT_RUNS)) };
  }

  /**
   * Simulates `point` (`runs` seeded runs, the schedule's timing) and draws each run's means as they
   * come; while the section has not come near the screen, only the last one asked for, once it does.
   */
  request(sim, schedule, scheduleName) {
    delete $('outage').dataset.done;
    // (the default view, the benchmark's first point, is ~20 s of a core: far below the first screen;
    // until then, the chart blank and a row per policy)
    this.#whenNear(
      () => this.#simulate(sim, schedule, scheduleName),
      () => this.draw(sim.point, {}),
    );
  }

  /** @see request */
  #simulate({ point, runs }, schedule, scheduleName) {
    const root = $('outage');
    $('outage-status').textContent = `simulating ${point.C} × ${point.K} calls, ${fmtMs(point.T)} outage…`;
    this.worker.ask('outage', { point, runs, schedule }, (data) => {
      if (data.error) return (($('outage-status').textContent = data.error), true);
      if (data.done) {
        root.dataset.done = '1';
        return true;
      }
      const n = data.run + 1;
      $('outage-status').textContent =
        `mean of ${n} of ${runs} seeded run${runs > 1 ? 's' : ''} (${scheduleName})${n < runs ? '; simulating…' : ''}`;
      this.draw(point, data.results);
      root.dataset.values = JSON.stringify({ point, runs: n, results: data.results });
    });
  }

  draw(point, results) {
    const cls = (i) => `o${i}`;
    // The chart's bins: the model's (BIN_MS) merged so that a run has at most about CHART_BINS of them. A
    // gate releases its held calls in bursts, one bin in several: drawn at 100 ms over a long run on a log
    // axis, each burst and each empty bin between two became a stripe down to the floor.
    const longest = Math.max(1, ...OUTAGE_POLICIES.map((p) => results[p.id]?.bins.length ?? 0));
    const per = Math.max(1, Math.ceil(longest / CHART_BINS));
    const binMs = per * BIN_MS;
    lineChart($('outage-chart'), {
      log: true,
      step: true,
      layered: true,
      xLabel: 'time since the origin went down',
      yLabel: `requests per ${fmtMs(binMs)} at the origin`,
      fmtX: fmtMs,
      fmtY: (v) => (v >= 1 ? fmtCount(v) : String(+v.toPrecision(2))),
      spans: [{ from: 0, to: point.T, cls: 'down', name: `origin down (${fmtMs(point.T)})` }],
      series: OUTAGE_POLICIES.map((p, i) => {
        const bins = merge(results[p.id]?.bins ?? [], per);
        if (bins.length === 0) return { name: p.name, cls: cls(i), points: [] };
        return { name: p.name, cls: cls(i), points: bins.map((v, b) => [b * binMs, v]).concat([[bins.length * binMs, 0]]) };
      }),
    });
    const base = results[OUTAGE_POLICIES[0].id];
    const cells = (r) =>
      r ? [fmtCount(r.sentDuring), fmtCount(r.receivedDown), fmtMs(r.drain), fmtMs(r.median), fmtCount(r.failedFast)] : pending(5);
    const rows = OUTAGE_POLICIES.map((p, i) => [p.name, cls(i), cells(results[p.id])]);
    for (const p of OUTAGE_POLICIES.slice(1)) {
      const r = results[p.id];
      rows.push([
        `${p.name} ÷ ${OUTAGE_POLICIES[0].name}`,
        'ratio',
        r && base
          ? [
              ratio(r.sentDuring, base.sentDuring),
              ratio(r.receivedDown, base.receivedDown),
              ratio(r.drain, base.drain),
              ratio(r.median, base.median),
              '',
            ]
          : [...pending(4), ''],
      ]);
    }
    tableRows($('outage-table'), rows);
  }
}
