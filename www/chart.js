// A small SVG chart helper (no dependency: the page must stay tiny and run
// under a strict CSP, so no inline styles — classes only). Legends are HTML
// lists beside the plot (readable by screen readers, never over the data).
const NS = 'http://www.w3.org/2000/svg';
// Plot sizes (viewBox units; a chart is as wide as its figure): full width, or half ('half': one of a pair);
// a figure narrower than NARROW px (a phone) gets the narrow size, so that its text stays readable.
const SIZES = { full: [640, 260], half: [440, 280], narrow: [400, 300] };
const NARROW = 520;
/** Two lines closer than this everywhere (viewBox units) look like one. */
const TWIN_PX = 2;
const L = 64,
  R = 24,
  T = 14,
  B = 40;

export function el(parent, name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  parent.append(e);
  return e;
}

/** "1.2 s", "350 ms", "51.2 µs" (up to three significant digits). */
export function fmtMs(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '–';
  if (ms === 0) return '0';
  if (ms >= 1000) return `${+(ms / 1000).toPrecision(3)} s`;
  if (ms >= 1) return `${+ms.toPrecision(3)} ms`;
  return `${+(ms * 1000).toPrecision(3)} µs`;
}

/**
 * Fills the body of `table` with rows [name, cls, values]: a row header and
 * a cell per value; cls 'ratio' marks a row of ratios (set in bold).
 */
export function tableRows(table, rows) {
  table.tBodies[0].replaceChildren(
    ...rows.map(([name, cls, vals]) => {
      const tr = document.createElement('tr');
      if (cls === 'ratio') tr.className = 'ratio';
      const th = document.createElement('th');
      th.scope = 'row';
      th.textContent = name;
      tr.append(th);
      for (const v of vals) {
        const td = document.createElement('td');
        td.textContent = v;
        tr.append(td);
      }
      return tr;
    }),
  );
}

/** The cells of a row whose figures are still to come: `n` dashes (a table keeps its rows while its view waits). */
export const pending = (n) => Array(n).fill('–');

/**
 * A count: "1,234" (as `toLocaleString('en-US')`, whose first call in a page loads the locale data:
 * 20 ms of its first load; an integer's digits are grouped here, the rest left to it).
 */
export function fmtCount(v) {
  const n = Math.round(v);
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US');
  return String(n).replace(/\B(?=(\d{3})+$)/g, ',');
}

/** Round steps (1, 2, 5 × 10^k) covering [lo, hi] with at most about n ticks. */
export function ticks(lo, hi, n = 5) {
  if (hi <= lo) return [lo];
  const step = 10 ** Math.floor(Math.log10((hi - lo) / n));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => (hi - lo) / s <= n) ?? step * 10;
  const out = [];
  for (let v = Math.ceil(lo / nice - 1e-9) * nice; v <= hi * (1 + 1e-9); v += nice) out.push(+v.toPrecision(12));
  return out;
}

/**
 * The domain and ticks of a log axis holding [lo, hi] (lo > 0): whole decades
 * (1 ms, 10 ms, 100 ms, 1 s…), with 2 and 5 between them when it spans
 * fewer than three decades.
 */
export function logTicks(lo, hi) {
  let a = Math.floor(Math.log10(lo) + 1e-9),
    b = Math.ceil(Math.log10(hi) - 1e-9);
  if (b <= a) b = a + 1;
  if (b - a > 8) a = b - 8; // at most 8 decades: below that, nobody reads it
  const out = [];
  for (let e = a; e <= b; e++) for (const m of b - a < 3 ? [1, 2, 5] : [1]) if (e < b || m === 1) out.push(+(m * 10 ** e).toPrecision(12));
  return { lo: 10 ** a, hi: 10 ** b, ticks: out };
}

/**
 * The width of each chart drawn, as its last layout left it: reading `clientWidth` while drawing would
 * force a layout of the page each time (after the tables and charts just changed), once per chart.
 */
const widths = new WeakMap();
let resized;
function widthOf(svg) {
  if (!widths.has(svg)) {
    resized ??= new ResizeObserver((entries) => {
      for (const e of entries) widths.set(e.target, e.target.clientWidth);
    });
    // every chart of the page at once: one layout for all, before any of them is drawn
    for (const s of [svg, ...document.querySelectorAll('svg')]) if (!widths.has(s)) widths.set(s, s.clientWidth), resized.observe(s);
  }
  return widths.get(svg);
}

/**
 * Prepares an empty chart in `svg` and returns scales for the given domains; `blank`: its axes and
 * labels without ticks (a chart with no data yet, see lineChart).
 */
