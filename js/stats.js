// @ts-check
// backoffStats: what the delay before a given retry looks like — min, max,
// median, 90th percentile, mean. Exact (from the Rust core's closed forms)
// where the law has one; otherwise from 100 000 seeded draws.
import { own, must, required, int } from './options.js';
import { w, mem, write, check, OUT } from './wasm.js';
import { Backoff } from './backoff.js';
import { MAX_RETRY, SCHEDULE, STAT_EXACT, STAT_MAX, STAT_MEAN, STAT_MIN, STAT_P50, STAT_P90 } from './gen/boundary.js';

/**
 * @param {import('../types/stats/index.js').BackoffOptions | undefined} options
 * @param {number} attempt
 * @returns {import('../types/stats/index.js').DelayStats}
 */
export function backoffStats(options, attempt) {
  const n = must(attempt, 'attempt', required(int(1, MAX_RETRY)));
  const o = own(options);
  // Statistics describe the law, not one stream: a fixed seed when none is given.
  write(o, SCHEDULE, () => 1);
  w.backoff_free(check(w.backoff_new())); // the options' errors (the record stays as written)
  w.stats(n);
  const m = mem();
  const at = (/** @type {number} */ k) => m[OUT + k];
  if (at(STAT_EXACT))
    return { exact: true, min: at(STAT_MIN), max: at(STAT_MAX), p50: at(STAT_P50), p90: at(STAT_P90), mean: at(STAT_MEAN) };
  const xs = Backoff.sample({ ...o, seed: o.seed ?? 1 }, n, 100000).sort();
  const q = (/** @type {number} */ p) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
  return { exact: false, min: xs[0], max: xs[xs.length - 1], p50: q(0.5), p90: q(0.9), mean: xs.reduce((a, b) => a + b, 0) / xs.length };
}
