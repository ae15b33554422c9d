// The gate as a circuit breaker and adaptive rate limiter, in Node against
// the real scripted server on 127.0.0.1: thresholds (a single failure does
// not hold healthy traffic), fail-fast, isolation by hand, state carried
// to another gate through JSON, the adaptive limiter, and the defects an
// outside harness found (a released call aborted synchronously; a healthy
// burst under `concurrency`). Fail-fast's refusals and their wait are on
// fake time (tests/engine/ticket.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff } from 'wasm-backoff';
import { BrokenCircuitError, createGate, createLimiter } from 'wasm-backoff/gate';
import { startScripted } from '../server/scripted.mjs';
import { timers } from '../support/wait.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

let unique = 0;
const path = (name) => `/${name}-${unique++}`;
const ROUNDS = { baseMs: 40, maxDelayMs: 160, jitter: 'none' };
const url = (p) => `${srv.url}${p}`;

test('the default threshold: one 503 on /flaky does not hold an unrelated /ok call to the same origin', async () => {
  const flaky = path('flaky');
  const ok = path('ok');
  srv.script(flaky, [{ status: 503 }, { status: 200, body: 'flaky ok' }]);
  srv.script(ok, { status: 200, body: 'ok' });
  // (1 s: a loaded machine's pause stays far below what a hold would cost)
  const gate = createGate({ ...ROUNDS, baseMs: 1000 });
  const f = withBackoff(fetch, { baseMs: 1000, throttleBaseMs: 1000, jitter: 'none', gate });
  const first = f(url(flaky)); // fails once, then waits its own 1 s
  await new Promise((r) => setTimeout(r, 30));
  const t0 = performance.now();
  const res = await f(url(ok));
  const waited = performance.now() - t0;
  assert.equal(await res.text(), 'ok');
  assert.equal(gate.state(new URL(srv.url).origin).state, 'closed');
  assert.ok(waited < 700, `the /ok call was held ${waited.toFixed(0)} ms`);
  assert.equal(await (await first).text(), 'flaky ok', 'the failed call retried on its own schedule');
  assert.equal(gate.stats().rounds, 0);
  gate.free();
});

test('consecutive: the circuit opens at the Nth failure in a row; every state change is told with its reason', async () => {
  const p = path('trip');
  // 3 failures trip; the probe after the round succeeds.
  srv.script(p, [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200, body: 'back' }]);
  const changes = [];
  const gate = createGate({ ...ROUNDS, consecutive: 3, key: () => 't', onStateChange: (c) => changes.push(c) });
  const f = withBackoff(fetch, { baseMs: 1, jitter: 'none', gate });
  const res = await f(url(p));
  assert.equal(await res.text(), 'back');
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(
    changes.map((c) => `${c.from}>${c.to}:${c.reason}`),
    ['closed>open:tripped', 'open>half-open:round-over', 'half-open>closed:probe-succeeded'],
  );
  assert.equal(changes[0].key, 't');
  assert.equal(srv.count(p), 4);
  const { rounds, probes } = gate.stats();
  assert.deepEqual([rounds, probes], [1, 1]);
  gate.free();
});

test('failureRatio: trips on the share of failures in the window, once minCalls ended', async () => {
  const p = path('ratio');
  let n = 0;
  // 1 in 2 requests fails (odd ones).
  srv.script(p, () => (n++ % 2 ? { status: 500 } : { status: 200, body: 'ok' }));
  const gate = createGate({ ...ROUNDS, failureRatio: 0.5, minCalls: 6, windowMs: 10_000, key: () => 'r', mode: 'fail-fast' });
  const f = withBackoff(fetch, { maxAttempts: 1, gate });
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await f(url(p))).status);
  assert.equal(gate.state('r').state, 'closed', '2 of 5 failed; fewer than minCalls');
  statuses.push((await f(url(p))).status);
  assert.equal(gate.state('r').state, 'open', '3 of 6 failed: tripped');
  const err = await f(url(p)).catch((e) => e);
  assert.ok(err instanceof BrokenCircuitError, String(err));
  assert.equal(srv.count(p), 6, 'the 7th call was refused without a request');
  gate.free();
});

test('isolate(key) / release(key) by hand: held (or refused) until released, and told', async () => {
  const p = path('iso');
  srv.script(p, { status: 200, body: 'ok' });
  const changes = [];
  const gate = createGate({ ...ROUNDS, key: () => 'iso', onStateChange: (c) => changes.push(`${c.to}:${c.reason}`) });
  const f = withBackoff(fetch, { gate });
  gate.isolate('iso');
  let done = false;
  const held = f(url(p)).then((r) => ((done = true), r));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(done, false, 'held while isolated');
  assert.equal(srv.count(p), 0);
  assert.equal(gate.state('iso').state, 'isolated');
  gate.release('iso');
  assert.equal((await held).status, 200);
  assert.deepEqual(changes, ['isolated:isolated', 'closed:released']);
  const ff = createGate({ mode: 'fail-fast' });
  ff.isolate('x');
  const err = await ff.run('x', async () => 1).catch((e) => e);
  assert.ok(err instanceof BrokenCircuitError && err.isolated && err.retryAfterMs === Infinity, String(err));
  gate.free();
  ff.free();
});