function frame(svg, { xMin, xMax, yMin = 0, yMax, log, xLabel, yLabel, fmtX = String, fmtY = fmtMs, xTicks, size = 'full', blank }) {
  const width = widthOf(svg);
  const [W, H] = SIZES[width && width < NARROW ? 'narrow' : size];
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  let yt;
  if (log) ({ lo: yMin, hi: yMax, ticks: yt } = logTicks(Math.max(yMin, yMax / 1e8), yMax));
  else yt = ticks(0, yMax);
  const ly = (v) => Math.log10(Math.min(Math.max(v, yMin), yMax));
  const x = (v) => L + ((v - xMin) / Math.max(xMax - xMin, 1e-9)) * (W - L - R);
  const y = log
    ? (v) => H - B - ((ly(v) - ly(yMin)) / Math.max(ly(yMax) - ly(yMin), 1e-9)) * (H - T - B)
    : (v) => H - B - (v / Math.max(yMax, 1e-9)) * (H - T - B);
  const g = el(svg, 'g', { class: 'axis' });
  if (blank) yt = xTicks = [];
  for (const v of yt) {
    el(g, 'line', { class: 'grid', x1: L, y1: y(v), x2: W - R, y2: y(v) });
    el(g, 'text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmtY(v));
  }
  el(g, 'line', { x1: L, y1: H - B, x2: W - R, y2: H - B });
  el(g, 'line', { x1: L, y1: T, x2: L, y2: H - B });
  for (const v of xTicks ?? ticks(xMin, xMax, W < 500 ? 5 : 8)) el(g, 'text', { x: x(v), y: H - B + 15, 'text-anchor': 'middle' }, fmtX(v));
  el(g, 'text', { x: (L + W - R) / 2, y: H - 5, 'text-anchor': 'middle', class: 'label' }, xLabel);
  el(g, 'text', { x: -(T + (H - T - B) / 2), y: 13, 'text-anchor': 'middle', class: 'label', transform: 'rotate(-90)' }, yLabel);
  return { x, y, W, H };
}

const path = (pts, x, y) => pts.map(([a, b], i) => `${i ? 'L' : 'M'}${x(a).toFixed(1)},${y(b).toFixed(1)}`).join('');

/**
 * The HTML legend of the chart in `svg` (a list just before it in its
 * figure): entries [{name, cls, kind: 'line'|'dash'|'dots'|'band'|'bar'|'area'}].
 */
export function legend(svg, entries) {
  let ul = svg.previousElementSibling;
  if (!ul?.classList.contains('legend')) {
    ul = document.createElement('ul');
    ul.className = 'legend';
    svg.before(ul);
  }
  ul.replaceChildren(
    ...entries.map((e) => {
      const li = document.createElement('li');
      const sw = document.createElement('span');
      sw.className = `swatch ${e.kind ?? 'line'} ${e.cls}`;
      sw.setAttribute('aria-hidden', 'true');
      li.append(sw, e.name);
      return li;
    }),
  );
}

/**
 * Lines (and optional bands) over x. series: [{name, cls, points: [[x, y]], dots?, dash?}],
 * bands: [{name, cls, lower: [[x, y]], upper: [[x, y]]}], spans: [{from, to, cls, name}] (shaded x ranges).
 * layered: each line is drawn wider than the ones after it (classes l4…l0), so that lines running together
 * all show, the first as the widest edge.
 *
 * With no point at all (a view whose data is still to come: www/near.js simulates only near the screen)
 * the chart is drawn blank, its legend and its axes' labels in place: it takes the room it will take once
 * drawn, so that the page below does not move when the data comes.
 */
export function lineChart(
  svg,
  { series = [], bands = [], spans = [], log = false, xLabel = '', yLabel = '', fmtX, fmtY, xTicks, step, size, layered },
) {
  const all = [...series.flatMap((s) => s.points), ...bands.flatMap((b) => [...b.upper, ...b.lower])];
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]).filter(Number.isFinite);
  const yMax = Math.max(...ys, 1e-9);
  const yMin = log ? Math.min(...ys.filter((v) => v > 0), yMax) : 0;
  const blank = all.length === 0;
  const { x, y, H } = frame(svg, {
    size,
    xMin: blank ? 0 : Math.min(...xs),
    xMax: blank ? 1 : Math.max(...xs),
    yMin,
    yMax: log ? yMax : yMax * 1.05,
    log,
    xLabel,
    yLabel,
    fmtX,
    fmtY,
    xTicks,
    blank,
  });
  for (const s of blank ? [] : spans)
    el(svg, 'rect', { class: `span ${s.cls}`, x: x(s.from), y: T, width: Math.max(x(s.to) - x(s.from), 1), height: H - T - B });
  for (const b of bands.filter((b) => b.upper.length))
    el(svg, 'path', {
      class: `band ${b.cls}`,
      d:
        path(b.upper, x, y) +
        [...b.lower]
          .reverse()
          .map(([a, v]) => `L${x(a).toFixed(1)},${y(v).toFixed(1)}`)
          .join('') +
        'Z',
    });
  // A series that runs on an earlier one's line (every point within TWIN_PX of it) would be hidden under it:
  // it is drawn dashed over it, and its legend entry says whose line it is.
  const on = (a, b) =>
    a.points.length === b.points.length &&
    a.points.every(([u, v], i) => u === b.points[i][0] && Math.abs(y(v) - y(b.points[i][1])) < TWIN_PX);
  series = series.map((s, i) => {
    const twin = s.points.length && series.slice(0, i).find((o) => on(s, o));
    return twin ? { ...s, dash: true, name: `${s.name} (dashed: on the line of ${twin.name})` } : s;
  });
  for (const s of series.filter((s) => s.points.length)) {
    // a step line holds each value until the next x (counts per bin)
    const pts = step ? s.points.flatMap((p, i) => (i ? [[p[0], s.points[i - 1][1]], p] : [p])) : s.points;
    const under = layered ? ` l${Math.min(series.length - 1 - series.indexOf(s), 4)}` : '';
    el(svg, 'path', { class: `line ${s.cls}${s.dash ? ' dash' : ''}${under}`, d: path(pts, x, y) });
    if (s.dots) for (const [a, v] of s.points) el(svg, 'circle', { class: `dot ${s.cls}`, cx: x(a), cy: y(v), r: 3 });
  }
  legend(svg, [
    ...spans.filter((s) => s.name).map((s) => ({ name: s.name, cls: s.cls, kind: 'area' })),
    ...bands.filter((b) => b.name).map((b) => ({ name: b.name, cls: b.cls, kind: 'band' })),
    ...series.map((s) => ({ name: s.name, cls: s.cls, kind: s.dash ? 'dash' : s.dots ? 'dots' : 'line' })),
  ]);
}

