// Bounded load tests of the fetch driver in Node against the scripted server,
// run in its own process (so 10 000 client sockets and 10 000 server sockets
// do not share one file-descriptor limit). Figures are printed, never timed
// against a threshold.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWithBackoff } from 'wasm-backoff';
import { spawnScripted } from '../server/scripted.mjs';
import { timers } from '../support/wait.mjs';

let srv;
before(async () => {
  srv = await spawnScripted();
});
after(() => srv?.close());

test('10 000 concurrent calls against 50 % 503s: all settle, requests = calls + retries, no timer left', { timeout: 120_000 }, async () => {
  await srv.script('/half', { failRate: 0.5, status: 503, seed: 7 });
  const baseline = timers();
  let retries = 0;
  const calls = 10_000;
  const t0 = performance.now();
  const results = await Promise.allSettled(
    Array.from({ length: calls }, () =>
      fetchWithBackoff(`${srv.url}/half`, undefined, { baseMs: 5, maxDelayMs: 50, maxAttempts: 6, onRetry: () => retries++ }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status;
        },
      ),
    ),
  );
  const ms = performance.now() - t0;
  const ok = results.filter((r) => r.status === 'fulfilled' && r.value === 200).length;
  const settled = results.filter((r) => r.status === 'fulfilled').length;
  const served = await srv.count('/half');
  console.log(`# load: ${calls} calls, ${retries} retries, ${served} requests served, ${ok} ended 200, ${Math.round(ms)} ms`);
  assert.equal(settled, calls, 'every call resolved (a Response, whatever its status)');
  assert.equal(served, calls + retries, 'server requests = calls + onRetry count');
  assert.ok(ok > calls * 0.95, `with 6 attempts at 50 % failure ~98 % end 200 (got ${ok})`);
  assert.equal(timers(), baseline, 'no timer left behind');
});

test('1 000 aborts at random moments: every call rejects with its own reason, no timer left', { timeout: 60_000 }, async () => {
  await srv.script('/slow503', [{ status: 503, delayMs: 5 }]);
  await srv.script('/hang', [{ hang: true }]);
  const baseline = timers();
  const calls = Array.from({ length: 1000 }, (_, i) => {
    const ac = new AbortController();
    const reason = { call: i };
    setTimeout(() => ac.abort(reason), Math.random() * 60);
    // Half wait in backoff between 503s, half sit in a hung attempt.
    const p = fetchWithBackoff(
      `${srv.url}/${i % 2 ? 'slow503' : 'hang'}`,
      { signal: ac.signal },
      { baseMs: 20, maxDelayMs: 40, maxAttempts: 1000 },
    );
    return p.then(
      () => ({ i, ok: false, why: 'resolved' }),
      (e) => ({ i, ok: e === reason, why: e }),
    );
  });
  const out = await Promise.all(calls);
  const wrong = out.filter((r) => !r.ok);
  assert.deepEqual(wrong.slice(0, 3), [], `${wrong.length} calls did not reject with their reason`);
  assert.equal(timers(), baseline, 'no timer left behind');
});
