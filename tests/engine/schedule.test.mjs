// The plain lane (js/engine/schedule.js) under the one loop, with the real
// jobs (js/engine/task.js for retry(fn), js/fetch/request.js for fetch) on
// fake time: its waits are the call's seeded schedule, an abort or the
// deadline ends a call at once and leaves no timer, a wait past the
// deadline is never started, the budget may refuse a retry.
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Call, drive } from '../../js/engine/loop.js';
import { scheduled } from '../../js/engine/schedule.js';
import { task } from '../../js/engine/task.js';
import { FetchJob } from '../../js/fetch/request.js';
import { config, snapshot } from '../../js/fetch/options.js';
import { Backoff } from '../../js/backoff.js';
import { already, install, settled, T0 } from './clock.mjs';

/** @type {ReturnType<typeof install>} */
let clock;
beforeEach(() => (clock = install()));
afterEach(() => clock.off());

/**
 * retry(fn) as the driver runs it: `fn` on the plain lane, options as given.
 * @param {(ctx: { attempt: number, signal?: AbortSignal }) => unknown} fn
 * @param {Record<string, unknown>} options
 * @param {AbortSignal} [signal]
 */
const retrying = (fn, options, signal) => drive(new Call(config(snapshot(options)), signal), task(fn), scheduled);

/** A function that fails `n` times (recording the fake time of each attempt), then answers 'ok'. */
function flaky(n) {
  const at = [];
  const errors = [];
  const fn = () => {
    at.push(clock.now());
    if (at.length > n) return 'ok';
    const e = new Error(`fail ${at.length}`);
    errors.push(e);
    throw e;
  };
  return { fn, at, errors };
}

test("the plain lane's waits are the call's seeded schedule, in fake time", async () => {
  const schedule = { baseMs: 1000, maxDelayMs: 60_000, jitter: 'full', seed: 42, maxAttempts: 5 };
  const expected = [...new Backoff(schedule)].slice(0, 4);
  assert.equal(expected.length, 4);
  assert.ok(new Set(expected).size > 1, 'seeded full jitter: not one repeated number');
  const { fn, at } = flaky(4);
  const retries = [];
  const t0 = performance.now();
  const p = retrying(fn, { ...schedule, onRetry: (i) => retries.push(i.delayMs) });
  assert.equal(await clock.run(p), 'ok');
  assert.deepEqual(clock.asked, expected, 'one timer per wait, of the schedule’s length, and no other');
  assert.deepEqual(retries, expected, 'onRetry is told the same delays');
  // (fake epoch times are fractional: their differences carry float rounding)
  const gaps = at.slice(1).map((t, i) => t - at[i]);
  for (const [i, g] of gaps.entries()) {
    assert.ok(Math.abs(g - expected[i]) < 1e-6, `attempt ${i + 2} starts ${expected[i]} ms after the last, not ${g}`);
  }
  const virtual = expected.reduce((a, b) => a + b);
  assert.ok(performance.now() - t0 < virtual / 4, `no real sleeping (${virtual} ms of fake time)`);
  assert.equal(clock.timers(), 0);
});

test('without a seed, each call draws its own delays (full jitter)', async () => {
  const schedule = { baseMs: 1000, maxDelayMs: 60_000, jitter: 'full', maxAttempts: 3 };
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const { fn, at } = flaky(2);
    await clock.run(retrying(fn, schedule));
    runs.push(
      at
        .slice(1)
        .map((t, j) => t - at[j])
        .join(),
    );
  }
  assert.equal(new Set(runs).size, 3, `three calls, three schedules: ${runs.join(' / ')}`);
});

test('an abort during a wait rejects with its reason at once, and leaves no timer', async () => {
  const ac = new AbortController();
  const { fn, at } = flaky(Infinity);
  let done;
  const p = retrying(fn, { baseMs: 500, jitter: 'none', maxAttempts: 5, onDone: (i) => (done = i) }, ac.signal);
  await clock.tick(100); // in the first wait (500 ms)
  assert.deepEqual(at, [0]);
  assert.equal(clock.timers(), 1, 'the wait’s timer');
  const reason = new Error('stop');
  ac.abort(reason);
  await assert.rejects(already(p, 'rejected with no time passing'), (e) => e === reason);
  assert.equal(clock.now(), 100);
  assert.equal(clock.timers(), 0, 'the wait’s timer is cleared');
  assert.deepEqual(done, { attempts: 1, elapsedMs: 100, reason: 'aborted', status: undefined, error: reason });
  await clock.tick(1000);
  assert.deepEqual(at, [0], 'nothing is sent after the abort');
});

