// The demo page: policies A and B (form <-> URL), the schedule and
// cumulative charts, the jitter histograms, the retry storm (in a worker)
// with its verdict, and a live fetch timeline. It imports the built package
// exactly as a user would: no init call.
import { Backoff, backoffStats } from '../pkg/stats/index.js';
import { lineChart, histogram, fmtMs, fmtCount } from './chart.js';
import { readForm, writeForm, fromQuery, toQuery, options, cloneForB, fillPickers } from './state.js';
import { Swimlanes } from './swimlane.js';
import { WorkerClient } from './worker-client.js';
import { OutageView } from './outage-view.js';
import { untilNear } from './near.js';
import { OverloadView } from './overload-view.js';
import { ReconnectView } from './reconnect-view.js';
import { Live } from './live.js';
import { STORM_SIZES, STORM_RUNS, histograms, verdict, sampled } from './compare.js';

const $ = (id) => document.getElementById(id);
const form = /** @type {HTMLFormElement} */ ($('controls'));
fillPickers(form.querySelector('fieldset[data-policy="a"]'));
cloneForB(form.querySelector('fieldset[data-policy="a"]'));

/** The two policies as the charts use them: name, CSS class (colour), fields, library options. */
function policies(s) {
  return [
    { name: 'A', cls: 'c0', fields: s.a, o: options(s.a) },
    { name: 'B', cls: 'c1', fields: s.b, o: options(s.b) },
  ];
}
const clamp = (v, lo, hi, dflt) => Math.min(hi, Math.max(lo, Number(v ?? dflt) || dflt));

/** One row of a table. */
function row(cells, tag = 'td') {
  const tr = document.createElement('tr');
  for (const v of cells) {
    const td = document.createElement(tag);
    td.textContent = String(v);
    tr.append(td);
  }
  return tr;
}

/**
 * The schedule of a policy: backoffStats of each retry and one seeded run,
 * kept per policy. A sampled law (100 000 draws per retry, ~20 ms each) has
 * its statistics computed in the storm worker: until they come, `stats` is
 * empty and `pending` true, and the page redraws when they arrive.
 */
const schedules = new Map();
function scheduleOf(o, shown) {
  const key = JSON.stringify([o, shown]);
  if (!schedules.has(key)) {
    const path = [];
    const b = new Backoff(o);
    for (let i = 0; i < shown; i++) {
      const d = b.next();
      if (d === undefined) break;
      path.push(d);
    }
    b.free();
    const n = Math.max(path.length, 1);
    const entry = { path, stats: [], pending: false };
    if (schedules.size > 20) schedules.delete(schedules.keys().next().value);
    schedules.set(key, entry);
    if (sampled(o)) {
      entry.pending = true;
      laws.ask(`stats ${key}`, { stats: { options: o, retries: n } }, (data) => {
        Object.assign(entry, { stats: data.stats, pending: false });
        drawn.delete('schedule');
        render();
        return true;
      });
    } else entry.stats = Array.from({ length: n }, (_, i) => ({ n: i + 1, ...backoffStats(o, i + 1) }));
  }
  return schedules.get(key);
}

/** The statistics each schedule table shows. */
const tables = new WeakMap();
function renderSchedule(pols, view) {
  const shown = clamp(view.retries, 1, 60, 12);
  const data = {};
  for (const p of pols) {
    const entry = (data[p.name] = scheduleOf(p.o, shown));
    // (a table is rebuilt only when its policy's schedule changed, or its statistics came)
    const table = $(`schedule-table-${p.name.toLowerCase()}`);
    if (tables.get(table) === entry.stats) continue;
    tables.set(table, entry.stats);
    table.tBodies[0].replaceChildren(
      ...entry.stats.map((st, i) => row([st.n, ...[st.min, st.p50, st.p90, st.max, st.mean, entry.path[i]].map(fmtMs)])),
    );
  }
  const pts = (p, f) => data[p.name].stats.map((st) => [st.n, f(st)]);
  lineChart($('schedule-chart'), {
    log: view.log === '1',
    xLabel: 'retry number',
    yLabel: 'delay before the retry',
    bands: pols.map((p) => ({ name: `${p.name} min–max`, cls: p.cls, lower: pts(p, (st) => st.min), upper: pts(p, (st) => st.max) })),
    series: pols.flatMap((p) => [
      { name: `${p.name} median`, cls: p.cls, points: pts(p, (st) => st.p50) },
      { name: `${p.name} 90th percentile`, cls: p.cls, points: pts(p, (st) => st.p90), dash: true },
      { name: `${p.name} seeded run (seed ${p.o.seed})`, cls: p.cls, points: data[p.name].path.map((d, i) => [i + 1, d]), dots: true },
    ]),
  });
  $('schedule').dataset.values = JSON.stringify(data);
  $('schedule').dataset.pending = pols.some((p) => data[p.name].pending) ? '1' : '';
  lineChart($('cumulative-chart'), {
    xLabel: 'retry number',
    yLabel: 'waited so far',
    series: pols.flatMap((p) => {
      let mean = 0,
        run = 0;
      return [
        { name: `${p.name} expected`, cls: p.cls, points: data[p.name].stats.map((st) => [st.n, (mean += st.mean)]) },
        { name: `${p.name} seeded run`, cls: p.cls, points: data[p.name].path.map((d, i) => [i + 1, (run += d)]), dots: true, dash: true },
      ];
    }),
  });
}

