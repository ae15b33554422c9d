// backoffStats: what the delay before a given retry looks like — min, max,
// median, 90th percentile, mean. Exact (from the Rust core's closed forms)
// where the law has one; otherwise from 100 000 seeded draws.
import { Backoff, rawBackoff, integer, memory } from './backoff.js';

export function backoffStats(options, attempt) {
  const n = integer(attempt, 'attempt', 1, 4294967295);
  // Statistics describe the law, not one stream: a fixed seed when none is given.
  const raw = rawBackoff(options, NaN, () => 1);
  try {
    const [exact, min, max, p50, p90, mean] = new Float64Array(memory.buffer, raw.stats(n), 6);
    if (exact) return { exact: true, min, max, p50, p90, mean };
  } finally {
    raw.free();
  }
  const xs = Backoff.sample({ ...options, seed: options?.seed ?? 1 }, n, 100000).sort();
  const at = (q) => xs[Math.min(xs.length - 1, Math.floor(q * xs.length))];
  return { exact: false, min: xs[0], max: xs[xs.length - 1], p50: at(0.5), p90: at(0.9), mean: xs.reduce((a, b) => a + b, 0) / xs.length };
}
