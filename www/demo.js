// The demo page: controls <-> URL, schedule and cumulative charts, the
// jitter histogram, the retry storm (in a worker) and a live fetch timeline.
// It imports the built package exactly as a user would: no init call.
import { Backoff, backoffStats } from '/pkg/stats/index.js';
import { withBackoff } from '/pkg/index.js';
import { lineChart, histogram, fmtMs } from './chart.js';

const form = document.getElementById('controls');
const $ = (id) => document.getElementById(id);
const NUMBERS = ['baseMs', 'factor', 'maxDelayMs', 'jitterAmount', 'maxAttempts', 'maxElapsedMs', 'seed', 'retries', 'hist'];
const CHOICES = ['preset', 'strategy', 'jitter'];

/** Form state <-> the URL query (only what is set). */
function readForm() {
  const s = {};
  for (const k of [...CHOICES, ...NUMBERS]) {
    const v = form.elements[k]?.value ?? $('hist-attempt').value;
    if (v !== '') s[k] = v;
  }
  if (form.elements.log.checked) s.log = '1';
  return s;
}

function writeForm(s) {
  for (const k of [...CHOICES, ...NUMBERS]) if (form.elements[k]) form.elements[k].value = s[k] ?? '';
  $('hist-attempt').value = s.hist ?? '3';
  form.elements.log.checked = s.log === '1';
}

/** The library options the state describes. */
function options(s) {
  const o = {};
  if (s.preset) o.preset = s.preset;
  if (s.strategy) o.strategy = s.strategy;
  for (const k of ['baseMs', 'factor', 'maxDelayMs', 'maxAttempts', 'maxElapsedMs', 'seed']) if (s[k] !== undefined) o[k] = Number(s[k]);
  if (s.jitter === 'ratio') o.jitter = { ratio: Number(s.jitterAmount ?? 0.2) };
  else if (s.jitter === 'add') o.jitter = { addMaxMs: Number(s.jitterAmount ?? 1000) };
  else if (s.jitter) o.jitter = s.jitter;
  if (o.seed === undefined) o.seed = 42; // the drawn path is reproducible by default
  return o;
}

function renderSchedule(o, s) {
  const shown = Math.min(60, Math.max(1, Number(s.retries ?? 12)));
  const path = [];
  const b = new Backoff(o);
  for (let i = 0; i < shown; i++) {
    const d = b.next();
    if (d === undefined) break;
    path.push(d);
  }
  const n = Math.max(path.length, 1);
  const stats = Array.from({ length: n }, (_, i) => ({ n: i + 1, ...backoffStats(o, i + 1) }));
  const pts = (f) => stats.map((st) => [st.n, f(st)]);
  lineChart($('schedule-chart'), {
    log: s.log === '1',
    xLabel: 'retry',
    yLabel: 'delay before the retry',
    bands: [{ name: 'min–max', cls: 'range', lower: pts((st) => st.min), upper: pts((st) => st.max) }],
    series: [
      { name: 'median', cls: 'c0', points: pts((st) => st.p50) },
      { name: '90th percentile', cls: 'c1', points: pts((st) => st.p90) },
      { name: `seeded run (seed ${o.seed})`, cls: 'c2', points: path.map((d, i) => [i + 1, d]), dots: true },
    ],
  });
  const chart = $('schedule');
  chart.dataset.stats = JSON.stringify(stats);
  chart.dataset.path = JSON.stringify(path);
  $('schedule-table').tBodies[0].replaceChildren(
    ...stats.map((st, i) => {
      const tr = document.createElement('tr');
      for (const v of [st.n, fmtMs(st.min), fmtMs(st.p50), fmtMs(st.p90), fmtMs(st.max), fmtMs(st.mean), fmtMs(path[i])]) {
        const td = document.createElement('td');
        td.textContent = String(v);
        tr.append(td);
      }
      return tr;
    }),
  );
  let run = 0,
    mean = 0;
  lineChart($('cumulative-chart'), {
    xLabel: 'retry',
    yLabel: 'waited so far',
    series: [
      { name: 'expected', cls: 'c0', points: stats.map((st) => [st.n, (mean += st.mean)]) },
      { name: 'seeded run', cls: 'c2', points: path.map((d, i) => [i + 1, (run += d)]), dots: true },
    ],
  });
  return n;
}