/**
 * Overlaid histograms on the same bins of [lo, hi): sets [{name, cls, counts, expected?, from, to, spike?}]
 * (`expected`: the exact count per bin of a law uniform on [from, to), drawn as a dashed line;
 * `spike`: a law with one value, drawn as a line at it rather than a bar that would hide the others).
 */
export function histogram(svg, { sets, lo, hi, xLabel }) {
  const bins = sets[0].counts.length;
  const spread = sets.filter((s) => s.spike === undefined);
  const yMax = Math.max(1, ...spread.flatMap((s) => [...s.counts, s.expected ?? 0])) * 1.1;
  const w = (hi - lo) / bins || 1;
  const { x, y, H } = frame(svg, {
    xMin: lo,
    xMax: lo + w * bins,
    yMax,
    xLabel,
    yLabel: 'draws per bin',
    fmtX: fmtMs,
    fmtY: fmtCount,
  });
  for (const s of spread) {
    s.counts.forEach((c, i) => {
      if (!c) return;
      el(svg, 'rect', {
        class: `bar ${s.cls}`,
        x: x(lo + i * w) + 0.5,
        y: y(c),
        width: Math.max(x(lo + (i + 1) * w) - x(lo + i * w) - 1, 1),
        height: H - B - y(c),
      });
    });
  }
  for (const s of spread)
    if (s.expected !== undefined)
      el(svg, 'line', { class: `density ${s.cls}`, x1: x(s.from), x2: x(s.to), y1: y(s.expected), y2: y(s.expected) });
  for (const s of sets)
    if (s.spike !== undefined) el(svg, 'line', { class: `spike ${s.cls}`, x1: x(s.spike), x2: x(s.spike), y1: y(0), y2: y(yMax) });
  legend(svg, [
    ...sets.map((s) =>
      s.spike === undefined
        ? { name: s.name, cls: s.cls, kind: 'bar' }
        : { name: `${s.name}: every draw is ${fmtMs(s.spike)} (no jitter)`, cls: s.cls, kind: 'line' },
    ),
    ...spread.filter((s) => s.expected !== undefined).map((s) => ({ name: `${s.name}: exact density`, cls: s.cls, kind: 'dash' })),
  ]);
}
