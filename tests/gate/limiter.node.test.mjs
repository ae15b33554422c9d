// The adaptive limiter shared by an app's concurrent calls (issue 24), on
// virtual time (the js/ sources, the kit's clock as tests/engine/clock.mjs
// installs it, and a scriptedFetch standing for the server): against a
// token bucket it holds the server's capacity instead of collapsing to its
// floor; calls whose deadline is shorter than their token wait are refused
// at once and do not starve the others (issue 25 #22); a server-named wait
// is never stored (issue 25 #7); bad input is refused by name and leaves
// the limiter working. Every wait is asserted to the millisecond, and no
// timer is left behind. No test here needs real time: the subject is the
// limiter's arithmetic on the clock, not the network (the runtimes' real
// servers and timers are the smokes of breaker.node, breaker.chromium and
// breaker.workerd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff } from '../../js/fetch/index.js';
import { createGate, createLimiter } from '../../js/gate/index.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import { eachTest } from '../engine/clock.mjs';

// (each test on its own clock, checked after it for timers left behind)
const clock = eachTest();

const URL_ = 'https://api.test/items';
/** Every answer's round trip (virtual ms). */
const RTT = 5;

/**
 * A rate-limited server (the scripted server's `{ rate, burst }` on the
 * clock): a token bucket of `burst` tokens refilled at `rate` per second; a
 * request that finds it empty is answered 429 (with `headers`). Each answer
 * comes RTT ms after its request.
 */
function bucket({ rate, burst, headers = {} }) {
  let tokens = burst;
  let at = clock.now();
  return scriptedFetch(() => {
    const now = clock.now();
    tokens = Math.min(burst, tokens + ((now - at) * rate) / 1000);
    at = now;
    if (tokens < 1) return { status: 429, headers, delayMs: RTT };
    tokens -= 1;
    return { status: 200, body: 'ok', delayMs: RTT };
  });
}

/**
 * `n` closed loops of `call` for `ms` of virtual time: the end times of
 * successes, and the errors with how long each call took (ms from the start).
 */