test('toJSON() / restore(): an open circuit carried to another gate (another isolate) stays open until its round ends', async () => {
  const p = path('carry');
  srv.script(p, [{ status: 503 }, { status: 200, body: 'probe ok' }]);
  const a = createGate({ ...ROUNDS, baseMs: 200, consecutive: 1, mode: 'fail-fast', key: () => 'api' });
  const f = withBackoff(fetch, { maxAttempts: 1, gate: a });
  assert.equal((await f(url(p))).status, 503);
  const text = JSON.stringify(a);
  const saved = JSON.parse(text);
  assert.equal(saved.version, 1);
  assert.equal(saved.targets.api.state, 'open');
  assert.equal(saved.targets.api.round, 1);
  a.free();

  const b = createGate({ ...ROUNDS, baseMs: 200, consecutive: 1, mode: 'fail-fast', key: () => 'api' });
  b.restore(JSON.parse(text));
  const g = withBackoff(fetch, { maxAttempts: 1, gate: b });
  const err = await g(url(p)).catch((e) => e);
  assert.ok(err instanceof BrokenCircuitError, 'still open in the new gate');
  assert.equal(srv.count(p), 1);
  await new Promise((r) => setTimeout(r, err.retryAfterMs + 5));
  assert.equal(await (await g(url(p))).text(), 'probe ok');
  assert.deepEqual(b.toJSON().targets, {}, 'closed and clean: nothing to carry');

  // A closed target's failure count comes along too: the 3rd failure in a row trips.
  const c = createGate({ ...ROUNDS, consecutive: 3 });
  const q = path('count');
  srv.script(q, { status: 500 });
  for (let i = 0; i < 2; i++) await c.run('k', () => Promise.reject(new Error('down')), { maxAttempts: 1 }).catch(() => {});
  const d = createGate({ ...ROUNDS, consecutive: 3 }); // (a 40 ms round: not over when state() reads it)
  d.restore(JSON.parse(JSON.stringify(c)));
  await d.run('k', () => Promise.reject(new Error('down')), { maxAttempts: 1 }).catch(() => {});
  assert.equal(d.state('k').state, 'open');
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
  const p = path('syncabort');
  srv.script(p, [{ status: 503 }, { status: 200 }, { status: 200 }]);
  const gate = createGate({ ...ROUNDS, consecutive: 1, key: () => 's' });
  const f = withBackoff(fetch, { baseMs: 1, jitter: 'none', gate });
  const ac = new AbortController();
  // The first call fails and starts a round; the second is held. When the
  // probe (the first call) succeeds, its onDone aborts the second, which the
  // gate has just released.
  const first = f(url(p), undefined, { onDone: () => ac.abort(new Error('stop')) });
  while (gate.state('s').state === 'closed') await new Promise((r) => setTimeout(r, 1));
  const second = f(url(p), { signal: ac.signal }).catch((e) => e);
  assert.equal((await first).status, 200);
  const got = await second;
  assert.equal(got?.message, 'stop');
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(srv.count(p), 2, 'the aborted call sent nothing');
  gate.free();
});

test('a healthy burst with concurrency set is queued, never refused by maxQueued', async () => {
  const p = path('burst');
  srv.script(p, { status: 200, body: 'ok' });
  const gate = createGate({ concurrency: 4, maxQueued: 10 });
  const f = withBackoff(fetch, { gate });
  const res = await Promise.all(Array.from({ length: 300 }, () => f(url(p)).then((r) => r.status)));
  assert.ok(
    res.every((s) => s === 200),
    `${res.filter((s) => s !== 200).length} refused`,
  );
  assert.equal(gate.stats().evictions, 0);
  gate.free();
});

test("limit: 'adaptive' — a 429 naming a wait delays that call's retry only; a deadline shorter than the token wait is refused unsent", async () => {
  const p = path('throttle');
  const times = [];
  let n = 0;
  srv.script(p, () => {
    times.push(performance.now());
    return n++ === 10 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200, body: 'ok' };
  });
  const gate = createGate({ limit: 'adaptive', consecutive: Infinity, key: () => 'lim' });
  const f = withBackoff(fetch, { maxAttempts: 1, gate });
  for (let i = 0; i < 10; i++) assert.equal((await f(url(p))).status, 200); // (what the server takes: the cut's base)
  const t0 = performance.now();
  assert.equal((await f(url(p))).status, 429);
  // A new call (a first attempt) does not wait for the server's second (issue 24).
  assert.equal((await f(url(p))).status, 200);
  assert.ok(times[11] - t0 < 900, `the next request went out after ${(times[11] - t0).toFixed(0)} ms`);
  // Calls queued on the throttled limiter: one whose deadline ends before its token (and a round trip) is refused at once, unsent.
  // (ten throttles in a row, each sent after the last cut: ten cuts, to well below 50 req/s; throttles sent
  // together would cut once, and a token 20 ms away may still be saved up)
  srv.script(p, { status: 429, headers: { 'retry-after': '2' } });
  for (let i = 0; i < 10; i++) await f(url(p));
  const sent = srv.count(p);
  const err = await f(url(p), undefined, { maxElapsedMs: 20 }).catch((e) => e);
  assert.equal(err?.name, 'GateTimeoutError');
  assert.equal(srv.count(p), sent);
  gate.free();
});

test('AdaptiveLimiter alone: off until throttled, then reservations one token apart; abort and maxWaitMs give the token back', async () => {
  const before = timers();
  const l = createLimiter();
  assert.equal(l.rate, Infinity);
  await l.acquire(); // off: at once
  for (let i = 0; i < 20; i++) l.record(false);
  const rate = l.record(true);
  assert.ok(rate >= 0.5 && rate < Infinity, `rate ${rate}`);
  await assert.rejects(l.acquire({ maxWaitMs: 0 }), (e) => e instanceof RangeError && /maxWaitMs/.test(e.message));
  const ac = new AbortController();
  const p = l.acquire({ signal: ac.signal });
  ac.abort(new Error('no'));
  await assert.rejects(p, /no/);
  assert.throws(() => l.record('yes'), TypeError);
  assert.throws(() => l.record(true, -1), RangeError);
  l.free();
  assert.throws(() => l.rate, TypeError);
  assert.equal(timers(), before, 'no timer left behind');
});
