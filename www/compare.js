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

/**
 * The histograms of the delay before retry `attempt` of policies [{name, o}] (library options): each
 * law's DRAWS seeded draws (`Backoff.sample`) on the same BINS bins of [lo, hi), its range that of
 * `backoffStats` (or, for a sampled law, of these draws: its statistics would draw 100 000 more).
 * `values`: what the page's section shows (its data-values); `sets`: what `histogram` draws.
 * `laws` keeps each law's draws between calls (a policy unchanged is not drawn again).
 * @param {{ Backoff: any, backoffStats: any }} lib the package (wasm-backoff/stats)
 * @param {{ name: string, o: object }[]} pols
 * @param {number} attempt
 * @param {Map<string, any>} [laws]
 */
export function histograms({ Backoff, backoffStats }, pols, attempt, laws = new Map()) {
  const lawOf = (o) => {
    const key = JSON.stringify([o, attempt]);
    let law = laws.get(key);
    if (!law) {
      const draws = Backoff.sample(o, attempt, DRAWS);
      let st;
      if (sampled(o)) {
        let min = Infinity,
          max = -Infinity;
        for (const d of draws) {
          if (d < min) min = d;
          if (d > max) max = d;
        }
        st = { exact: false, min, max };
      } else st = backoffStats(o, attempt);
      law = { draws, st, counts: new Map() };
      if (laws.size >= 6) laws.delete(laws.keys().next().value); // (800 KB of draws each)
      laws.set(key, law);
    }
    return law;
  };
  const both = pols.map((p) => ({ name: p.name, ...lawOf(p.o) }));
  const lo = Math.min(...both.map((l) => l.st.min));
  let hi = Math.max(...both.map((l) => l.st.max));
  if (hi <= lo) hi = lo + 1;
  /** @type {Record<string, any>} */
  const values = { attempt, lo, hi };
  const range = `${lo} ${hi}`;
  const sets = both.map(({ name, st, draws, counts: kept }) => {
    if (!kept.has(range)) kept.clear(), kept.set(range, binCounts(draws, lo, hi, BINS));
    const counts = kept.get(range);
    const uniform = isUniform(st);
    values[name] = { counts, uniform };
    const expected = uniform ? (DRAWS * (hi - lo)) / BINS / (st.max - st.min) : undefined;
    const spike = st.max === st.min ? st.min : undefined;
    return { name, counts, expected, from: st.min, to: st.max, spike };
  });
  return { values, sets, lo, hi };
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
