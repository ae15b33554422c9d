// The adaptive limiter shared by an app's concurrent calls (issue 24), in
// Node against the scripted server's token bucket on 127.0.0.1: it holds
// the server's capacity instead of collapsing to its floor; calls whose
// deadline is shorter than their token wait do not starve the others
// (issue 25 #22); a server-named wait is never stored (issue 25 #7); bad
// input is refused by name and leaves the limiter working.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff } from 'wasm-backoff';
import { createGate, createLimiter } from 'wasm-backoff/gate';
import { startScripted } from '../server/scripted.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

let unique = 0;
const path = (name) => `/${name}-${unique++}`;
const url = (p) => `${srv.url}${p}`;

/** `n` closed loops of `call` for `ms`; the end times of successes (ms from the start). */
async function loops(n, ms, call) {
  const t0 = performance.now();
  const ok = [];
  const errors = [];
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (performance.now() - t0 < ms) {
        const t = performance.now();
        try {
          if (await call()) ok.push(performance.now() - t0);
        } catch (e) {
          errors.push(e);
          // (refused at once, e.g. a token wait past its deadline: pause rather than spin on microtasks)
          if (performance.now() - t < 1) await new Promise((r) => setTimeout(r, 5));
        }
      }
    }),
  );
  return { ok, errors };
}

test('20 callers sharing createLimiter() hold a token bucket of 200 req/s (no collapse to the floor, no long wait)', async () => {
  const p = path('bucket');
  srv.script(p, { rate: 200, burst: 20 });
  const l = createLimiter();
  let throttled = 0;
  const { ok, errors } = await loops(20, 2000, async () => {
    // (3 s: a token wait a loaded machine's dip may ask for, past the loops' end; a collapse to the
    // floor is what `rate` below tells: the limiter this replaced sat at 0.5 req/s)
    await l.acquire({ maxWaitMs: 3000 });
    const res = await fetch(url(p));
    await res.arrayBuffer();
    l.record(res.status === 429);
    if (res.status === 429) throttled++;
    return res.status === 200;
  });
  const rate = l.rate;
  l.free();
  assert.equal(errors.length, 0, `acquire() refused ${errors.length} times: ${errors[0]?.message} (${ok.length} successes, rate ${rate})`);
  // What is asserted is the absence of a collapse, not a speed (tests do not fail on timing; bench/overload.mjs
  // measures goodput): the limiter this replaced sent about 20 in 2 s and sat at its floor, 0.5 req/s. 2 s at
  // 200 req/s is 400 plus the burst alone; in the full suite on 2 cores the loopback server took far less (92
  // successes and a rate of 25 once, the rate following what the server took), hence 2× the old count and 10×
  // the floor.
  assert.ok(ok.length >= 40, `${ok.length} successes in 2 s (${throttled} 429s), rate ${rate}`);
  assert.ok(rate >= 5, `the rate after 2 s: ${rate}`);
});

test("20 callers through one gate with limit: 'adaptive' hold the capacity of a server answering Retry-After: 1", async () => {
  const p = path('bucket-ra');
  srv.script(p, { rate: 200, burst: 20, headers: { 'retry-after': '1' } });
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
  const f = withBackoff(fetch, { maxAttempts: 3, gate });
  const { ok, errors } = await loops(20, 2000, async () => {
    const res = await f(url(p));
    await res.arrayBuffer();
    return res.status === 200;
  });
  gate.free();
  assert.equal(errors.length, 0, String(errors[0]));
  // No collapse to the floor (what it sends depends on the machine: 2 s at 200 req/s is 400, the suite on 2 cores
  // far less). A gap with no success is no sign of a pause here: the second wave of the 20 loops can find the
  // bucket empty and wait its own Retry-After, all 20 at once; the test below tells a pause apart.
  assert.ok(ok.length >= 40, `${ok.length} successes in 2 s`);
});

test("one call's Retry-After: 10 through a gate with limit: 'adaptive' pauses no other call to that server", async () => {
  const p = path('ra-one');
  let sent = 0;
  srv.script(p, (req) =>
    req.headers['x-who'] === 'a' && sent++ === 0 ? { status: 429, headers: { 'retry-after': '10' } } : { status: 200, body: 'ok' },
  );
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
  const f = withBackoff(fetch, { maxAttempts: 3, gate });
  // (a measured send rate first, as an app that has been running has: the limiter slows to a share of it)
  for (let i = 0; i < 5; i++) await Promise.all(Array.from({ length: 10 }, () => f(url(p)).then((r) => r.arrayBuffer())));
  let waiting;
  const retrying = new Promise((r) => {
    waiting = r;
  });
  const stop = new AbortController();
  const a = f(url(p), { headers: { 'x-who': 'a' }, signal: stop.signal }, { onRetry: (info) => waiting(info.delayMs) });
  const settled = a.then(
    () => 'resolved',
    (e) => e.name,
  );
  const told = await retrying;
  assert.ok(told >= 10_000 && told < 11_000, `onRetry is told the wait about to start, the Retry-After: ${told}`);
  const t = performance.now();
  const others = await Promise.all(Array.from({ length: 19 }, () => f(url(p)).then((r) => r.status)));
  const took = performance.now() - t;
  stop.abort();
  assert.equal(await settled, 'AbortError');
  gate.free();
  assert.deepEqual(new Set(others), new Set([200]));
  // A gate that paused the server for the Retry-After would answer the 19 after 10 s; 5 s is the margin for a
  // loaded machine (they take milliseconds). And the told call was not retried.
  assert.ok(took < 5000, `the 19 other calls took ${took.toFixed(0)} ms`);
  assert.equal(srv.requests.filter((r) => r.path === p && r.headers['x-who'] === 'a').length, 1);
});