async function loops(n, ms, call) {
  const t0 = clock.now();
  const ok = [];
  const errors = [];
  const loop = async () => {
    while (clock.now() - t0 < ms) {
      const t = clock.now();
      try {
        if (await call()) ok.push(clock.now() - t0);
      } catch (e) {
        errors.push({ error: e, tookMs: clock.now() - t });
        // (refused at once, e.g. a token wait past its deadline: pause rather than spin)
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  await clock.run(Promise.all(Array.from({ length: n }, loop)));
  return { ok, errors };
}

test('20 callers sharing createLimiter() hold a token bucket of 200 req/s (no collapse to the floor, no long wait)', async () => {
  const server = bucket({ rate: 200, burst: 20 });
  const l = createLimiter();
  let throttled = 0;
  const { ok, errors } = await loops(20, 2000, async () => {
    await l.acquire({ maxWaitMs: 3000 });
    const res = await server(URL_);
    await res.arrayBuffer();
    l.record(res.status === 429);
    if (res.status === 429) throttled++;
    return res.status === 200;
  });
  const rate = l.rate;
  l.free();
  assert.equal(errors.length, 0, `acquire() refused ${errors.length} times: ${errors[0]?.error.message}`);
  // The bucket lets 20 + 200 × 2 = 420 through in 2 s: the limiter holds it (the one this replaced sent about
  // 20 and sat at its floor, 0.5 req/s), at the price of a few 429s while it finds the rate.
  assert.deepEqual({ ok: ok.length, throttled, sent: server.count }, { ok: 433, throttled: 27, sent: 460 });
  assert.ok(ok.length >= 420 && rate >= 100, `${ok.length} successes, rate ${rate}: held the capacity`);
  assert.ok(Math.max(...clock.asked) < 3000, 'no token wait near maxWaitMs');
});

test("20 callers through one gate with limit: 'adaptive' hold the capacity of a server answering Retry-After: 1", async () => {
  const server = bucket({ rate: 200, burst: 20, headers: { 'retry-after': '1' } });
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
  const f = withBackoff(server, { maxAttempts: 3, gate, seed: 1 });
  const { ok, errors } = await loops(20, 2000, async () => {
    const res = await f(URL_);
    await res.arrayBuffer();
    return res.status === 200;
  });
  gate.free();
  assert.equal(errors.length, 0, String(errors[0]?.error));
  // No collapse to the floor, nor a pause of the server for its Retry-After: successes keep coming to the end.
  assert.deepEqual({ ok: ok.length, sent: server.count }, { ok: 370, sent: 389 });
  assert.ok(ok.length >= 350, `${ok.length} successes in 2 s`);
  assert.ok(ok.filter((t) => t >= 1900).length >= 10, 'successes in the last 100 ms');
});

test("one call's Retry-After: 10 through a gate with limit: 'adaptive' pauses no other call to that server", async () => {
  let sent = 0;
  const server = scriptedFetch((call) =>
    call.headers['x-who'] === 'a' && sent++ === 0
      ? { status: 429, headers: { 'retry-after': '10' }, delayMs: RTT }
      : { status: 200, body: 'ok', delayMs: RTT },
  );
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
  const f = withBackoff(server, { maxAttempts: 3, gate, seed: 1 });
  // (a measured send rate first, as an app that has been running has: the limiter slows to a share of it)
  for (let i = 0; i < 5; i++) await clock.run(Promise.all(Array.from({ length: 10 }, () => f(URL_).then((r) => r.arrayBuffer()))));
  assert.equal(clock.now(), 5 * RTT);
  let told;
  const stop = new AbortController();
  const a = f(URL_, { headers: { 'x-who': 'a' }, signal: stop.signal }, { onRetry: (info) => (told = info.delayMs) });
  const settled = a.then(
    () => 'resolved',
    (e) => e.name,
  );
  await clock.tick(RTT);
  // onRetry is told the wait about to start: the Retry-After, plus its jitter (up to 10 %, a seeded draw).
  assert.ok(told >= 10_000 && told < 11_000, `told ${told}`);
  const others = await clock.run(Promise.all(Array.from({ length: 19 }, () => f(URL_).then((r) => r.status))));
  assert.deepEqual(new Set(others), new Set([200]));
  // The 19 go at once, paced one token apart by the rate the 429 cut (350 req/s: a token every 2.86 ms), not
  // after the named 10 s; the last is answered at 30 + 54.24 + RTT ms.
  assert.deepEqual(
    server.calls.slice(-19).map((c) => c.at - 1_000_000),
    [32, 35, 38, 41, 44, 47, 49, 52, 55, 58, 61, 64, 67, 69, 72, 75, 78, 81, 84],
  );
  assert.equal(Math.round(clock.now() * 100) / 100, 89.24);
  stop.abort();
  assert.equal(await clock.run(settled), 'AbortError');
  assert.equal(clock.now() < 100, true, 'the abort ended the 10 s wait: no time passed');
  gate.free();
  assert.equal(server.calls.filter((c) => c.headers['x-who'] === 'a').length, 1, 'the told call was not retried');
});

test('30 callers with maxElapsedMs 300 against 20 req/s: the calls that can make it are sent, goodput does not stall (issue 25 #22)', async () => {
  const server = bucket({ rate: 20, burst: 2, headers: { 'retry-after': '1' } });
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
  const f = withBackoff(server, { maxAttempts: 3, gate, seed: 1 });
  const { ok, errors } = await loops(30, 2500, async () => {
    const res = await f(URL_, undefined, { maxElapsedMs: 300 });
    await res.arrayBuffer();
    return res.status === 200;
  });
  gate.free();
  const names = new Set(errors.map((e) => e.error.name));
  assert.deepEqual([...names], ['GateTimeoutError'], 'only refusals by the gate');
  // A token wait past the deadline takes nothing: refused at once, unsent.
  assert.deepEqual(new Set(errors.map((e) => e.tookMs)), new Set([0]));
  // Goodput keeps flowing to the end (not a stall to zero), near what the bucket takes (2 + 20 req/s × 2.5 s:
  // 52; 30 in the last 1.5 s).
  const late = ok.filter((t) => t >= 1000).length;
  assert.deepEqual({ ok: ok.length, late, sent: server.count }, { ok: 43, late: 24, sent: 74 });
});

test('a 429 naming a wait 20 days ahead pauses nothing; record(true, Infinity) neither (issue 25 #7)', async () => {
  let n = 0;
  const server = scriptedFetch(() =>
    n++ === 0 ? { status: 429, headers: { 'x-ratelimit-reset': String(20 * 86400) } } : { status: 200, body: 'ok' },
  );
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity });
  const f = withBackoff(server, { maxAttempts: 2, gate });
  assert.equal((await clock.run(f(URL_))).status, 429, 'returned: above maxRetryAfterMs');
  assert.equal(clock.now(), 0, 'at once');
  const res = await clock.run(f(URL_, undefined, { maxElapsedMs: 3000 }));
  assert.equal(res.status, 200);
  // The next call waited one token at the limiter's floor (0.5 req/s: nothing measured yet), not 20 days.
  assert.equal(clock.now(), 2000);
  assert.deepEqual(clock.asked, [3000, 2000], "the call's deadline, its token wait");
  gate.free();

  const l = createLimiter();
  for (let i = 0; i < 20; i++) l.record(false);
  const rate = l.record(true, Infinity);
  assert.equal(rate, 140);
  await clock.run(l.acquire({ maxWaitMs: 5000 })); // (not a 2^31 ms pause)
  assert.ok(Math.abs(clock.asked.at(-1) - 1000 / rate) < 1e-9, `one token at ${rate} req/s: ${clock.asked.at(-1)} ms`);
  assert.ok(Math.abs(clock.now() - 2000 - 1000 / rate) < 1e-6);
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
  assert.deepEqual(clock.asked, [], 'nothing refused waited');
  // Still working: a wait is asked for and given, one token at the floor (0.5 req/s: nothing measured).
  await clock.run(l.acquire({ maxWaitMs: 10_000 }));
  assert.deepEqual([clock.now(), ...clock.asked], [2000, 2000]);
  assert.equal(l.rate, 0.5);
  l.free();
  assert.throws(() => l.record(false), { name: 'TypeError', message: /freed/ });
});