/**
 * The histograms (compare.js's `histograms`: 100 000 draws per policy, a few ms each, 10-20 ms for a
 * sampled law): drawn with the page at the first load, then computed by the laws worker at each
 * change; until it answers the section is pending (aria-busy, dimmed if the wait shows).
 */
function renderHistogram(pols, view) {
  const attempt = clamp(view.hist, 1, 60, 3);
  if (!document.body.dataset.ready) return drawHistogram(pols, histograms({ Backoff, backoffStats }, pols, attempt));
  $('distribution').dataset.pending = '1';
  $('histogram').setAttribute('aria-busy', 'true');
  const policies = pols.map((p) => ({ name: p.name, o: p.o }));
  laws.ask('hist', { hist: { policies, attempt } }, (data) => (drawHistogram(pols, data.hist), true));
}

function drawHistogram(pols, { values, sets, lo, hi }) {
  const cls = (name) => pols.find((p) => p.name === name).cls;
  histogram($('histogram'), {
    sets: sets.map((set) => ({ ...set, cls: cls(set.name) })),
    lo,
    hi,
    xLabel: `delay before retry ${values.attempt}`,
  });
  $('distribution').dataset.values = JSON.stringify(values);
  delete $('distribution').dataset.pending;
  $('histogram').removeAttribute('aria-busy');
}

