// The retry policy (js/policy.js) on its own: a table of what happened and
// what the driver must do. Pure functions: no server, no timers.
// Run: node --test tests/fetch/policy.test.mjs
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import {
  METHODS,
  RETRY_ON,
  GAVE_UP,
  advice,
  choose,
  honoured,
  isNetworkError,
  replayable,
  throttled,
  wantsKey,
  idempotent,
  timing,
  verdict,
} from '../../js/policy.js';
import { END_REASONS } from '../../js/gen/policy.js';

const vectors = JSON.parse(readFileSync(new URL('../../core/tests/policy_vectors.json', import.meta.url), 'utf8'));
/** A number of the vector file ("Infinity" stands for the number); arrays of statuses as Sets. */
const facts = (f) =>
  Object.fromEntries(Object.entries(f).map(([k, v]) => [k, v === 'Infinity' ? Infinity : Array.isArray(v) ? new Set(v) : v]));

test('verdict: what is retried, in order (failure, method, shouldRetry, body): core/tests/policy_vectors.json, shared with the core', () => {
  const base = { failed: false, network: false, retryOn: new Set(RETRY_ON), idempotent: true, replayable: true };
  for (const { facts: f, want } of vectors.verdict) assert.equal(verdict({ ...base, ...facts(f) }), want, JSON.stringify(f));
});

test('timing: exhausted, then a server wait over the cap, then the deadline: the same vectors', () => {
  const t = { delayMs: 100, maxRetryAfterMs: 1000, elapsedMs: 0, maxElapsedMs: Infinity };
  for (const { facts: f, want } of vectors.timing) assert.equal(timing({ ...t, ...facts(f) }), want, JSON.stringify(f));
});

test('delay rules: exhausted, a server wait over the cap (or clamped), the delay hook, the deadline on the wait chosen: the same vectors', () => {
  let rows = 0;
  for (const { facts: f0, want } of vectors.delay) {
    const f = facts(f0);
    const max = f.maxRetryAfterMs ?? 1000;
    const delayMs = f.delayMs ?? 100;
    const hintMs = honoured(f.hintMs, max, !!f.clamp);
    // As the engine asks (js/engine/call.js): not when the answer cannot matter.
    let asked = false;
    const hook = () => ((asked = true), f.choice);
    let got;
    try {
      const d = delayMs < 0 || hintMs > max ? delayMs : choose(delayMs, hook());
      const why = timing({
        delayMs: d,
        hintMs,
        maxRetryAfterMs: max,
        elapsedMs: f.elapsedMs ?? 0,
        maxElapsedMs: f.maxElapsedMs ?? Infinity,
      });
      got = why || { waitMs: d };
    } catch (e) {
      assert.ok(e instanceof TypeError || e instanceof RangeError, String(e));
      assert.match(e.message, /^delay must return/);
      got = 'hook-error';
    }
    assert.deepEqual(got, want, JSON.stringify(f0));
    assert.equal(asked, delayMs >= 0 && !(hintMs > max), JSON.stringify(f0));
    rows++;
  }
  assert.ok(rows >= 15);
  // choose: what the hook may answer, and what it may not.
  assert.equal(choose(100, undefined), 100);
  assert.equal(choose(100, false), GAVE_UP);
  assert.equal(choose(-1, false), -1, 'an exhausted schedule stays exhausted');
  for (const bad of [null, true, '5', {}, 5n]) assert.throws(() => choose(100, bad), TypeError, String(bad));
  for (const bad of [-1, Number.NaN, -Infinity]) assert.throws(() => choose(100, bad), RangeError, String(bad));
});

test('the idempotency rule (a key generated; may be sent again): the same vectors', () => {
  assert.equal(vectors.idempotency.length, 16);
  for (const { request, key, idempotent: want } of vectors.idempotency) {
    assert.equal(wantsKey(request), key, JSON.stringify(request));
    assert.equal(idempotent(request), want, JSON.stringify(request));
  }
});

test('throttled and the x-should-retry advice: the same vectors', () => {
  for (const [status, want] of vectors.throttled) assert.equal(throttled(status ?? undefined), want, String(status));
  for (const [value, want] of vectors.advice) {
    assert.equal(advice(new Headers(value === null ? {} : { 'x-should-retry': value })), want ?? undefined, JSON.stringify(value));
  }
});

test("the reasons onDone is told are the core's (END_REASONS), and the .d.ts DoneReason names each", () => {
  const dts = readFileSync(new URL('../../types/index.d.ts', import.meta.url), 'utf8');
  const union = dts.slice(dts.indexOf('export type DoneReason ='), dts.indexOf('\n\n', dts.indexOf('export type DoneReason =')));
  const named = [...union.matchAll(/\| '([a-z-]+)'/g)].map((m) => m[1]);
  assert.deepEqual(named, END_REASONS, 'types/index.d.ts DoneReason: one line per reason of core/src/policy.rs End, in its order');
});

test('network failures are told from other TypeErrors by their wording in each runtime (core/tests/network_error_vectors.json, shared with the Rust is_network_error)', () => {
  const v = JSON.parse(readFileSync(new URL('../../core/tests/network_error_vectors.json', import.meta.url), 'utf8'));
  for (const m of v.network) {
    assert.ok(isNetworkError(new TypeError(m)), m);
    assert.ok(isNetworkError(new Error(m)), `a plain Error (workerd): ${m}`);
  }
  for (const m of v.other) assert.ok(!isNetworkError(new TypeError(m)), m);
  // Only Errors: the same words in another value are not a failure of fetch.
  for (const e of ['fetch failed', { message: 'fetch failed' }, undefined, null]) {
    assert.ok(!isNetworkError(e), String(e));
  }
});

test('replayable bodies: bytes and forms yes, streams and iterables no', () => {
  const yes = [
    undefined,
    null,
    '',
    'x',
    new ArrayBuffer(2),
    new Uint8Array(2),
    new DataView(new ArrayBuffer(1)),
    new Blob(['x']),
    new URLSearchParams('a=1'),
    new FormData(),
  ];
  for (const b of yes) assert.ok(replayable(b), String(b));
  async function* gen() {}
  const no = [new ReadableStream(), gen(), { [Symbol.asyncIterator]: () => ({}) }, { pipe() {} }];
  for (const b of no) assert.ok(!replayable(b), String(b));
});

test('the default methods are the idempotent ones, and QUERY', () => {
  assert.deepEqual(METHODS, ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE', 'QUERY']);
});
