// 4. Calculator: nanoseconds per delay, in Node, with nothing else around it.
//
// Every contender computes delays for retries 1..10 in turn (the schedule of a
// typical failure run), exponential with full jitter, base 100 ms, cap 20 s,
// unless the row says otherwise; each is its own function with its own loop
// (no shared megamorphic call site), and sums its delays so nothing is
// optimized away. Method: warm-up, then R rounds; each round times every
// contender once over a fixed number of delays, in an order rotated by one per
// round. Reported: median ns per delay over rounds, and the median over rounds
// of (contender ÷ JS one-liner in the same round).
//
//   node bench/calc.mjs [rounds]     prints the table (bench/run.mjs spawns this)
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { median, fmt, version } from './peers.mjs';

export const CALC_REFERENCE = 'JS one-liner';

const BASE = 100,
  CAP = 20000;

export async function contenders() {
  const require = createRequire(import.meta.url);
  const { Backoff } = await import('wasm-backoff/backoff');
  const { ExponentialBackoff, fullJitterGenerator } = await import('cockatiel');
  const { StandardRetryStrategy } = await import('@smithy/util-retry');
  const { DelayFactory } = require('exponential-backoff/dist/delay/delay.factory');
  const { getSanitizedOptions } = require('exponential-backoff/dist/options');

  const OPTS = { baseMs: BASE, maxDelayMs: CAP, jitter: 'full', seed: 1 };
  const ebOpts = getSanitizedOptions({ startingDelay: BASE, maxDelay: CAP, jitter: 'full', numOfAttempts: Infinity });
  const smithy = new StandardRetryStrategy().retryBackoffStrategy;
  smithy.setDelayBase(BASE);
  const cockatielDefault = new ExponentialBackoff();
  const cockatielFull = new ExponentialBackoff({ generator: fullJitterGenerator, initialDelay: BASE, maxDelay: CAP });

  return [
    {
      name: CALC_REFERENCE,
      what: '`Math.random() * Math.min(cap, base * 2 ** n)`',
      n: 200_000,
      run(count) {
        let s = 0;
        for (let i = 0; i < count; i++) {
          const n = (i % 10) + 1;
          s += Math.random() * Math.min(CAP, BASE * 2 ** n);
        }
        return s;
      },
    },
    {
      name: 'JS one-liner, shift form',
      what: '`Math.random() * Math.min(cap, base * (1 << n))` (n < 31)',
      n: 1_000_000,
      run(count) {
        let s = 0;
        for (let i = 0; i < count; i++) {
          const n = (i % 10) + 1;
          s += Math.random() * Math.min(CAP, BASE * (1 << n));
        }
        return s;
      },
    },
    {
      name: 'wasm-backoff `next()`',
      what: '`b.next()`, `b.reset()` after every 10th',
      ours: true,
      n: 200_000,
      run(count) {
        const b = new Backoff(OPTS);
        let s = 0;
        for (let i = 0; i < count; i++) {
          s += b.next();
          if (i % 10 === 9) b.reset();
        }
        return s;
      },
    },
    ...[4096, 65536, 1 << 20].map((batch) => ({
      name: `wasm-backoff \`Backoff.sample\`, ${batch.toLocaleString('en')}/call`,
      what: `\`Backoff.sample(opts, n, ${batch})\`, n = 1..10 per call`,
      ours: true,
      sample: true,
      n: Math.max(batch, 1 << 19),
      run(count) {
        let s = 0;
        for (let done = 0, n = 1; done < count; done += batch, n = (n % 10) + 1) {
          const d = Backoff.sample(OPTS, n, batch);
          s += d[0] + d[d.length - 1];
        }
        return s;
      },
    })),
    {
      name: `exponential-backoff ${version('exponential-backoff')}`,
      what: "`DelayFactory(options, n).jitteredDelay`, jitter 'full'",
      n: 100_000,
      run(count) {
        let s = 0;
        for (let i = 0; i < count; i++) s += DelayFactory(ebOpts, (i % 10) + 1).jitteredDelay;
        return s;
      },
    },
    {
      name: `cockatiel ${version('cockatiel')} default`,
      what: '`new ExponentialBackoff()` (decorrelated jitter v2, 128 ms, cap 30 s): `b = b.next(); b.duration`',
      n: 100_000,
      run(count) {
        let s = 0,
          b;
        for (let i = 0; i < count; i++) {
          b = i % 10 === 0 ? cockatielDefault.next() : b.next();
          s += b.duration;
        }
        return s;
      },
    },
    {
      name: `cockatiel ${version('cockatiel')} full jitter`,
      what: '`ExponentialBackoff({ generator: fullJitterGenerator })`',
      n: 100_000,
      run(count) {
        let s = 0,
          b;
        for (let i = 0; i < count; i++) {
          b = i % 10 === 0 ? cockatielFull.next() : b.next();
          s += b.duration;
        }
        return s;
      },
    },
    {
      name: `@smithy/util-retry ${version('@smithy/util-retry')}`,
      what: '`computeNextBackoffDelay(n − 1)` of the standard strategy (full jitter, floored)',
      n: 200_000,
      run(count) {
        let s = 0;
        for (let i = 0; i < count; i++) s += smithy.computeNextBackoffDelay(i % 10);
        return s;
      },
    },
  ];
}