function renderHistogram(o, s, retries) {
  const attempt = Math.min(Math.max(1, Number(s.hist ?? 3)), retries);
  const st = backoffStats(o, attempt);
  const draws = Backoff.sample(o, attempt, 100_000);
  const bins = 50;
  const lo = st.min,
    hi = st.max > st.min ? st.max : st.min + 1;
  const counts = new Array(bins).fill(0);
  for (const d of draws) counts[Math.min(bins - 1, Math.floor(((d - lo) / (hi - lo)) * bins))]++;
  // The exact density where the law is uniform on [min, max): full, equal and ratio jitter.
  const uniform =
    st.exact &&
    st.max > st.min &&
    Math.abs(st.p50 - (st.min + st.max) / 2) < 1e-9 * st.max &&
    Math.abs(st.p90 - (st.min + 0.9 * (st.max - st.min))) < 1e-9 * st.max;
  histogram($('histogram'), {
    counts,
    lo,
    hi,
    expected: uniform ? draws.length / bins : undefined,
    xLabel: `delay before retry ${attempt}`,
  });
  Object.assign($('distribution').dataset, { attempt: String(attempt), counts: JSON.stringify(counts), uniform: String(uniform) });
}

function renderSnippet(o) {
  const opts = JSON.stringify(o)
    .replace(/"(\w+)":/g, '$1: ')
    .replace(/,/g, ', ')
    .replace(/"/g, "'");
  $('snippet').textContent = `import { Backoff, fetchWithBackoff } from 'wasm-backoff';

// The schedule shown above:
const backoff = new Backoff(${opts});
let delay;
while ((delay = backoff.next()) !== undefined) {
  /* try again after \`delay\` ms */
}

// Or let the library drive fetch with the same timing:
const res = await fetchWithBackoff('/api', {}, ${opts});`;
}

function render() {
  const s = readForm();
  const url = new URL(location.href);
  url.search = new URLSearchParams(s).toString();
  history.replaceState(null, '', url);
  const o = options(s);
  try {
    new Backoff(o); // validate first: a clear message instead of half-drawn charts
  } catch (e) {
    $('error').textContent = `${e.name}: ${e.message}`;
    $('error').hidden = false;
    return;
  }
  $('error').hidden = true;
  const retries = renderSchedule(o, s);
  renderHistogram(o, s, retries);
  renderSnippet(o);
  document.body.dataset.ready = '1';
}

// ---- retry storm (Web Worker) ----
const SIZES = [1, 5, 10, 20, 30, 50, 75, 100];
$('storm-run').addEventListener('click', () => {
  $('storm-run').disabled = true;
  $('storm-status').textContent = 'simulating…';
  const results = {};
  const worker = new Worker('./storm-worker.js', { type: 'module' });
  const o = options(readForm());
  const draw = () => {
    const series = Object.entries(results).map(([name, pts], i) => ({ name, cls: `c${i}`, pts }));
    const sized = (f) => series.map((x) => ({ name: x.name, cls: x.cls, points: x.pts.map((p) => [p.n, f(p)]), dots: true }));
    lineChart($('storm-calls'), {
      xLabel: 'clients (N)',
      yLabel: 'writes',
      series: sized((p) => p.calls),
      fmtY: (v) => String(Math.round(v)),
    });
    lineChart($('storm-time'), { xLabel: 'clients (N)', yLabel: 'time', series: sized((p) => p.timeMs), log: true });
  };
  worker.onmessage = ({ data }) => {
    if (data.ready) return worker.postMessage({ sizes: SIZES, runs: 10, yours: o });
    if (data.done) {
      worker.terminate();
      $('storm-run').disabled = false;
      $('storm-status').textContent = 'done (mean of 10 seeds per point)';
      $('storm').dataset.results = JSON.stringify(results);
      $('storm').dataset.done = '1';
      return;
    }
    results[data.name] = data.points;
    $('storm-status').textContent = `simulated: ${Object.keys(results).join(', ')}`;
    draw();
  };
  worker.onerror = (e) => {
    $('storm-status').textContent = `worker error: ${e.message}`;
    $('storm-run').disabled = false;
  };
});

// ---- live fetch timeline ----
let abort;
$('live-run').addEventListener('click', async () => {
  const script = $('live-script').value;
  const o = options(readForm());
  const t0 = performance.now();
  const attempts = [];
  const waits = [];
  const log = $('live-log');
  log.replaceChildren();
  const say = (text) => {
    const li = document.createElement('li');
    li.textContent = text;
    log.append(li);
  };
  const draw = () => liveChart(attempts, waits, performance.now() - t0);
  abort = new AbortController();
  $('live-run').disabled = true;
  $('live-abort').disabled = false;
  $('live').dataset.done = '';
  // Wrap fetch to see each attempt as it happens.
  const traced = async (input, init) => {
    const a = { start: performance.now() - t0 };
    attempts.push(a);
    draw();
    try {
      const res = await fetch(input, init);
      Object.assign(a, { end: performance.now() - t0, status: res.status });
      return res;
    } catch (e) {
      Object.assign(a, { end: performance.now() - t0, error: e.name });
      throw e;
    } finally {
      draw();
    }
  };
  const retrying = withBackoff(traced, {
    ...o,
    maxAttempts: o.maxAttempts ?? 5,
    timeoutMs: script.startsWith('hang') ? 500 : undefined,
    onRetry: (i) => {
      const start = performance.now() - t0;
      waits.push({ start, end: start + i.delayMs });
      say(
        `attempt ${i.attempt} ${i.status ?? i.error?.name ?? 'failed'}${i.retryAfterMs !== undefined ? ` (Retry-After ${fmtMs(i.retryAfterMs)})` : ''}: waiting ${fmtMs(i.delayMs)}`,
      );
      draw();
    },
  });
  const timer = setInterval(draw, 100);
  try {
    const res = await retrying(`/flaky?id=${crypto.randomUUID()}&script=${script}`, { signal: abort.signal });
    say(`resolved: ${res.status} after ${attempts.length} attempt${attempts.length > 1 ? 's' : ''}`);
  } catch (e) {
    say(`rejected: ${e?.name ?? e} ${e?.message ?? ''}`);
  } finally {
    clearInterval(timer);
    draw();
    $('live-run').disabled = false;
    $('live-abort').disabled = true;
    Object.assign($('live').dataset, { attempts: String(attempts.length), done: '1' });
  }
});
$('live-abort').addEventListener('click', () => abort?.abort(new DOMException('Aborted from the page', 'AbortError')));

function liveChart(attempts, waits, now) {
  const svg = $('live-chart');
  const NS = 'http://www.w3.org/2000/svg';
  const W = 640,
    H = 90,
    L = 10,
    R = 10;
  const span = Math.max(now, ...waits.map((w) => w.end), 100);
  const x = (t) => L + (t / span) * (W - L - R);
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.replaceChildren();
  const add = (name, attrs, text) => {
    const e = document.createElementNS(NS, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    if (text) e.textContent = text;
    svg.append(e);
  };
  for (const w of waits) add('line', { class: 'wait', x1: x(w.start), x2: x(w.end), y1: 40, y2: 40 });
  attempts.forEach((a, i) => {
    const end = a.end ?? now;
    add('rect', {
      class: `attempt ${a.status && a.status < 400 ? 'ok' : 'fail'}`,
      x: x(a.start),
      y: 30,
      width: Math.max(x(end) - x(a.start), 3),
      height: 20,
    });
    add('text', { class: 'live-label', x: x(a.start), y: 24 }, `#${i + 1} ${a.status ?? a.error ?? '…'}`);
  });
  add('text', { class: 'live-label', x: L, y: H - 8 }, `0 — ${fmtMs(span)}`);
}

// ---- wiring ----
const initial = Object.fromEntries(new URLSearchParams(location.search));
writeForm(initial);
form.addEventListener('input', render);
form.addEventListener('change', render);
$('hist-attempt').addEventListener('input', render);
render();