test('an abort during an attempt rejects with its reason at once; the attempt’s signal is aborted', async () => {
  const ac = new AbortController();
  let sig;
  const p = retrying(
    ({ signal }) => {
      sig = signal;
      return new Promise(() => {}); // ignores its signal
    },
    { maxAttempts: 3 },
    ac.signal,
  );
  await clock.tick(10);
  const reason = new Error('stop');
  ac.abort(reason);
  await assert.rejects(already(p, 'rejected with no time passing'), (e) => e === reason);
  assert.equal(sig.aborted, true, 'what the attempt was given is aborted');
  assert.equal(sig.reason, reason);
  assert.equal(clock.timers(), 0);
});

test('maxElapsedMs ends an attempt in flight with a TimeoutError', async () => {
  let sig;
  let done;
  const p = retrying(
    ({ signal }) => {
      sig = signal;
      return new Promise(() => {});
    },
    { maxElapsedMs: 1000, onDone: (i) => (done = i) },
  );
  await clock.tick(999);
  assert.equal(await settled(p), false, 'still running 1 ms before the deadline');
  await clock.tick(1);
  await assert.rejects(
    already(p, 'at the deadline'),
    (e) => e instanceof DOMException && e.name === 'TimeoutError' && /maxElapsedMs/.test(e.message),
  );
  assert.equal(sig.aborted, true, 'the attempt’s signal is aborted');
  assert.equal(sig.reason.name, 'TimeoutError');
  assert.equal(done.reason, 'deadline');
  assert.equal(done.attempts, 1);
  assert.equal(done.elapsedMs, 1000);
  assert.equal(clock.timers(), 0);
});

test('a wait that would end past maxElapsedMs is not started: the call ends with the last error', async () => {
  // waits of 600, then 1,200 ms: the second would end at 1,800 > 1,000
  const { fn, at, errors } = flaky(Infinity);
  let done;
  const p = retrying(fn, { baseMs: 600, factor: 2, jitter: 'none', maxAttempts: 10, maxElapsedMs: 1000, onDone: (i) => (done = i) });
  await assert.rejects(clock.run(p), (e) => e === errors[1]);
  assert.deepEqual(at, [0, 600]);
  assert.equal(clock.now(), 600, 'ends when the second attempt fails, not at the deadline');
  assert.deepEqual(clock.asked, [1000, 600], 'the deadline’s timer and the first wait; no wait of 1,200 ms');
  assert.deepEqual(done, { attempts: 2, elapsedMs: 600, reason: 'deadline', status: undefined, error: errors[1] });
  assert.equal(clock.timers(), 0, 'the deadline’s timer is cleared');
});

test('the budget refusing a retry ends the call with the last error', async () => {
  const log = [];
  const budget = {
    deposit: (now) => log.push(['deposit', now]),
    withdraw: (now) => (log.push(['withdraw', now]), false),
  };
  const { fn, at, errors } = flaky(Infinity);
  let done;
  const p = retrying(fn, { maxAttempts: 5, budget, onDone: (i) => (done = i) });
  await assert.rejects(clock.run(p), (e) => e === errors[0]);
  assert.deepEqual(at, [0], 'one attempt');
  assert.deepEqual(log, [
    ['deposit', T0],
    ['withdraw', T0],
  ]);
  assert.equal(done.reason, 'budget');
  assert.equal(clock.timers(), 0);
});

test('a budget that allows it: the retry goes', async () => {
  const budget = { deposit() {}, withdraw: () => true };
  const { fn, at } = flaky(1);
  assert.equal(await clock.run(retrying(fn, { baseMs: 100, jitter: 'none', budget })), 'ok');
  assert.deepEqual(at, [0, 100]);
});

