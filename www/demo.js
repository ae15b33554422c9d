// The minimal demo: one seeded schedule per preset, as a chart and a table.
// It imports the built package exactly as a user would: no init call.
import { Backoff } from '/pkg/index.js';

const PRESETS = {
  gcs: 'Google Cloud Storage: 2^(n−1) s + U[0, 1 s), capped at 32 s',
  aws: 'AWS / full jitter: U[0, min(20 s, 100 ms · 2^n)), 3 attempts',
  decorrelated: 'Brooker decorrelated: min(20 s, U[100 ms, 3 · previous))',
  equal: 'Brooker equal jitter: v/2 + U[0, v/2)',
  grpc: 'gRPC: min(1 s · 1.6^(n−1), 120 s) · U[0.8, 1.2)',
  ethernet: 'CSMA/CD: k · 51.2 µs, k < 2^min(n,10); 16 collisions',
  akka: 'Akka: 10 ms · (2^k − 1), k ≤ slot, ceiling 10, reset',
  flume: 'Flume: 250 ms doubled up to 4 s, never gives up',
  hadoop: 'Hadoop: 100 ms · 2^n · U[0.5, 1.5), 10 retries',
};

const fmt = (ms) => (ms === undefined ? 'give up' : ms === 0 ? '0 ms' : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 1 ? 4 : 1)} ms`);

function chart(delays) {
  const w = 300, h = 110, pad = 18;
  const shown = delays.filter((d) => d !== undefined);
  const max = Math.max(...shown, 1e-9);
  const x = (i) => pad + (i * (w - 2 * pad)) / Math.max(delays.length - 1, 1);
  const y = (d) => h - pad - (d / max) * (h - 2 * pad);
  const pts = shown.map((d, i) => `${x(i).toFixed(1)},${y(d).toFixed(1)}`);
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `delays up to ${fmt(max)}`);
  const el = (name, attrs) => {
    const e = document.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
    svg.append(e);
    return e;
  };
  el('line', { class: 'axis', x1: pad, y1: h - pad, x2: w - pad, y2: h - pad });
  el('polyline', { class: 'line', points: pts.join(' ') });
  shown.forEach((d, i) => el('circle', { cx: x(i), cy: y(d), r: 2.5 }));
  el('text', { x: 2, y: 10 }).textContent = fmt(max);
  el('text', { x: w - pad - 30, y: h - 4 }).textContent = `retry ${delays.length}`;
  return svg;
}

function render() {
  const seed = Number(document.getElementById('seed').value) || 0;
  const steps = Math.min(40, Math.max(1, Number(document.getElementById('steps').value) || 12));
  const main = document.getElementById('presets');
  main.replaceChildren();
  for (const [preset, rule] of Object.entries(PRESETS)) {
    const b = new Backoff({ preset, seed });
    const delays = Array.from({ length: steps }, () => b.next());
    const section = document.createElement('section');
    section.dataset.preset = preset;
    section.dataset.delays = JSON.stringify(delays.map((d) => d ?? null));
    const h2 = document.createElement('h2');
    h2.textContent = preset;
    const p = document.createElement('p');
    p.textContent = rule;
    const table = document.createElement('table');
    table.innerHTML = '<thead><tr><th>retry</th><th>delay</th></tr></thead>';
    const body = table.createTBody();
    delays.forEach((d, i) => {
      const row = body.insertRow();
      row.insertCell().textContent = String(i + 1);
      const cell = row.insertCell();
      cell.textContent = fmt(d);
      if (d === undefined) cell.className = 'gaveup';
    });
    section.append(h2, p, chart(delays), table);
    main.append(section);
  }
  document.body.dataset.ready = '1';
}

for (const id of ['seed', 'steps']) document.getElementById(id).addEventListener('input', render);
render();
