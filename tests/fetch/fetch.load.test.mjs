// Bounded load tests of the fetch driver in Node. Real sockets where the
// runtime's own sockets are the subject (1 000 concurrent calls and 1 000
// aborts against the scripted server, in its own process), and the
// 10 000-way concurrency on the kit's scriptedFetch and virtual clock
// (wasm-backoff/testing), where the driver's bookkeeping is the subject:
// chaos faults the same calls, seeded, that the server's failRate does.
// Figures are printed, never timed against a threshold.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWithBackoff, withBackoff } from 'wasm-backoff';
import { chaos, scriptedFetch, virtualClock } from 'wasm-backoff/testing';
import { spawnScripted } from '../server/scripted.mjs';
import { timers } from '../support/wait.mjs';

let srv;
before(async () => {
  srv = await spawnScripted();
});
after(() => srv?.close());

const OPTIONS = { baseMs: 5, maxDelayMs: 50, maxAttempts: 6 };

/** Settles `calls` concurrent calls of `call(onRetry)`; their count of 200s, of settled calls and of retries. */
async function concurrent(calls, call, wait = (p) => p) {
  let retries = 0;
  const onRetry = () => retries++;
  const results = await wait(
    Promise.allSettled(
      Array.from({ length: calls }, () =>
        call(onRetry).then(async (r) => {
          await r.arrayBuffer();
          return r.status;
        }),
      ),
    ),
  );
  const ok = results.filter((r) => r.status === 'fulfilled' && r.value === 200).length;
  const settled = results.filter((r) => r.status === 'fulfilled').length;
  return { ok, settled, retries };
}

test('10 000 concurrent calls against 50 % 503s (scripted, virtual time): all settle, requests = calls + retries, no timer left', {
  timeout: 120_000,
}, async () => {
  // (first: no real socket yet, whose pool would arm its timers on the virtual clock)
  const clock = virtualClock();
  try {
    const fetch = chaos(scriptedFetch({ status: 200, body: 'ok' }), { rate: 0.5, status: 503, seed: 7 });
    const calls = 10_000;
    const t0 = process.hrtime.bigint(); // (performance.now() is the clock's)
    const { ok, settled, retries } = await concurrent(
      calls,
      (onRetry) => withBackoff(fetch, { ...OPTIONS, onRetry })('https://api.test/half'),
      (p) => clock.run(p),
    );
    const served = fetch.injected.length;
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    console.log(`# load (scripted): ${calls} calls, ${retries} retries, ${served} requests, ${ok} ended 200, ${Math.round(ms)} ms`);
    assert.equal(settled, calls, 'every call resolved (a Response, whatever its status)');
    assert.equal(served, calls + retries, 'requests = calls + onRetry count');
    assert.ok(ok > calls * 0.95, `with 6 attempts at 50 % failure ~98 % end 200 (got ${ok})`);
    assert.equal(clock.pending(), 0, 'no timer left behind');
  } finally {
    clock.uninstall();
  }
});

test('1 000 concurrent calls over real sockets against 50 % 503s: all settle, requests = calls + retries, no timer left', {
  timeout: 120_000,
}, async () => {
  await srv.script('/half', { failRate: 0.5, status: 503, seed: 7 });
  const baseline = timers();
  const calls = 1000;
  const t0 = performance.now();
  const { ok, settled, retries } = await concurrent(calls, (onRetry) =>
    fetchWithBackoff(`${srv.url}/half`, undefined, { ...OPTIONS, onRetry }),
  );
  const served = await srv.count('/half');
  console.log(
    `# load (sockets): ${calls} calls, ${retries} retries, ${served} requests served, ${ok} ended 200, ${Math.round(performance.now() - t0)} ms`,
  );
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
