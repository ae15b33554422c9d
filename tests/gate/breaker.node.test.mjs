// The gate as a circuit breaker and adaptive rate limiter in Node, on
// virtual time (the js/ sources, the kit's clock as tests/engine/clock.mjs
// installs it, and a scriptedFetch per path standing for the server):
// thresholds (a single failure does not hold healthy traffic), fail-fast,
// isolation by hand, state carried to another gate through JSON, the
// adaptive limiter, and the defects an outside harness found (a released
// call aborted synchronously; a healthy burst under `concurrency`). Every
// wait and send time is asserted to the millisecond, with no timer left
// behind. Fail-fast's refusals and their wait are also on fake time in
// tests/engine/ticket.test.mjs. Last, the one runtime smoke: the package
// entry with Node's fetch against the real scripted server, on real time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff as pkgWithBackoff } from 'wasm-backoff';
import { createGate as pkgCreateGate } from 'wasm-backoff/gate';
import { withBackoff } from '../../js/fetch/index.js';
import { BrokenCircuitError, createGate, createLimiter } from '../../js/gate/index.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import { startScripted } from '../server/scripted.mjs';
import { eachTest, settled } from '../engine/clock.mjs';
import { timers } from '../support/wait.mjs';

// (each test on its own clock, checked after it for timers left behind)
const clock = eachTest();

const ROUNDS = { baseMs: 40, maxDelayMs: 160, jitter: 'none' };
const ORIGIN = 'https://api.test';
const url = (p) => `${ORIGIN}${p}`;
/** The virtual ms of each call `server` was made (Date.now() since the clock's start). */
const at = (server) => server.calls.map((c) => c.at - 1_000_000);

test('the default threshold: one 503 on /flaky does not hold an unrelated /ok call to the same origin', async () => {
  const server = scriptedFetch({ '/flaky': [503, { status: 200, body: 'flaky ok' }], '/ok': { status: 200, body: 'ok' } });
  const gate = createGate({ ...ROUNDS, baseMs: 1000 });
  const f = withBackoff(server, { baseMs: 1000, throttleBaseMs: 1000, jitter: 'none', gate });
  const first = f(url('/flaky')); // fails once, then waits its own 1 s
  await clock.tick(30);
  const res = await clock.run(f(url('/ok')));
  assert.equal(clock.now(), 30, 'the /ok call was not held');
  assert.equal(await res.text(), 'ok');
  assert.equal(gate.state(ORIGIN).state, 'closed');
  assert.equal(await (await clock.run(first)).text(), 'flaky ok', 'the failed call retried on its own schedule');
  assert.deepEqual(
    server.calls.map((c) => `${new URL(c.url).pathname}@${c.at - 1_000_000}`),
    ['/flaky@0', '/ok@30', '/flaky@1000'],
  );
  assert.equal(gate.stats().rounds, 0);
  gate.free();
});

test('consecutive: the circuit opens at the Nth failure in a row; every state change is told with its reason', async () => {
  // 3 failures trip; the probe after the round succeeds.
  const server = scriptedFetch([503, 503, 503, { status: 200, body: 'back' }]);
  const changes = [];
  const gate = createGate({
    ...ROUNDS,
    consecutive: 3,
    key: () => 't',
    onStateChange: (c) => changes.push(`${c.from}>${c.to}:${c.reason}@${clock.now()}`),
  });
  const f = withBackoff(server, { baseMs: 1, jitter: 'none', gate });
  const res = await clock.run(f(url('/trip')));
  assert.equal(await res.text(), 'back');
  // Its own waits (a 503: 10 × baseMs, then 20 ms) until the 3rd failure trips at 30; the round's 40 ms, then the probe.
  assert.deepEqual(at(server), [0, 10, 30, 70]);
  assert.deepEqual(changes, ['closed>open:tripped@30', 'open>half-open:round-over@70', 'half-open>closed:probe-succeeded@70']);
  const { rounds, probes } = gate.stats();
  assert.deepEqual([rounds, probes], [1, 1]);
  gate.free();
});