function renderSnippet(pols) {
  const lit = (o) =>
    JSON.stringify(o)
      .replace(/"(\w+)":/g, '$1: ')
      .replace(/,/g, ', ')
      .replace(/"/g, "'");
  $('snippet').textContent = `import { Backoff, fetchWithBackoff } from 'wasm-backoff';

// The schedules shown above:
const a = new Backoff(${lit(pols[0].o)});
const b = new Backoff(${lit(pols[1].o)});
let delay;
while ((delay = a.next()) !== undefined) {
  /* try again after \`delay\` ms */
}

// Or let the library drive fetch with the same timing:
const res = await fetchWithBackoff('/api', {}, ${lit(pols[0].o)});`;
}

/** Each part of the page is redrawn only when what it shows changed. */
const drawn = new Map();
const changed = (part, value) => {
  const key = JSON.stringify(value);
  return drawn.get(part) !== key && (drawn.set(part, key), true);
};

/** Redraws what the state changed (synchronously), and asks the workers for the simulations. */
function render() {
  performance.mark('redraw-start');
  const s = readForm(form);
  const url = new URL(location.href);
  url.search = toQuery(s);
  if (url.href !== location.href) history.replaceState(null, '', url); // (a select's input and change events: one state)
  const pols = policies(s);
  for (const p of pols) {
    try {
      new Backoff(p.o).free(); // validate first: a clear message instead of half-drawn charts
    } catch (e) {
      $('error').textContent = `Policy ${p.name}: ${e.name}: ${e.message}`;
      $('error').hidden = false;
      return;
    }
  }
  $('error').hidden = true;
  const v = s.view;
  if (changed('schedule', [s.a, s.b, v.retries, v.log])) renderSchedule(pols, v);
  if (changed('histogram', [s.a, s.b, v.hist])) renderHistogram(pols, v);
  if (changed('storm', [s.a, s.b])) renderSnippet(pols), requestStorm(pols);
  if (changed('lanes', [s.a, s.b, v.laneN, v.laneRun])) requestLanes(pols, v);
  lanes.setSpeed(Number(v.speed ?? 1));
  const sim = OutageView.settings(v);
  const timing = v.outageSchedule ? s[v.outageSchedule] : undefined;
  if (changed('outage', [sim, timing])) {
    const { maxAttempts, maxElapsedMs, seed, ...schedule } = timing ? options(timing) : {};
    outage.request(sim, schedule, timing ? `policy ${v.outageSchedule.toUpperCase()}'s timing` : 'package default schedule');
  }
  const storm = ReconnectView.settings(v);
  if (changed('reconnect', storm)) reconnect.request(storm);
  performance.measure('redraw', 'redraw-start');
  if (!document.body.dataset.ready) performance.mark('ready'); // first load: modules, wasm and the charts drawn
  document.body.dataset.ready = '1';
}

// ---- retry storm (Web Worker): the curves, the verdict and the swimlanes ----
const storms = new WorkerClient(new URL('./storm-worker.js', import.meta.url), (e) => {
  $('verdict').textContent = `storm worker error: ${e.message}`;
});
// The laws' draws (a sampled law's statistics, the histograms) in a worker of their own (the same
// module): behind the storm curves (0.2-0.7 s a change) they would wait.
const laws = new WorkerClient(new URL('./storm-worker.js', import.meta.url), (e) => {
  $('error').textContent = `laws worker error: ${e.message}`;
  $('error').hidden = false;
});

// The storm section (its curves, then the swimlanes) simulates once it comes near the screen: ~1 s of a
// worker at every load, for a section three screens down.
const stormNear = untilNear($('storm'), $('verdict'));
const lanesNear = untilNear($('storm'), $('lane-status'));

let stormTimer;
/** The storm curves of A and B (debounced: typing in a field asks once), once the section is near the screen. */
function requestStorm(pols) {
  clearTimeout(stormTimer);
  delete $('storm').dataset.done;
  stormNear(
    () => {
      $('verdict').textContent = 'simulating…';
      stormTimer = setTimeout(simulateStorm, 150, pols);
    },
    () => drawStorm(pols, {}),
  );
}

/** The storm curves of `pols` from the worker, drawn when every point has come. */
function simulateStorm(pols) {
  const results = {};
  storms.ask(
    'curves',
    { curves: { sizes: STORM_SIZES, runs: STORM_RUNS, policies: Object.fromEntries(pols.map((p) => [p.name, p.o])) } },
    (data) => {
      if (data.points) return void (results[data.name] = data.points);
      drawStorm(pols, results);
      $('storm').dataset.results = JSON.stringify(results);
      $('storm').dataset.done = '1';
      return true;
    },
  );
}

const outage = new OutageView();
const reconnect = new ReconnectView();

const lanes = new Swimlanes({
  root: $('lanes'),
  lanes: ['A', 'B'].map((name) => ({ name, canvas: $(`lane-${name.toLowerCase()}`), totals: $(`lane-${name.toLowerCase()}-totals`) })),
  scrub: $('lane-scrub'),
  play: $('lane-play'),
  step: $('lane-step'),
  clock: $('lane-clock'),
  status: $('lane-status'),
});

/** One run of the storm for the swimlanes (the run's seeds are those of the curves), once the section is near the screen. */
function requestLanes(pols, view) {
  const clients = Number(view.laneN ?? 20);
  delete $('lanes').dataset.ready;
  lanesNear(
    () =>
      storms.ask(
        'trace',
        { trace: { clients, run: Number(view.laneRun ?? 1) - 1, policies: Object.fromEntries(pols.map((p) => [p.name, p.o])) } },
        (data) => (lanes.show(data.traces, clients), true),
      ),
    () => lanes.reserve(clients),
  );
}

/** Draws the storm curves of `results` (none yet: the charts blank, the verdict left as it is). */
function drawStorm(pols, results) {
  const sized = (f) => pols.map((p) => ({ name: p.name, cls: p.cls, points: (results[p.name] ?? []).map((x) => [x.n, f(x)]), dots: true }));
  lineChart($('storm-calls'), {
    size: 'half',
    xLabel: 'clients (N)',
    yLabel: 'writes (mean per run)',
    series: sized((x) => x.calls),
    fmtY: fmtCount,
  });
  lineChart($('storm-time'), {
    size: 'half',
    xLabel: 'clients (N)',
    yLabel: 'time until all are done',
    series: sized((x) => x.timeMs),
    log: true,
  });
  if (results.A && results.B) $('verdict').textContent = verdict(results.A.at(-1), results.B.at(-1));
}

// ---- live fetch ----
new Live(
  {
    root: $('live'),
    lanes: $('live-lanes'),
    axis: $('live-axis'),
    script: $('live-script'),
    policy: $('live-policy'),
    steer: $('live-steer'),
    run: $('live-run'),
    down: $('live-down'),
    downSeconds: $('live-down-s'),
    clear: $('live-clear'),
    endpoint: $('live-endpoint'),
  },
  (name) => policies(readForm(form)).find((p) => p.name === name).o,
);

// ---- wiring ----
writeForm(form, fromQuery(location.search));
// (controls outside the form element name it with form="controls": their events do not bubble to it)
for (const type of ['input', 'change']) document.addEventListener(type, (e) => e.target.form === form && render());
render();
// The overload view has no controls: one seeded run of each limiter, once the section comes near the
// screen (a page opened elsewhere spends no CPU on it).
const overload = new OverloadView();
untilNear($('overload'), $('overload-status'))(
  () => overload.request(),
  () => overload.draw({}),
);