test('30 callers with maxElapsedMs 300 against 20 req/s: the calls that can make it are sent, goodput does not stall (issue 25 #22)', async () => {
  const p = path('bucket-deadline');
  srv.script(p, { rate: 20, burst: 2, headers: { 'retry-after': '1' } });
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
  const f = withBackoff(fetch, { maxAttempts: 3, gate });
  const { ok, errors } = await loops(30, 2500, async () => {
    const res = await f(url(p), undefined, { maxElapsedMs: 300 });
    await res.arrayBuffer();
    return res.status === 200;
  });
  gate.free();
  const late = ok.filter((t) => t >= 1000).length;
  const names = new Set(errors.map((e) => e.name));
  // Goodput keeps flowing (not a stall to zero). How much flows depends on the machine (20 req/s alone, 6 in 1.5 s
  // under the whole suite), so the figure is the benchmark's (bench/RESULTS.md §7a, deadline row); the refusal itself
  // (a token wait past the deadline takes nothing) is tested on a fake clock (core Limiter::acquire_within doctest).
  assert.ok(late >= 1, `${late} successes in the last 1.5 s, ${ok.length} in all; errors ${[...names]}`);
  assert.ok(
    [...names].every((n) => n === 'GateTimeoutError' || n === 'TimeoutError'),
    [...names].join(),
  );
});

test('a 429 naming a wait 20 days ahead pauses nothing; record(true, Infinity) neither (issue 25 #7)', async () => {
  const p = path('hostile');
  let n = 0;
  srv.script(p, () => (n++ === 0 ? { status: 429, headers: { 'x-ratelimit-reset': String(20 * 86400) } } : { status: 200, body: 'ok' }));
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
  const f = withBackoff(fetch, { maxAttempts: 2, gate });
  const t0 = performance.now();
  assert.equal((await f(url(p))).status, 429, 'returned at once: above maxRetryAfterMs');
  const res = await f(url(p), undefined, { maxElapsedMs: 3000 });
  assert.equal(res.status, 200);
  assert.ok(performance.now() - t0 < 2500, `${(performance.now() - t0).toFixed(0)} ms`);
  gate.free();

  const l = createLimiter();
  for (let i = 0; i < 20; i++) l.record(false);
  assert.ok(l.record(true, Infinity) > 0);
  await l.acquire({ maxWaitMs: 5000 }); // (not a 2^31 ms pause)
  l.free();
});

test('bad input to record() and acquire() is refused by name; the limiter keeps working', async () => {
  const l = createLimiter();
  for (const bad of ['yes', 1, null, undefined])
    assert.throws(() => l.record(/** @type {any} */ (bad)), { name: 'TypeError', message: /throttled/ });
  for (const bad of [-1, Number.NaN, -Infinity]) assert.throws(() => l.record(true, bad), { name: 'RangeError', message: /retryAfterMs/ });
  assert.throws(() => l.record(true, /** @type {any} */ ('5')), { name: 'TypeError', message: /retryAfterMs/ });
  assert.equal(typeof l.record(true, 0), 'number', 'a wait of 0 is a throttle naming none');
  for (const bad of [-1, Number.NaN]) await assert.rejects(l.acquire({ maxWaitMs: bad }), { name: 'RangeError', message: /maxWaitMs/ });
  await assert.rejects(l.acquire({ maxWaitMs: /** @type {any} */ ('1') }), { name: 'TypeError', message: /maxWaitMs/ });
  await assert.rejects(l.acquire({ signal: /** @type {any} */ (5) }), { name: 'TypeError', message: /signal/ });
  const ac = new AbortController();
  ac.abort(new Error('gone'));
  await assert.rejects(l.acquire({ signal: ac.signal }), /gone/);
  // Still working: a wait is asked for and given.
  await l.acquire({ maxWaitMs: 10_000 });
  assert.ok(l.rate > 0 && l.rate < Infinity);
  l.free();
  assert.throws(() => l.record(false), { name: 'TypeError', message: /freed/ });
});