test('failureRatio: trips on the share of failures in the window, once minCalls ended', async () => {
  let n = 0;
  // 1 in 2 requests fails (odd ones).
  const server = scriptedFetch(() => (n++ % 2 ? { status: 500 } : { status: 200, body: 'ok' }));
  const gate = createGate({ ...ROUNDS, failureRatio: 0.5, minCalls: 6, windowMs: 10_000, key: () => 'r', mode: 'fail-fast' });
  const f = withBackoff(server, { maxAttempts: 1, gate });
  for (let i = 0; i < 5; i++) await clock.run(f(url('/ratio')));
  assert.equal(gate.state('r').state, 'closed', '2 of 5 failed; fewer than minCalls');
  await clock.run(f(url('/ratio')));
  assert.equal(gate.state('r').state, 'open', '3 of 6 failed: tripped');
  const err = await clock.run(f(url('/ratio'))).catch((e) => e);
  assert.ok(err instanceof BrokenCircuitError, String(err));
  assert.equal(err.retryAfterMs, 40, 'the whole first round');
  assert.equal(server.count, 6, 'the 7th call was refused without a request');
  assert.equal(clock.now(), 0);
  gate.free();
});

test('isolate(key) / release(key) by hand: held (or refused) until released, and told', async () => {
  const server = scriptedFetch({ status: 200, body: 'ok' });
  const changes = [];
  const gate = createGate({ ...ROUNDS, key: () => 'iso', onStateChange: (c) => changes.push(`${c.to}:${c.reason}`) });
  const f = withBackoff(server, { gate });
  gate.isolate('iso');
  const held = f(url('/iso'));
  await clock.tick(60_000);
  assert.equal(await settled(held), false, 'held while isolated, a minute on');
  assert.equal(server.count, 0);
  assert.equal(gate.state('iso').state, 'isolated');
  gate.release('iso');
  assert.equal((await clock.run(held)).status, 200);
  assert.deepEqual(at(server), [60_000], 'sent when released');
  assert.deepEqual(changes, ['isolated:isolated', 'closed:released']);
  const ff = createGate({ mode: 'fail-fast' });
  ff.isolate('x');
  const err = await clock.run(ff.run('x', async () => 1)).catch((e) => e);
  assert.ok(err instanceof BrokenCircuitError && err.isolated && err.retryAfterMs === Infinity, String(err));
  gate.free();
  ff.free();
});

test('toJSON() / restore(): an open circuit carried to another gate (another isolate) stays open until its round ends', async () => {
  const server = scriptedFetch([503, { status: 200, body: 'probe ok' }]);
  const options = { ...ROUNDS, baseMs: 200, consecutive: 1, mode: 'fail-fast', key: () => 'api' };
  const a = createGate(options);
  const f = withBackoff(server, { maxAttempts: 1, gate: a });
  assert.equal((await clock.run(f(url('/carry')))).status, 503);
  const text = JSON.stringify(a);
  const saved = JSON.parse(text);
  assert.equal(saved.version, 1);
  assert.equal(saved.targets.api.state, 'open');
  assert.equal(saved.targets.api.round, 1);
  a.free();

  await clock.tick(50);
  const b = createGate(options);
  b.restore(JSON.parse(text));
  const g = withBackoff(server, { maxAttempts: 1, gate: b });
  const err = await clock.run(g(url('/carry'))).catch((e) => e);
  assert.ok(err instanceof BrokenCircuitError, 'still open in the new gate');
  // (the round: baseMs 200, capped at maxDelayMs: 160 ms)
  assert.equal(err.retryAfterMs, 110, 'the rest of the round begun in the other gate');
  assert.equal(server.count, 1);
  await clock.tick(err.retryAfterMs - 1);
  assert.ok((await clock.run(g(url('/carry'))).catch((e) => e)) instanceof BrokenCircuitError, '1 ms before its end');
  await clock.tick(1);
  assert.equal(await (await clock.run(g(url('/carry')))).text(), 'probe ok');
  assert.deepEqual(at(server), [0, 160], 'the probe went as the round ended');
  assert.deepEqual(b.toJSON().targets, {}, 'closed and clean: nothing to carry');

  // A closed target's failure count comes along too: the 3rd failure in a row trips.
  const c = createGate({ ...ROUNDS, consecutive: 3 });
  for (let i = 0; i < 2; i++) await clock.run(c.run('k', () => Promise.reject(new Error('down')), { maxAttempts: 1 }).catch(() => {}));
  const d = createGate({ ...ROUNDS, consecutive: 3 });
  d.restore(JSON.parse(JSON.stringify(c)));
  await clock.run(d.run('k', () => Promise.reject(new Error('down')), { maxAttempts: 1 }).catch(() => {}));
  assert.equal(d.state('k').state, 'open');
  assert.equal(c.state('k').state, 'closed', 'two failures in the first gate');
  b.free();
  c.free();
  d.free();
});