export async function calcSection({ rounds = 41, log = () => {} } = {}) {
  const cs = await contenders();
  const time = (c) => {
    const t0 = process.hrtime.bigint();
    const s = c.run(c.n);
    const ns = Number(process.hrtime.bigint() - t0) / c.n;
    if (!Number.isFinite(s)) throw new Error(`${c.name}: non-finite sum`);
    return ns;
  };
  for (const c of cs) for (let w = 0; w < 3; w++) time(c);
  const ns = new Map(cs.map((c) => [c.name, []]));
  const ratio = new Map(cs.map((c) => [c.name, []]));
  for (let r = 0; r < rounds; r++) {
    const round = new Map();
    for (let i = 0; i < cs.length; i++) {
      const c = cs[(i + r) % cs.length];
      round.set(c.name, time(c));
    }
    for (const [name, v] of round) {
      ns.get(name).push(v);
      ratio.get(name).push(v / round.get(CALC_REFERENCE));
    }
    log(`[calc] round ${r + 1}/${rounds}`);
  }
  const sampleRows = cs.filter((c) => c.sample).map((c) => [c.name, median(ratio.get(c.name))]);
  const best = sampleRows.reduce((a, b) => (b[1] < a[1] ? b : a));
  const speedup = 1 / best[1];
  // The same comparison against the shift form, per round.
  const vsShift = median(ns.get(best[0]).map((v, r) => ns.get('JS one-liner, shift form')[r] / v));
  const lines = [
    '| contender | what is timed | median ns/delay | ratio to JS one-liner (time) | min–max ratio |',
    '|---|---|---:|---:|---:|',
    ...cs.map((c) => {
      const rs = ratio.get(c.name);
      return `| ${c.ours ? `**${c.name}**` : c.name} | ${c.what} | ${fmt(median(ns.get(c.name)))} | ${fmt(median(rs))} | ${fmt(Math.min(...rs))}–${fmt(Math.max(...rs))} |`;
    }),
    '',
    `${rounds} rounds, each contender timed once per round over 0.1–1 M delays (a few ms: many short rounds, so that preemption on a shared machine hits few samples and the median stays put), order rotated per round; ratio < 1 = faster than the one-liner. \`Backoff.sample\`'s per-draw time includes building the schedule from the options, allocating the Float64Array and copying out of wasm memory (4,096 draws per wasm call). p-retry's delay function (\`calculateDelay\`) and ky's default delay are not exported, so they cannot be timed here; fetch-retry's default is a constant.`,
    '',
    `**Target (issue 6): \`Backoff.sample\` at least 2× faster per draw than the JS one-liner — ${speedup >= 2 ? 'holds' : 'NOT met'}:** the best batch size (${best[0].replace(/.*sample`, /, '')}) is ${fmt(speedup)}× the one-liner's speed (${fmt(best[1])}× its time per draw)${speedup >= 2 ? '' : `; it would need to be ${fmt(2 / speedup)}× faster again`}. Most of the one-liner's time is V8's \`2 ** n\` (a call to pow for a variable exponent: the one-liner minus its shift form is ${fmt(median(ns.get(CALC_REFERENCE)) - median(ns.get('JS one-liner, shift form')), 1)} ns here); against the shift form, which skips it, \`Backoff.sample\` runs at ${fmt(vsShift)}× its speed${vsShift >= 2 ? ' (the target holds there too)' : ' (the 2× target would not hold against it)'}.`,
  ];
  return { lines, speedup };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { lines } = await calcSection({ rounds: Number(process.argv[2] ?? 7), log: (m) => console.error(m) });
  console.log(lines.join('\n'));
}
