// Checks of the public Backoff API that run unchanged in every runtime:
// Node (node --test), a Chromium page (imported by tests/browser/main.js)
// and workerd (imported by tests/workerd/worker.mjs). Each returns a list of
// failures (empty = pass) so that the runtime-specific test only asserts
// emptiness and prints what differed.

/** Every golden case: `new Backoff(options)` must hand out exactly `delays` (null = undefined). */
export function goldenFailures(Backoff, golden) {
  const failures = [];
  for (const { name, options, delays } of golden.cases) {
    const b = new Backoff(options);
    for (let i = 0; i < delays.length; i++) {
      const got = b.next() ?? null;
      if (!Object.is(got, delays[i])) {
        failures.push(`${name}[${i}]: got ${got}, want ${delays[i]}`);
        break;
      }
    }
  }
  if (golden.cases.length < 17) failures.push(`only ${golden.cases.length} golden cases`);
  return failures;
}

// The lists these name are the core's (src/schema.rs PRESETS, STRATEGIES): a
// pattern here, the exact text in tests/package/lists.test.mjs (Node, from the
// generated lists), so that a new preset or strategy changes no test file.
const oneOf = (key) => new RegExp(`^${key} must be one of '[a-z-]+'(?:, '[a-z-]+')+$`);
const PRESET_MSG = oneOf('preset');
const JITTER_MSG = "jitter must be 'none', 'full', 'equal', { ratio } or { addMaxMs }";

/** [options, error class name, exact message (or the pattern it matches)]. */
export const BAD_OPTIONS = [
  ['x', 'TypeError', 'options must be an object'],
  [42, 'TypeError', 'options must be an object'],
  [{ preset: 'nope' }, 'RangeError', PRESET_MSG],
  [{ preset: 3 }, 'TypeError', PRESET_MSG],
  [{ strategy: 'exp' }, 'RangeError', oneOf('strategy')],
  [{ baseMs: -1 }, 'RangeError', 'baseMs must be a finite number >= 0'],
  [{ baseMs: '100' }, 'TypeError', 'baseMs must be a finite number >= 0'],
  [{ baseMs: NaN }, 'RangeError', 'baseMs must be a finite number >= 0'],
  [{ baseMs: Infinity }, 'RangeError', 'baseMs must be a finite number >= 0'],
  [{ baseMs: null }, 'TypeError', 'baseMs must be a finite number >= 0'],
  [{ factor: 0.5 }, 'RangeError', 'factor must be a finite number >= 1'],
  [{ maxDelayMs: -1 }, 'RangeError', 'maxDelayMs must be a number >= 0'],
  [{ jitter: 'fuller' }, 'RangeError', JITTER_MSG],
  [{ jitter: {} }, 'TypeError', JITTER_MSG],
  [{ jitter: 0.5 }, 'TypeError', JITTER_MSG],
  [{ jitter: { ratio: 2 } }, 'RangeError', 'jitter.ratio must be a number in [0, 1]'],
  [{ jitter: { ratio: '0.1' } }, 'TypeError', 'jitter.ratio must be a number in [0, 1]'],
  [{ jitter: { ratio: 0.1, addMaxMs: 5 } }, 'TypeError', JITTER_MSG],
  [{ jitter: { addMaxMs: -1 } }, 'RangeError', 'jitter.addMaxMs must be a finite number >= 0'],
  [{ maxAttempts: 0 }, 'RangeError', 'maxAttempts must be an integer >= 1'],
  [{ maxAttempts: 1.5 }, 'RangeError', 'maxAttempts must be an integer >= 1'],
  [{ maxAttempts: -Infinity }, 'RangeError', 'maxAttempts must be an integer >= 1'],
  [{ maxElapsedMs: -5 }, 'RangeError', 'maxElapsedMs must be a number >= 0'],
  [{ ceiling: 0 }, 'RangeError', 'ceiling must be an integer in [1, 1023]'],
  [{ ceiling: 2000 }, 'RangeError', 'ceiling must be an integer in [1, 1023]'],
  [{ atCeiling: 'up' }, 'RangeError', "atCeiling must be one of 'stay', 'reset'"],
  [{ slotMode: 1 }, 'TypeError', "slotMode must be one of 'binary', 'exponent'"],
  [{ seed: 1.5 }, 'RangeError', 'seed must be a safe integer'],
  [{ seed: 2 ** 53 }, 'RangeError', 'seed must be a safe integer'],
  [{ seed: '1' }, 'TypeError', 'seed must be a safe integer'],
  [{ seed: 1n }, 'TypeError', 'seed must be a safe integer'],
  [{ preset: 'hadoop', maxAttempts: 64 }, 'RangeError', "maxAttempts must be an integer in [1, 63] with preset 'hadoop'"],
  [{ preset: 'hadoop', maxAttempts: Infinity }, 'RangeError', "maxAttempts must be an integer in [1, 63] with preset 'hadoop'"],
];

function expectThrow(fn, cls, msg, what, failures) {
  try {
    fn();
    failures.push(`${what}: did not throw`);
  } catch (e) {
    const ok = msg instanceof RegExp ? msg.test(e?.message) : e?.message === msg;
    if (e?.constructor?.name !== cls || !ok) failures.push(`${what}: got ${e?.constructor?.name}: ${e?.message}`);
  }
}

