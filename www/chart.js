// A small SVG chart helper (no dependency: the page must stay tiny and run
// under a strict CSP, so no inline styles — classes only).
const NS = 'http://www.w3.org/2000/svg';
const W = 640,
  H = 270,
  L = 56,
  R = 12,
  T = 24,
  B = 34;

function el(parent, name, attrs = {}, text) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  parent.append(e);
  return e;
}

/** "1.2 s", "350 ms", "51.2 µs". */
export function fmtMs(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return '–';
  if (ms === 0) return '0';
  if (ms >= 1000) return `${+(ms / 1000).toPrecision(3)} s`;
  if (ms >= 1) return `${+ms.toPrecision(3)} ms`;
  return `${+(ms * 1000).toPrecision(3)} µs`;
}

function ticks(lo, hi, n = 5) {
  if (hi <= lo) return [lo];
  const step = 10 ** Math.floor(Math.log10((hi - lo) / n));
  const nice = [1, 2, 5, 10].map((m) => m * step).find((s) => (hi - lo) / s <= n) ?? step * 10;
  const out = [];
  for (let v = Math.ceil(lo / nice) * nice; v <= hi + 1e-9; v += nice) out.push(v);
  return out;
}

/** Prepares an empty chart in `svg` and returns scales for the given domains. */
function frame(svg, { xMin, xMax, yMax, log, xLabel, yLabel, fmtX = String, fmtY = fmtMs }) {
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  const yLo = log ? Math.max(yMax / 1e4, 1e-3) : 0;
  const ly = (v) => Math.log10(Math.max(v, yLo));
  const x = (v) => L + ((v - xMin) / Math.max(xMax - xMin, 1e-9)) * (W - L - R);
  const y = log
    ? (v) => H - B - ((ly(v) - ly(yLo)) / Math.max(ly(yMax) - ly(yLo), 1e-9)) * (H - T - B)
    : (v) => H - B - (v / Math.max(yMax, 1e-9)) * (H - T - B);
  const g = el(svg, 'g', { class: 'axis' });
  el(g, 'line', { x1: L, y1: H - B, x2: W - R, y2: H - B });
  el(g, 'line', { x1: L, y1: T, x2: L, y2: H - B });
  const yt = log ? [yLo, yMax / 100, yMax / 10, yMax].filter((v) => v >= yLo) : ticks(0, yMax);
  for (const v of yt) {
    el(g, 'line', { class: 'grid', x1: L, y1: y(v), x2: W - R, y2: y(v) });
    el(g, 'text', { x: L - 6, y: y(v) + 3, 'text-anchor': 'end' }, fmtY(v));
  }
  for (const v of ticks(xMin, xMax, 8)) el(g, 'text', { x: x(v), y: H - B + 14, 'text-anchor': 'middle' }, fmtX(v));
  el(g, 'text', { x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle', class: 'label' }, xLabel);
  el(g, 'text', { x: 8, y: 14, class: 'label' }, yLabel);
  return { x, y };
}

const path = (pts, x, y) => pts.map(([a, b], i) => `${i ? 'L' : 'M'}${x(a).toFixed(1)},${y(b).toFixed(1)}`).join('');

/**
 * Lines (and optional bands) over x. series: [{name, cls, points: [[x, y]], dots?}],
 * bands: [{cls, lower: [[x, y]], upper: [[x, y]]}].
 */
export function lineChart(svg, { series = [], bands = [], log = false, xLabel = '', yLabel = '', fmtX, fmtY }) {
  const all = [...series.flatMap((s) => s.points), ...bands.flatMap((b) => b.upper)];
  const xs = all.map((p) => p[0]);
  const yMax = Math.max(...all.map((p) => p[1]).filter(Number.isFinite), 1e-9);
  const { x, y } = frame(svg, { xMin: Math.min(...xs), xMax: Math.max(...xs), yMax: yMax * 1.05, log, xLabel, yLabel, fmtX, fmtY });
  for (const b of bands)
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
  for (const s of series) {
    el(svg, 'path', { class: `line ${s.cls}`, d: path(s.points, x, y) });
    if (s.dots) for (const [a, v] of s.points) el(svg, 'circle', { class: `dot ${s.cls}`, cx: x(a), cy: y(v), r: 3 });
  }
  const legend = el(svg, 'g', { class: 'legend' });
  const entries = [...series, ...bands.filter((b) => b.name)];
  const longest = Math.max(0, ...entries.map((s) => s.name.length));
  el(legend, 'rect', { class: 'bg', x: L + 6, y: T, width: 24 + longest * 6.2, height: entries.length * 14 + 6, rx: 4 });
  entries.forEach((s, i) => {
    el(legend, 'rect', { class: `swatch ${s.cls}`, x: L + 10, y: T + 4 + i * 14, width: 10, height: 10 });
    el(legend, 'text', { x: L + 24, y: T + 13 + i * 14 }, s.name);
  });
}

/** A histogram: counts over equal bins of [lo, hi), with an optional expected-count line. */
export function histogram(svg, { counts, lo, hi, expected, xLabel }) {
  const yMax = Math.max(...counts, expected ?? 0) * 1.1;
  const w = (hi - lo) / counts.length || 1;
  const { x, y } = frame(svg, {
    xMin: lo,
    xMax: lo + w * counts.length,
    yMax,
    xLabel,
    yLabel: 'draws per bin',
    fmtX: fmtMs,
    fmtY: (v) => String(Math.round(v)),
  });
  counts.forEach((c, i) => {
    el(svg, 'rect', {
      class: 'bar',
      x: x(lo + i * w) + 0.5,
      y: y(c),
      width: Math.max(x(lo + (i + 1) * w) - x(lo + i * w) - 1, 1),
      height: H - B - y(c),
    });
  });
  if (expected !== undefined)
    el(svg, 'line', { class: 'density', x1: x(lo), x2: x(lo + w * counts.length), y1: y(expected), y2: y(expected) });
}