test('restore(): a malformed or future state is refused with a clear error, and the target starts closed', () => {
  const a = createGate({ consecutive: 1 });
  a.isolate('k');
  const good = a.toJSON();
  const b = createGate();
  assert.throws(() => b.restore(null), TypeError);
  assert.throws(
    () => b.restore({ ...good, version: 2 }),
    (e) => e instanceof RangeError && /version/.test(e.message),
  );
  assert.throws(
    () => b.restore({ ...good, targets: { k: { ...good.targets.k, round: 'one' } } }),
    (e) => e instanceof TypeError && /targets\["k"\]\.round/.test(e.message),
  );
  assert.equal(b.state('k').state, 'closed', 'a TypeError changes nothing');
  assert.throws(
    () => b.restore({ ...good, targets: { k: { ...good.targets.k, round: -3 } } }),
    (e) => e instanceof RangeError && /"k" is malformed; it starts closed/.test(e.message),
  );
  assert.equal(b.state('k').state, 'closed');
  assert.throws(
    () => b.restore({ ...good, savedAt: Date.now() + 86_400_000 }),
    (e) => e instanceof RangeError && /from the future/.test(e.message),
  );
  assert.equal(b.state('k').state, 'closed');
  b.restore(good);
  assert.equal(b.state('k').state, 'isolated', 'the good state is taken up');
  a.free();
  b.free();
});

test('a call released by the gate and aborted synchronously right after sends nothing', async () => {
  const server = scriptedFetch([503, 200, 200]);
  const gate = createGate({ ...ROUNDS, consecutive: 1, key: () => 's' });
  const f = withBackoff(server, { baseMs: 1, jitter: 'none', gate });
  const ac = new AbortController();
  // The first call fails and starts a round; the second is held. When the
  // probe (the first call) succeeds, its onDone aborts the second, which the
  // gate has just released.
  const first = f(url('/syncabort'), undefined, { onDone: () => ac.abort(new Error('stop')) });
  await clock.tick(0);
  assert.equal(gate.state('s').state, 'open');
  const second = f(url('/syncabort'), { signal: ac.signal }).catch((e) => e);
  assert.equal((await clock.run(first)).status, 200);
  assert.equal(clock.now(), 40, 'the probe at the round’s end');
  assert.equal((await clock.run(second))?.message, 'stop');
  await clock.tick(1000);
  assert.deepEqual(at(server), [0, 40], 'the aborted call sent nothing');
  gate.free();
});

test('a healthy burst with concurrency set is queued, never refused by maxQueued', async () => {
  const server = scriptedFetch({ status: 200, body: 'ok', delayMs: 5 });
  const gate = createGate({ concurrency: 4, maxQueued: 10 });
  const f = withBackoff(server, { gate });
  const res = await clock.run(Promise.all(Array.from({ length: 300 }, () => f(url('/burst')).then((r) => r.status))));
  assert.ok(
    res.every((s) => s === 200),
    `${res.filter((s) => s !== 200).length} refused`,
  );
  // Four at a time, 5 ms each: 75 rounds of four.
  assert.equal(clock.now(), 375);
  assert.deepEqual(at(server).slice(0, 9), [0, 0, 0, 0, 5, 5, 5, 5, 10]);
  assert.equal(gate.stats().evictions, 0);
  gate.free();
});