/** Bad input: the right error class and message, never a panic, and the module keeps working. */
export function validationFailures(Backoff) {
  const failures = [];
  for (const [options, cls, msg] of BAD_OPTIONS) {
    const what = JSON.stringify(options, (_k, v) =>
      typeof v === 'bigint' ? `${v}n` : v === undefined ? 'undefined' : Number.isNaN(v) ? 'NaN' : v === Infinity ? 'Infinity' : v,
    );
    expectThrow(() => new Backoff(options), cls, msg, `new Backoff(${what})`, failures);
    expectThrow(() => Backoff.sample(options, 1, 1), cls, msg, `Backoff.sample(${what})`, failures);
  }
  const A = 'attempt must be an integer in [1, 4294967295]';
  const C = 'count must be an integer in [0, 16777216]';
  expectThrow(() => Backoff.sample({}, 0, 1), 'RangeError', A, 'sample attempt 0', failures);
  expectThrow(() => Backoff.sample({}, 1.5, 1), 'RangeError', A, 'sample attempt 1.5', failures);
  expectThrow(() => Backoff.sample({}, 2 ** 32, 1), 'RangeError', A, 'sample attempt 2^32', failures);
  expectThrow(() => Backoff.sample({}, '1', 1), 'TypeError', A, "sample attempt '1'", failures);
  expectThrow(() => Backoff.sample({}, 1, -1), 'RangeError', C, 'sample count -1', failures);
  expectThrow(() => Backoff.sample({}, 1, 2 ** 24 + 1), 'RangeError', C, 'sample count 2^24+1', failures);
  expectThrow(() => Backoff.sample({}, 1), 'TypeError', C, 'sample count missing', failures);
  // A throwing getter propagates as itself.
  try {
    new Backoff({
      get baseMs() {
        throw new Error('boom');
      },
    });
    failures.push('throwing getter: did not throw');
  } catch (e) {
    if (e.message !== 'boom') failures.push(`throwing getter: got ${e.message}`);
  }
  // …and after all that the module works normally.
  const b = new Backoff({ preset: 'flume', seed: 1 });
  const got = [b.next(), b.next(), b.next()];
  if (got.join() !== '250,500,1000') failures.push(`after errors: ${got}`);
  // undefined / null / {} all mean "defaults".
  for (const o of [undefined, null, {}, { baseMs: undefined }]) {
    const d = new Backoff(o).next();
    if (!(d >= 0 && d < 100)) failures.push(`defaults with ${o}: first delay ${d}`);
  }
  return failures;
}

/** The contract's semantics: attempts, reset, counters, sampling. */
export function semanticsFailures(Backoff) {
  const failures = [];
  const check = (cond, what) => cond || failures.push(what);

  const b = new Backoff({ maxAttempts: 3, seed: 1 });
  const seq = [b.next(), b.next(), b.next(), b.next()];
  check(seq[0] >= 0 && seq[0] < 100 && seq[1] >= 0 && seq[1] < 200, `first two delays ${seq}`);
  check(seq[2] === undefined && seq[3] === undefined, `gives up after maxAttempts 3: ${seq}`);
  check(b.attempt === 2 && b.totalRetries === 2, `attempt ${b.attempt}, totalRetries ${b.totalRetries}`);
  b.reset();
  check(b.attempt === 0 && b.resets === 1 && b.elapsedMs === 0, `after reset: ${b.attempt} ${b.resets} ${b.elapsedMs}`);
  check(typeof b.next() === 'number', 'works after reset');

  const x = new Backoff({ strategy: 'constant', jitter: 'none', baseMs: 40, maxElapsedMs: 100 });
  check([x.next(), x.next(), x.next()].join() === '40,40,', 'maxElapsedMs stops before the sum passes it');
  check(x.elapsedMs === 80, `elapsedMs ${x.elapsedMs}`);

  // Explicit options override a preset.
  const g = new Backoff({ preset: 'gcs', maxAttempts: 4, seed: 3 });
  let n = 0;
  while (g.next() !== undefined) n++;
  check(n === 3, `gcs with maxAttempts 4 gave ${n} retries`);

  // Unseeded schedules are seeded from crypto, so they differ.
  const u1 = Backoff.sample({}, 10, 8);
  const u2 = Backoff.sample({}, 10, 8);
  check(
    u1.some((v, i) => v !== u2[i]),
    'two unseeded samples are identical',
  );

  // sample: seeded, bounded, chunk boundaries invisible (prefix property).
  const s = Backoff.sample({ seed: 5 }, 3, 10000);
  check(s instanceof Float64Array && s.length === 10000, 'sample returns a Float64Array of count');
  check(
    s.every((d) => d >= 0 && d < 400),
    'full jitter at retry 3 lies in [0, 400)',
  );
  const prefix = Backoff.sample({ seed: 5 }, 3, 5000);
  check(
    prefix.every((v, i) => v === s[i]),
    'sample(5000) is a prefix of sample(10000) with the same seed',
  );
  check(Backoff.sample({ seed: 5 }, 3, 0).length === 0, 'count 0');
  const eth = Backoff.sample({ preset: 'ethernet', seed: 2 }, 12, 2000);
  check(
    eth.every((d) => Math.abs(d / 0.0512 - Math.round(d / 0.0512)) < 1e-9 && d / 0.0512 < 1024),
    'ethernet: whole slots below 1024',
  );
  const huge = Backoff.sample({ baseMs: 1e300, maxDelayMs: Infinity, jitter: { ratio: 1 } }, 4294967295, 100);
  check(
    huge.every((d) => Number.isFinite(d) && d >= 0 && d <= 2147483647),
    'extreme options stay within the timer range',
  );
  return failures;
}