test('shouldRetry that throws ends the call with what it threw (hook-error)', async () => {
  const boom = new Error('shouldRetry threw');
  const { fn, at } = flaky(Infinity);
  let done;
  const p = retrying(fn, {
    shouldRetry: () => {
      throw boom;
    },
    onDone: (i) => (done = i),
  });
  await assert.rejects(clock.run(p), (e) => e === boom);
  assert.deepEqual(at, [0]);
  assert.equal(done.reason, 'hook-error');
  assert.equal(clock.timers(), 0);
});

test("the fetch job on the plain lane: a 503's Retry-After lifts the wait, and onRetry says so", async () => {
  const sent = [];
  const answers = [() => new Response('busy', { status: 503, headers: { 'retry-after': '3' } }), () => new Response('ok')];
  const send = async (input, init) => (sent.push([clock.now(), String(input), init?.signal]), answers[sent.length - 1]());
  const retries = [];
  let done;
  const c = config(snapshot({ baseMs: 100, jitter: 'none', onRetry: (i) => retries.push(i), onDone: (i) => (done = i) }));
  const p = drive(new Call(c, undefined), new FetchJob(c, send, 'https://a.test/x', undefined), scheduled);
  const res = await clock.run(p);
  assert.equal(await res.text(), 'ok');
  // the schedule's 100 ms lifted to the server's 3 s, with up to min(10 %, 1 s) of jitter above it
  const wait = sent[1][0];
  assert.equal(sent.length, 2);
  assert.ok(wait >= 3000 && wait <= 3300, `the second attempt ${wait} ms after the first`);
  assert.equal(retries.length, 1);
  assert.equal(retries[0].delayMs, clock.asked[0], 'onRetry is told the wait taken');
  assert.ok(Math.abs(retries[0].delayMs - wait) < 1e-6);
  assert.equal(retries[0].retryAfterMs, 3000);
  assert.equal(retries[0].status, 503);
  assert.deepEqual(
    { ...done, elapsedMs: undefined },
    { attempts: 2, elapsedMs: undefined, reason: 'success', status: 200, error: undefined },
  );
});

test("a Retry-After over maxRetryAfterMs ends the call at once ('retry-after') with that answer", async () => {
  const send = async () => new Response('busy', { status: 503, headers: { 'retry-after': '120' } });
  let done;
  const c = config(snapshot({ maxRetryAfterMs: 60_000, onDone: (i) => (done = i) }));
  const res = await clock.run(drive(new Call(c, undefined), new FetchJob(c, send, 'https://a.test/', undefined), scheduled));
  assert.equal(res.status, 503);
  assert.equal(done.reason, 'retry-after');
  assert.equal(clock.now(), 0);
  assert.equal(clock.timers(), 0);
});

test("a call leaves no listener on the caller's signal, however it ends", async () => {
  const ac = new AbortController();
  const opts = { baseMs: 100, jitter: 'none', timeoutMs: 50, maxElapsedMs: 10_000 };
  // succeeds after retries; every attempt linked the caller's signal to its own
  const { fn, at } = flaky(2);
  assert.equal(await clock.run(retrying(fn, opts, ac.signal)), 'ok');
  assert.equal(at.length, 3);
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0, 'after a success');
  // ends by an attempt's own timeout, retried until exhausted
  const hung = retrying(() => new Promise(() => {}), { ...opts, maxAttempts: 2 }, ac.signal);
  await assert.rejects(clock.run(hung), (e) => e.name === 'TimeoutError' && /timeoutMs/.test(e.message));
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0, 'after the attempts timed out');
  assert.equal(clock.timers(), 0);
});

test('a hook that rejects after the call was aborted is not an unhandled rejection', async () => {
  const unhandled = [];
  const on = (e) => unhandled.push(e);
  process.on('unhandledRejection', on);
  try {
    const ac = new AbortController();
    let reject;
    const p = retrying(() => Promise.reject(new Error('down')), { shouldRetry: () => new Promise((_, r) => (reject = r)) }, ac.signal);
    await clock.tick(0);
    assert.equal(typeof reject, 'function', 'shouldRetry is running');
    const reason = new Error('stop');
    ac.abort(reason);
    await assert.rejects(already(p, 'rejected at the abort'), (e) => e === reason);
    reject(new Error('late'));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', on);
  }
});
