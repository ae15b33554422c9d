// The reconnect-storm view: N clients of a server that restarts and then
// takes at most C new connections a second; connection attempts per second
// against that capacity, for ours and the native and wrappers' policies, and
// the time until all are back (the model of bench/reconnect.mjs: its first
// row is the default view), simulated in reconnect-worker.js.
import { lineChart, fmtCount, tableRows, pending } from './chart.js';
import { DEFAULT_POINT, RECONNECT_POLICIES } from './reconnect.js';
import { WorkerClient } from './worker-client.js';
import { untilNear } from './near.js';

const $ = (id) => document.getElementById(id);
const CLS = ['v0', 'v1', 'v2', 'v3'];
const secs = (ms) => (ms === Infinity ? 'never' : `${(ms / 1000).toFixed(1)} s`);

export class ReconnectView {
  #worker;
  #timer;
  /** Runs a simulation once the section is near the screen (the last one asked for until then). */
  #whenNear = untilNear($('reconnect'), $('reconnect-status'));

  /** The point the view's controls name (clamped). */
  static settings(view) {
    const num = (v, lo, hi, d) => Math.round(Math.min(hi, Math.max(lo, Number(v ?? d) || d)));
    return {
      N: num(view.rN, 10, 100_000, DEFAULT_POINT.N),
      C: num(view.rC, 1, 100_000, DEFAULT_POINT.C),
      R: num(view.rR, 0, 600_000, DEFAULT_POINT.R),
    };
  }

  /** Simulates every policy at `point` (debounced: typing asks once), drawing each as it comes; once the section is near the screen. */
  request(point) {
    clearTimeout(this.#timer);
    const root = $('reconnect');
    delete root.dataset.done;
    // (simulated once the section is near the screen; until then, the chart blank and a row per policy)
    this.#whenNear(
      () => this.#simulate(point),
      () => this.draw(point, {}),
    );
  }

  /** @see request */
  #simulate(point) {
    const root = $('reconnect');
    $('reconnect-status').textContent = 'simulating…';
    this.#timer = setTimeout(() => {
      this.#worker ??= new WorkerClient(new URL('./reconnect-worker.js', import.meta.url), (e) => {
        $('reconnect-status').textContent = `reconnect worker error: ${e.message}`;
      });
      const results = {};
      this.#worker.ask('reconnect', { point }, (data) => {
        if (!data.done) return void ((results[data.policy] = data.result), this.draw(point, results));
        $('reconnect-status').textContent =
          `${fmtCount(point.N)} clients, ${fmtCount(point.C)} new connections a second, retry: ${point.R} ms; ideal ${secs((point.N / point.C) * 1000)}`;
        root.dataset.values = JSON.stringify(results);
        root.dataset.done = '1';
        return true;
      });
    }, 150);
  }

  /** Draws the policies in `results` (each as it comes); the others' lines are left out and their rows wait. */
  draw(point, results) {
    const all = RECONNECT_POLICIES.map((p, i) => ({ p, cls: CLS[i], r: results[p.id] }));
    const shown = all.filter((x) => x.r);
    const end = Math.max(...shown.map((x) => x.r.perSecond.length), 1);
    const hold = (ys) => ys.map((v, i) => [i, Math.max(v, 0.5)]).concat([[ys.length, Math.max(ys.at(-1) ?? 0, 0.5)]]);
    lineChart($('reconnect-chart'), {
      step: true,
      log: true,
      xLabel: 'time after the restart (virtual)',
      yLabel: 'connection attempts per second',
      fmtX: (v) => `${v} s`,
      fmtY: fmtCount,
      series: [
        {
          name: 'server capacity (new connections/s)',
          cls: 'cap',
          dash: true,
          // (none while no policy is drawn: the chart stays blank)
          points: shown.length
            ? [
                [0, point.C],
                [end, point.C],
              ]
            : [],
        },
        ...all.map((x) => ({ name: x.p.name, cls: x.cls, points: x.r ? hold(x.r.perSecond) : [] })),
      ],
    });
    tableRows(
      $('reconnect-table'),
      all.map((x) => [
        x.p.name,
        '',
        x.r
          ? [
              fmtCount(x.r.peak),
              `${(x.r.peak / point.C).toFixed(2)}×`,
              secs(x.r.backMs),
              `${(x.r.backMs / x.r.idealMs).toFixed(2)}×`,
              fmtCount(x.r.attempts),
            ]
          : pending(5),
      ]),
    );
  }
}
