// js/retry-after.js against the vectors it shares with the Rust parser
// (core/tests/retry_after_vectors.json, read by
// core/tests/retry_after_vectors.rs), and a fuzz: whatever the string, the
// parser neither throws nor answers NaN or a negative wait.
// Run: node --test tests/fetch/retry-after.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { carried, parseRetryAfter, serverWait, spentWait } from '../../js/retry-after.js';
import { SERVER_WAIT_HEADERS } from '../../js/gen/boundary.js';

const { groups } = JSON.parse(readFileSync(new URL('../../core/tests/retry_after_vectors.json', import.meta.url), 'utf8'));
const expected = (e) => (e === null ? undefined : e === 'Infinity' ? Infinity : e);
const show = (v) => JSON.stringify(v).replace(/[^ -~]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

test('the vector file has its groups and cases', () => {
  const n = groups.reduce((sum, g) => sum + g.cases.length, 0);
  assert.ok(n > 150, `only ${n} vectors`);
  for (const g of groups) {
    assert.equal(typeof g.now, 'number');
    for (const c of g.cases) assert.ok(c.length === 2 && typeof c[0] === 'string', show(c));
  }
});

for (const { note, now, cases } of groups) {
  test(`vectors at ${now}: ${note}`, () => {
    const wrong = [];
    for (const [value, want] of cases) {
      const got = parseRetryAfter(value, now);
      // Object.is: to the bit, as the Rust test (0 and -0 differ).
      if (!Object.is(got, expected(want))) wrong.push(`${show(value)}: got ${got}, want ${expected(want)}`);
    }
    assert.deepEqual(wrong, []);
  });
}

test('a non-ASCII character anywhere in a vector value makes it invalid', () => {
  // The old wasm glue kept the low byte of each UTF-16 unit: '\u0135' read as '5', '\u0130' as '0'.
  const chars = ['\u0080', '\u00a0', '\u00e9', '\u00ff', '\u0130', '\u0135', '\u2028', '\ufeff', '\ud800', '\udc00', '\ud83d\ude00'];
  for (const { now, cases } of groups) {
    for (const [value] of cases) {
      for (let at = 0; at <= value.length; at++) {
        for (const c of chars) {
          const v = value.slice(0, at) + c + value.slice(at);
          assert.equal(parseRetryAfter(v, now), undefined, show(v));
          const r = value.slice(0, at) + c + value.slice(at + 1);
          if (at < value.length) assert.equal(parseRetryAfter(r, now), undefined, show(r));
        }
      }
    }
  }
});

test('absent values, non-strings and the default clock', () => {
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter(undefined), undefined);
  assert.equal(parseRetryAfter('null'), undefined);
  assert.equal(parseRetryAfter(5), 5000);
  assert.equal(parseRetryAfter(['7']), 7000);
  assert.equal(parseRetryAfter({ toString: () => ' 3 ' }), 3000);
  assert.equal(parseRetryAfter(1.5), undefined);
  assert.equal(parseRetryAfter(-3), undefined);
  assert.equal(parseRetryAfter(Symbol('5')), undefined);
  const soon = new Date(Math.ceil(Date.now() / 1000) * 1000 + 60_000).toUTCString();
  const wait = parseRetryAfter(soon);
  assert.ok(wait !== undefined && wait > 55_000 && wait <= 61_000, `${soon}: ${wait}`);
  assert.equal(parseRetryAfter(new Date(Date.now() - 60_000).toUTCString()), undefined);
});

test('long values take linear time', () => {
  const started = performance.now();
  const values = [
    `1${' '.repeat(1e6)}2`,
    `${' \t'.repeat(5e5)}x`,
    `Sun${', '.repeat(5e5)}x`,
    `5${'0'.repeat(1e6)}`,
    `Sun 06 ${'1 '.repeat(5e5)}`,
  ];
  for (const v of values) {
    const got = parseRetryAfter(v, 0);
    assert.ok(got === undefined || got === Infinity, show(v.slice(0, 20)));
  }
  assert.ok(performance.now() - started < 5000, `${performance.now() - started} ms`);
});