test("limit: 'adaptive' — a 429 naming a wait delays that call's retry only; a deadline shorter than the token wait is refused unsent", async () => {
  let n = 0;
  let script = () => (n++ === 10 ? { status: 429, headers: { 'retry-after': '1' }, delayMs: 5 } : { status: 200, body: 'ok', delayMs: 5 });
  const server = scriptedFetch(() => script());
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity, key: () => 'lim' });
  const f = withBackoff(server, { maxAttempts: 1, gate });
  for (let i = 0; i < 10; i++) assert.equal((await clock.run(f(url('/throttle')))).status, 200); // (what the server takes: the cut's base)
  assert.equal((await clock.run(f(url('/throttle')))).status, 429);
  assert.equal(clock.now(), 55);
  // A new call (a first attempt) does not wait for the server's second (issue 24): one token at the cut rate.
  assert.equal((await clock.run(f(url('/throttle')))).status, 200);
  assert.deepEqual(at(server).slice(10), [50, 68], 'sent a token (13.89 ms) after the 429, not 1 s');
  assert.equal(clock.now().toFixed(2), '73.89');
  // Calls queued on the throttled limiter: one whose deadline ends before its token (and a round trip) is refused at once, unsent.
  // (ten throttles in a row, each sent after the last cut: ten cuts, to well below 50 req/s)
  script = () => ({ status: 429, headers: { 'retry-after': '2' }, delayMs: 5 });
  for (let i = 0; i < 10; i++) await clock.run(f(url('/throttle')));
  const sent = server.count;
  const t = clock.now();
  const err = await clock.run(f(url('/throttle'), undefined, { maxElapsedMs: 20 })).catch((e) => e);
  assert.equal(err?.name, 'GateTimeoutError');
  assert.equal(clock.now(), t, 'at once');
  assert.equal(server.count, sent);
  gate.free();
});

test('AdaptiveLimiter alone: off until throttled, then reservations one token apart; abort and maxWaitMs give the token back', async () => {
  const l = createLimiter();
  assert.equal(l.rate, Infinity);
  await clock.run(l.acquire()); // off: at once
  assert.equal(clock.now(), 0);
  for (let i = 0; i < 20; i++) l.record(false);
  const rate = l.record(true);
  assert.equal(rate, 140);
  await assert.rejects(l.acquire({ maxWaitMs: 0 }), (e) => e instanceof RangeError && /maxWaitMs/.test(e.message));
  const ac = new AbortController();
  const p = l.acquire({ signal: ac.signal });
  ac.abort(new Error('no'));
  await assert.rejects(p, /no/);
  // The tokens refused and aborted were given back: the next is the first one's, a token away.
  await clock.run(l.acquire());
  assert.ok(Math.abs(clock.now() - 1000 / rate) < 1e-6, `${clock.now()} ms`);
  assert.throws(() => l.record('yes'), TypeError);
  assert.throws(() => l.record(true, -1), RangeError);
  l.free();
  assert.throws(() => l.rate, TypeError);
});

// ---- the runtime: the package entry, Node's fetch, the real scripted server, real time

test("Node's fetch, real server, real time: 3 failures trip, the round's probe closes it (outcomes and order only)", async () => {
  // (real time: Node's fetch, sockets and timers are the subject here; no window is asserted)
  clock.off();
  const srv = await startScripted();
  try {
    const before = timers();
    srv.script('/trip', [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200, body: 'back' }]);
    const changes = [];
    const gate = pkgCreateGate({
      ...ROUNDS,
      consecutive: 3,
      key: () => 't',
      onStateChange: (c) => changes.push(`${c.from}>${c.to}:${c.reason}`),
    });
    const f = pkgWithBackoff(fetch, { baseMs: 1, jitter: 'none', gate });
    assert.equal(await (await f(`${srv.url}/trip`)).text(), 'back');
    assert.deepEqual(changes, ['closed>open:tripped', 'open>half-open:round-over', 'half-open>closed:probe-succeeded']);
    assert.equal(srv.count('/trip'), 4);
    gate.free();
    assert.equal(timers(), before, 'no timer left behind');
  } finally {
    await srv.close();
  }
});
