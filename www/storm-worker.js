// Runs Brooker's retry-storm model (storm.js) off the main thread (module
// worker) for policies A and B:
//   {id, curves: {sizes, runs, policies: {A: options, B: options}}}
//     -> {id, name, points: [{n, calls, timeMs, gaveUp}]} per policy, then {id, done}
//   {id, trace: {clients, run, policies}}
//     -> {id, traces: {A: {t, c, k, calls, timeMs, gaveUp}, …}} (one run, every write; typed arrays)
//   {id, stats: {options, retries}} -> {id, stats: [{n, ...backoffStats(options, n)}]} (sampled laws: slow)
//   {id, hist: {policies: [{name, o}], attempt}} -> {id, hist} (compare.js's histograms: the draws of each law kept)
import { Backoff, backoffStats } from '../pkg/stats/index.js';
import { storm, stormRun } from './storm.js';
import { histograms } from './compare.js';

const laws = new Map();
self.onmessage = ({ data: { id, curves, trace, stats, hist } }) => {
  if (hist) self.postMessage({ id, hist: histograms({ Backoff, backoffStats }, hist.policies, hist.attempt, laws) });
  if (stats)
    self.postMessage({ id, stats: Array.from({ length: stats.retries }, (_, i) => ({ n: i + 1, ...backoffStats(stats.options, i + 1) })) });
  if (curves) {
    for (const [name, options] of Object.entries(curves.policies)) {
      const points = curves.sizes.map((n) => ({ n, ...storm(Backoff, options, n, curves.runs) }));
      self.postMessage({ id, name, points });
    }
    self.postMessage({ id, done: true });
  }
  if (trace) {
    const traces = {};
    const buffers = [];
    for (const [name, options] of Object.entries(trace.policies)) {
      const tr = { t: [], c: [], k: [] };
      const out = stormRun(Backoff, options, trace.clients, trace.run, 1, tr);
      traces[name] = { ...out, t: Float64Array.from(tr.t), c: Uint16Array.from(tr.c), k: Uint8Array.from(tr.k) };
      buffers.push(traces[name].t.buffer, traces[name].c.buffer, traces[name].k.buffer);
    }
    self.postMessage({ id, traces }, buffers);
  }
};
// Tell the page the module (and its wasm) is ready: a message sent before
// this handler existed would be lost.
self.postMessage({ ready: true });
