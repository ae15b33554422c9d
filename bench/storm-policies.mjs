// Our policies in the retry-storm table (bench/storm.mjs), in table order.
// Add a row by adding an entry; every worker thread imports this module.
//
// An entry is { name, options } — `Backoff` options (null = retry at once) —
// or { name, make } for a policy that is not a set of Backoff options:
// `make({ seed, client })` returns, per client, `(attempt) => ms`, the wait
// after the attempt-th failure (1 = first); it may keep state (failures seen
// so far, …). Optional: `group` (a label shown in the table), and
// `maxAttempts` (total tries including the first) when the policy gives up
// in real use but the entry does not say so through its options: the table
// counts the clients that would have given up (the model's clients never
// do; Backoff options' own maxAttempts/maxElapsedMs are lifted for the run
// and counted the same way).
import { BROOKER, mulberry32 } from '../www/storm.js';
// The presets, in the core's order (core/src/preset.rs; rendered by the build).
import { PRESETS } from '../js/gen/boundary.js';

export const OUR_POLICIES = [
  // Brooker's post, as in the demo (www/storm.js): base 5 ms, cap 2 s.
  ...Object.entries(BROOKER).map(([name, options]) => ({ name, options, group: 'Brooker (www/storm.js)' })),
  // What a caller gets without options: Backoff's defaults, with
  // fetchWithBackoff's attempt limit for the give-up count.
  { name: 'defaults `{}`', options: {}, group: 'our defaults', maxAttempts: 5 },
  // The presets exactly as shipped (their bases are 100 ms to 1 s: that is the point).
  ...PRESETS.map((preset) => ({ name: `preset '${preset}'`, options: { preset }, group: 'presets' })),
  // "A better default" (issue 6; bench/storm-search.mjs): the best points found.
  // A client in the model knows only how many times it failed, so every policy
  // it can run is a window per failure plus a draw shape; none found is no
  // worse than full jitter at N = 10 in time while making <= 0.8x its calls at
  // N = 100. These are the Pareto points, not a new default.
  {
    name: 'full jitter re-tuned: base 60 ms, ×1.8, cap 1.5 s',
    options: { strategy: 'exponential', baseMs: 60, factor: 1.8, maxDelayMs: 1500, jitter: 'full' },
    group: 'better-default search',
  },
  {
    name: 'best free schedule (12 windows + draw shapes)',
    group: 'better-default search',
    make: ({ seed, client }) => {
      const windows = [80, 132, 172, 295, 759, 1202, 1455, 1625, 2295, 2701, 1708, 839];
      const shapes = [0.93, 0.98, 1, 0.8, 1.26, 0.96, 0.88, 0.61, 1.48, 0.8, 1.08, 1];
      const rand = mulberry32(seed * 1000 + client);
      return (attempt) => {
        const i = Math.min(attempt, windows.length) - 1;
        return windows[i] * rand() ** shapes[i];
      };
    },
  },
];
