// The assertions on the shared breaker scenarios (tests/gate/breaker-checks.mjs
// and the throttled-call scenario of both runtimes), and (re-exported from
// breaker-checks.mjs, where a page can load it) what both test files do to a
// carried breaker's state.
import assert from 'node:assert/strict';

export { roundOver } from './breaker-checks.mjs';

/** What `limiterAlone` must find in every runtime (the wait asked for: a token at the floor rate, not the named 300 ms). */
export function assertLimiterAlone(r) {
  assert.equal(r.off, 'Infinity');
  // (a free token: acquire() settles on microtasks, before a setTimeout(0) queued just before it)
  assert.equal(r.free, 'acquire', 'off: acquire() waited for a timer or I/O');
  assert.ok(r.rate >= 0.5 && r.rate < 1e9, `rate ${r.rate}`);
  assert.equal(r.first.name, 'RangeError');
  // (a token at the throttled rate, 7 req/s from one call: 143 ms; not the named 300 ms, stored nowhere)
  assert.ok(r.first.waitMs > 50 && r.first.waitMs < 300, `the wait asked for: ${r.first.message}`);
  assert.equal(r.aborted.message, 'stop');
  assert.equal(r.again.name, 'RangeError');
  // (a kept token would add one token time)
  assert.ok(
    r.again.waitMs <= r.first.waitMs && r.first.waitMs - r.again.waitMs < 200,
    `${r.again.waitMs} vs ${r.first.waitMs}: no token was kept`,
  );
}

/**
 * A gate with `limit: 'adaptive'` after 30 warm-up calls and a 429 naming
 * 1 s: the next first attempt reached the server (arrival times `at`)
 * within one token at the throttled rate (tens of ms), not after the named
 * 1 s (a server-named wait delays the retry of the call that got it,
 * nothing else); 800 ms leaves a loaded machine room.
 */
export function assertThrottledGap(r, at, t) {
  assert.ok(
    r.warm.every((s) => s === 200),
    String(r.warm),
  );
  assert.deepEqual([r.throttled.status, r.next.status], [429, 200]);
  assert.equal(at.length, 32);
  const gap = at[31] - at[30];
  t.diagnostic(`429 → next first attempt: ${gap.toFixed(0)} ms`);
  assert.ok(gap < 800, `the next first attempt went ${gap.toFixed(0)} ms after the 429: the named 1 s paused it`);
}
