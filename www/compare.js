// What the page computes from the library's numbers without a DOM: shared
// by the page and its test (tests/demo/demo.test.mjs computes the same in
// Node and compares).

/** The storm curves: clients per point, seeded runs per point (storm.js's `storm`). */
export const STORM_SIZES = [1, 5, 10, 20, 30, 50, 75, 100];
export const STORM_RUNS = 10;
/** The histograms: draws per policy (`Backoff.sample`) and bins. */
export const DRAWS = 100_000;
export const BINS = 50;

/** How many of `draws` fall in each of `bins` equal bins of [lo, hi) (the top edge in the last). */
export function binCounts(draws, lo, hi, bins = BINS) {
  const counts = new Array(bins).fill(0);
  for (const d of draws) counts[Math.min(bins - 1, Math.max(0, Math.floor(((d - lo) / (hi - lo)) * bins)))]++;
  return counts;
}

/** Whether `backoffStats` describe a law uniform on [min, max) (full, equal and ratio jitter): then its exact density is drawn. */
export const isUniform = (st) =>
  st.exact &&
  st.max > st.min &&
  Math.abs(st.p50 - (st.min + st.max) / 2) < 1e-9 * st.max &&
  Math.abs(st.p90 - (st.min + 0.9 * (st.max - st.min))) < 1e-9 * st.max;

/**
 * The storm's one-line verdict from the points of A and B at the largest N:
 * "B makes 0.62× the calls of A and finishes 1.3× later at N = 100."
 */
export function verdict(a, b) {
  const x = (r) => `${+r.toPrecision(2)}×`;
  const t = b.timeMs / a.timeMs;
  const gave = [a, b].map((p, i) => (p.gaveUp ? `; ${+p.gaveUp.toPrecision(3)} of ${p.n} clients of ${'AB'[i]} give up` : '')).join('');
  return `B makes ${x(b.calls / a.calls)} the calls of A and finishes ${t >= 1 ? `${x(t)} later` : `in ${x(t)} the time`} at N = ${a.n}${gave}.`;
}

/**
 * Whether `backoffStats` samples the law of these options (100 000 seeded
 * draws per retry: decorrelated, or slotted with extra jitter) rather than
 * computing it: the page then asks a worker for them. (A wrong guess only
 * moves the work: both ways give the library's numbers.)
 */
export function sampled(o) {
  const strategy = o.strategy ?? { decorrelated: 'decorrelated', ethernet: 'slotted', akka: 'slotted' }[o.preset];
  return strategy === 'decorrelated' || (strategy === 'slotted' && o.jitter !== undefined);
}
