// The retry policy (js/policy.js) on its own: a table of what happened and
// what the driver must do. Pure functions: no server, no timers.
// Run: node --test tests/js/policy.test.mjs
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import { METHODS, RETRY_ON, isNetworkError, replayable, timing, verdict } from '../../js/policy.js';

const base = { failed: false, network: false, retryOn: new Set(RETRY_ON), idempotent: true, replayable: true };

test('verdict: what is retried, in order (failure, method, shouldRetry, body)', () => {
  const rows = [
    // [facts, expected]
    [{ status: 200 }, 'success'],
    [{ status: 304 }, 'success'],
    [{ status: 404 }, 'not-retryable'],
    [{ status: 503 }, ''],
    [{ status: 408 }, ''],
    [{ failed: true, network: true }, ''],
    [{ failed: true, network: false }, 'not-retryable'], // a bad URL, a bug in a custom fetch
    // a server-named wait makes 413/429/503 retryable, whatever retryOn says
    [{ status: 413 }, 'not-retryable'],
    [{ status: 413, hintMs: 0 }, ''],
    [{ status: 503, hintMs: 10, retryOn: new Set([500]) }, ''],
    [{ status: 429, hintMs: 10, retryOn: new Set() }, ''],
    [{ status: 500, hintMs: 10, retryOn: new Set() }, 'not-retryable'],
    [{ status: 404, retryOn: new Set([404]) }, ''],
    // the method comes after the failure
    [{ status: 503, idempotent: false }, 'not-idempotent'],
    [{ status: 404, idempotent: false }, 'not-retryable'],
    [{ failed: true, network: true, idempotent: false }, 'not-idempotent'],
    // shouldRetry: true forces (even a POST, even a 200), false vetoes (a success stays one)
    [{ status: 503, idempotent: false, wants: true }, ''],
    [{ status: 200, wants: true }, ''],
    [{ failed: true, network: false, wants: true }, ''],
    [{ status: 503, wants: false }, 'vetoed'],
    [{ status: 404, wants: false }, 'vetoed'],
    [{ status: 200, wants: false }, 'success'],
    // the body last: a forced retry of a one-shot body is still refused
    [{ status: 503, replayable: false }, 'not-replayable'],
    [{ status: 503, replayable: false, wants: true }, 'not-replayable'],
    [{ status: 404, replayable: false }, 'not-retryable'],
    [{ status: 503, idempotent: false, replayable: false }, 'not-idempotent'],
  ];
  for (const [facts, want] of rows) assert.equal(verdict({ ...base, ...facts }), want, JSON.stringify(facts));
});

test('timing: exhausted, then a server wait over the cap, then the deadline', () => {
  const t = { delayMs: 100, maxRetryAfterMs: 1000, elapsedMs: 0, maxElapsedMs: Infinity };
  const rows = [
    [{}, ''],
    [{ delayMs: -1 }, 'exhausted'],
    [{ delayMs: -1, hintMs: 5000 }, 'exhausted'],
    [{ hintMs: 1000, delayMs: 1000 }, ''],
    [{ hintMs: 1001, delayMs: 1001 }, 'retry-after'],
    [{ hintMs: Infinity, delayMs: 2 ** 31 - 1 }, 'retry-after'],
    [{ maxElapsedMs: 150, elapsedMs: 50 }, ''],
    [{ maxElapsedMs: 150, elapsedMs: 51 }, 'deadline'],
    [{ maxElapsedMs: 0, delayMs: 0 }, ''],
    [{ hintMs: 5000, delayMs: 5000, maxElapsedMs: 100 }, 'retry-after'],
  ];
  for (const [facts, want] of rows) assert.equal(timing({ ...t, ...facts }), want, JSON.stringify(facts));
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
