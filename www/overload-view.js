// The overload view: successful calls per second over time against the
// server's capacity, ours and the AWS SDK's limiter, each shared by 20
// callers, and their figures (goodput, 429s…): the step row of
// bench/RESULTS.md §7a (`node bench/overload.mjs --matrix --rows='^step.*, RA'
// --seed=1` prints the same numbers), simulated in overload-worker.js.
import { lineChart, fmtMs, fmtCount, tableRows, pending } from './chart.js';
import { DEFAULT_SEED, STEP_SPEC } from './overload.js';
import { WorkerClient } from './worker-client.js';

const $ = (id) => document.getElementById(id);
const KINDS = [
  { kind: 'ours', name: "ours: a gate with limit: 'adaptive'", cls: 'v0' },
  { kind: 'sdk', name: "AWS SDK: @smithy/util-retry's AdaptiveRetryStrategy", cls: 'v1' },
];
const ratio = (a, b) => (b === 0 ? '—' : `${+(a / b).toFixed(2)}×`);

export class OverloadView {
  #worker;

  /** Simulates the step row (seeded), ours then the SDK's, and draws each run as it ends. */
  request(seed = DEFAULT_SEED) {
    this.#worker ??= new WorkerClient(new URL('./overload-worker.js', import.meta.url), (e) => {
      $('overload-status').textContent = `overload worker error: ${e.message}`;
    });
    const root = $('overload');
    delete root.dataset.done;
    const results = {};
    const say = (text) => ($('overload-status').textContent = text);
    say(`simulating ${STEP_SPEC.seconds} s of virtual time: ours…`);
    this.#worker.ask('overload', { seed }, (data) => {
      if (data.error) return (say(data.error), true);
      if (data.done) {
        say(`seed ${seed}: ${STEP_SPEC.callers} callers on one limiter, ${STEP_SPEC.seconds} s of virtual time each`);
        root.dataset.values = JSON.stringify({ seed, results });
        root.dataset.done = '1';
        return true;
      }
      results[data.kind] = data.result;
      if (data.kind === 'ours') say(`simulating ${STEP_SPEC.seconds} s of virtual time: the SDK's…`);
      this.draw(results);
    });
  }

  /** Draws the limiters in `results` (each as it comes; none: the chart blank and the rows waiting). */
  draw(results) {
    const seconds = STEP_SPEC.seconds;
    const any = KINDS.some((k) => results[k.kind]);
    const hold = (ys) => ys.map((v, i) => [i, v]).concat([[ys.length, ys.at(-1)]]);
    const cap = [];
    for (let t = 0; t <= seconds; t++)
      if (t === 0 || t === seconds || STEP_SPEC.cap(t) !== STEP_SPEC.cap(t - 1)) cap.push([t, STEP_SPEC.cap(t)]);
    lineChart($('overload-chart'), {
      step: true,
      xLabel: 'time (virtual)',
      yLabel: 'successful calls per second',
      fmtX: (v) => `${v} s`,
      fmtY: fmtCount,
      series: [
        { name: 'server capacity (req/s)', cls: 'cap', dash: true, points: any ? cap : [] },
        ...KINDS.map((k) => ({ name: k.name, cls: k.cls, points: results[k.kind] ? hold(results[k.kind].perSecond) : [] })),
      ],
    });
    const cells = (r) => [
      (+r.goodput.toFixed(1)).toString(),
      fmtCount(r.throttled),
      fmtCount(r.failed),
      `${fmtMs(r.p50)} / ${fmtMs(r.p99)}`,
      fmtMs(r.longest),
    ];
    const rows = KINDS.map((k) => [k.name, '', results[k.kind] ? cells(results[k.kind]) : pending(5)]);
    rows.push([
      'ours ÷ SDK',
      'ratio',
      results.ours && results.sdk
        ? [ratio(results.ours.goodput, results.sdk.goodput), ratio(results.ours.throttled, results.sdk.throttled), '', '', '']
        : [...pending(2), '', '', ''],
    ]);
    tableRows($('overload-table'), rows);
  }
}