test('fuzz: 20 000 random strings never throw, and never give NaN or a negative wait', () => {
  // mulberry32, seeded: a failure is reproducible.
  let seed = 0x5eed;
  const rnd = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(rnd() * n);
  const pieces = [' ', '\t', ',', ':', '-', 'GMT', 'Sun', 'Sunday', 'Nov', 'Feb', '06', '29', '94', '1994', '08', '60', '\n'];
  pieces.push('\u00a0', '\u0135');
  const nows = [0, -1, 784111772000, 1795305600000, Date.now(), -62167219200001, 8.64e15, -8.64e15, NaN];
  for (let k = 0; k < 20_000; k++) {
    let v = '';
    const len = int(41);
    while (v.length < len) {
      const r = rnd();
      if (r < 0.4)
        v += String.fromCharCode(32 + int(95)); // printable ASCII
      else if (r < 0.55)
        v += String.fromCharCode(int(128)); // any ASCII
      else if (r < 0.75)
        v += String.fromCharCode(int(0x10000)); // any UTF-16 unit, lone surrogates included
      else if (r < 0.8) v += String.fromCodePoint(0x10000 + int(0x100000));
      else v += pieces[int(pieces.length)];
    }
    v = v.slice(0, len);
    const now = nows[int(nows.length)];
    let got;
    assert.doesNotThrow(() => {
      got = parseRetryAfter(v, now);
    }, show(v));
    assert.ok(got === undefined || (typeof got === 'number' && got >= 0 && !Number.isNaN(got)), `${show(v)} at ${now}: ${got}`);
    if (/[^\0-\x7f]/.test(v)) assert.equal(got, undefined, show(v));
  }
});

test('serverWait: the header vectors shared with the Rust server_wait (core/tests/server_wait_vectors.json)', () => {
  const sw = JSON.parse(readFileSync(new URL('../../core/tests/server_wait_vectors.json', import.meta.url), 'utf8'));
  assert.ok(sw.cases.length >= 40);
  const wrong = [];
  for (const [headers, want, note] of sw.cases) {
    const got = serverWait(new Headers(headers), sw.now);
    if (!Object.is(got, expected(want))) wrong.push(`${note}: got ${got}, want ${expected(want)}`);
  }
  assert.deepEqual(wrong, []);
  // Any object with get() will do; names are asked in lowercase, each once, in
  // the core's order (SERVER_WAIT_HEADERS of core/src/retry_after.rs, rendered).
  const asked = [];
  serverWait({ get: (n) => (asked.push(n), null) }, sw.now);
  assert.deepEqual(asked, SERVER_WAIT_HEADERS);
  assert.ok(asked.length >= 8 && asked.every((n) => n === n.toLowerCase()), String(asked));
  // The milliseconds before Retry-After, as the OpenAI and Anthropic SDKs read them (issue 34).
  assert.ok(asked.indexOf('retry-after-ms') < asked.indexOf('retry-after'), String(asked));
});

test('spentWait: a success saying no request remains names the wait until its reset (core/tests/server_wait_vectors.json "spent", shared with the Rust spent_wait)', () => {
  const sw = JSON.parse(readFileSync(new URL('../../core/tests/server_wait_vectors.json', import.meta.url), 'utf8'));
  assert.ok(sw.spent.length >= 12);
  for (const [headers, want, note] of sw.spent) assert.equal(spentWait(new Headers(headers), sw.now), expected(want), note);
});

test('carried: the wait a thrown error carries (retryAfterMs, headers, response.headers; Headers or a plain record)', () => {
  const now = Date.now();
  assert.deepEqual(carried(Object.assign(new Error('x'), { retryAfterMs: 250 }))[0], 250);
  assert.equal(carried(Object.assign(new Error('x'), { retryAfterMs: -1 }))[0], undefined, 'a negative retryAfterMs is none');
  assert.equal(carried({ headers: new Headers({ 'retry-after': '3' }) })[0], 3000);
  assert.equal(carried({ response: { headers: new Headers({ 'retry-after-ms': '40' }) } })[0], 40);
  // The OpenAI/Anthropic SDK v4 shape: a plain record, names in any case.
  const [ms, h] = carried({ status: 429, headers: { 'Retry-After': '2', 'X-Should-Retry': 'true' } });
  assert.equal(ms, 2000);
  assert.equal(h?.get('x-should-retry'), 'true');
  assert.ok(carried({ headers: { 'x-ratelimit-reset': String(Math.ceil(now / 1000) + 30) } })[0] > 28000);
  assert.equal(carried({ headers: { 'retry-after-ms': 40, 'x-other': null } })[0], 40, 'values that are numbers');
  for (const e of [undefined, null, 'x', 42, new Error('plain'), { headers: 'retry-after: 3' }])
    assert.equal(carried(e)[0], undefined, String(e));
});
