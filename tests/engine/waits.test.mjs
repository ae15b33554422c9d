// The waits the outcome chooses, under the one loop on fake time, from the
// js/ sources: the `delay` hook (what it is told, when it is asked, what its
// answer does, on the plain lane and through a gate), the throttling base,
// a wait carried by an error in retry(fn), `retryOnTimeout`,
// `retryAfterOverMax`, and pacing after `RateLimit-Remaining: 0` (per
// origin in a withBackoff client). Fetch here is a stub answering at once:
// the real HTTP paths are tests/fetch/waits-checks.mjs.
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { Call, drive } from '../../js/engine/loop.js';
import { scheduled } from '../../js/engine/schedule.js';
import { task } from '../../js/engine/task.js';
import { config, snapshot } from '../../js/fetch/options.js';
import { withBackoff } from '../../js/fetch/index.js';
import { paceFor } from '../../js/engine/schedule.js';
import { createGate } from '../../js/gate/index.js';
import { Backoff } from '../../js/backoff.js';
import { install } from './clock.mjs';

/** @type {ReturnType<typeof install>} */
let clock;
beforeEach(() => (clock = install()));
afterEach(() => clock.off());

/** retry(fn) as the driver runs it. */
const retrying = (fn, options, signal) => drive(new Call(config(snapshot(options)), signal), task(fn), scheduled);

/** A fetch stub: answers `steps` in turn (the last repeats), logging the fake time and URL of each request. */
function server(steps) {
  const log = [];
  const send = async (input, init) => {
    const url = String(input);
    const s = steps[Math.min(log.length, steps.length - 1)];
    log.push([clock.now(), url]);
    if (s instanceof Error) throw s;
    if (s === 'hang') {
      return new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(init.signal.reason)));
    }
    return new Response(null, { status: s.status ?? 200, headers: s.headers });
  };
  return { send, log };
}

test('delay: told the attempt, the outcome, the server’s wait and the schedule’s proposal; its number is the wait', async () => {
  const schedule = { baseMs: 100, jitter: 'full', seed: 7 };
  const proposals = [...new Backoff({ ...schedule, maxAttempts: 3 })];
  const errors = [new Error('a'), new Error('b')];
  const infos = [];
  let n = 0;
  const p = retrying(
    () => {
      if (n < 2) throw errors[n++];
      return 'ok';
    },
    { ...schedule, delay: (i) => (infos.push(i), 1000 * i.attempt) },
  );
  assert.equal(await clock.run(p), 'ok');
  assert.deepEqual(clock.asked, [1000, 2000], 'the waits are the hook’s');
  assert.deepEqual(
    infos.map((i) => [i.attempt, i.error, i.delayMs, i.retryAfterMs, i.status]),
    [
      [1, errors[0], proposals[0], undefined, undefined],
      [2, errors[1], proposals[1], undefined, undefined],
    ],
  );
});

test('delay: undefined keeps the proposal; false ends the call (vetoed) with the last outcome; a bad answer is a hook error', async () => {
  const s = server([{ status: 500 }, { status: 502 }, { status: 200 }]);
  const f = withBackoff(s.send, { baseMs: 10, jitter: 'none' });
  let done;
  const kept = await clock.run(f('http://a.test/', undefined, { delay: () => undefined, onDone: (d) => (done = d) }));
  assert.equal(kept.status, 200);
  assert.deepEqual(clock.asked, [10, 20]);
  assert.equal(done.reason, 'success');

  const t = server([{ status: 503 }]);
  const g = withBackoff(t.send, { baseMs: 10 });
  const last = await clock.run(g('http://a.test/', undefined, { delay: () => false, onDone: (d) => (done = d) }));
  assert.equal(last.status, 503);
  assert.equal(t.log.length, 1);
  assert.equal(done.reason, 'vetoed');

  for (const [bad, E] of [
    ['1', TypeError],
    [null, TypeError],
    [-5, RangeError],
    [Number.NaN, RangeError],
  ]) {
    const u = server([{ status: 503 }, { status: 200 }]);
    const e = await clock
      .run(withBackoff(u.send)('http://a.test/', undefined, { delay: () => bad, onDone: (d) => (done = d) }))
      .catch((x) => x);
    assert.ok(e instanceof E && /^delay must return/.test(e.message), `${String(bad)}: ${e}`);
    assert.equal(done.reason, 'hook-error');
    assert.equal(u.log.length, 1);
    assert.equal(clock.timers(), 0, 'nothing left pending');
  }
  const boom = new Error('boom');
  const v = server([{ status: 503 }]);
  const e = await clock
    .run(
      withBackoff(v.send)('http://a.test/', undefined, {
        delay: () => {
          throw boom;
        },
      }),
    )
    .catch((x) => x);
  assert.equal(e, boom, 'what the hook threw');
});

test('delay: not asked when the schedule is exhausted or the server’s wait is over the maximum; the deadline bounds the wait it chose', async () => {
  let asked = 0;
  const delay = () => (asked++, 5);
  const s = server([{ status: 503 }]);
  await clock.run(withBackoff(s.send)('http://a.test/', undefined, { maxAttempts: 2, delay }));
  assert.equal(asked, 1, 'one retry, one question');

  const t = server([{ status: 429, headers: { 'retry-after': '120' } }]);
  let done;
  const r = await clock.run(withBackoff(t.send)('http://a.test/', undefined, { delay, onDone: (d) => (done = d) }));
  assert.equal(r.status, 429);
  assert.equal(asked, 1, 'a wait over maxRetryAfterMs ends the call first');
  assert.equal(done.reason, 'retry-after');

  // The proposal (400 ms) would end past the deadline, the hook's 10 ms does not; its 200 ms would.
  const u = server([{ status: 503 }, { status: 200 }]);
  const ok = await clock.run(
    withBackoff(u.send)('http://a.test/', undefined, { baseMs: 400, jitter: 'none', maxElapsedMs: 150, delay: () => 10 }),
  );
  assert.equal(ok.status, 200);
  const w = server([{ status: 503 }, { status: 200 }]);
  const late = await clock.run(
    withBackoff(w.send)('http://a.test/', undefined, { baseMs: 1, maxElapsedMs: 150, delay: () => 200, onDone: (d) => (done = d) }),
  );
  assert.equal(late.status, 503);
  assert.equal(done.reason, 'deadline');
});

test('delay through a gate: its wait is the call’s own backoff below the threshold; false gives up (vetoed); a throw is a hook error', async () => {
  const gate = createGate({ baseMs: 100, jitter: 'none', consecutive: 5, key: () => 'k' });
  const s = server([{ status: 500 }, { status: 200 }]);
  const f = withBackoff(s.send, { gate, baseMs: 1000, jitter: 'none' });
  const res = await clock.run(f('http://a.test/', undefined, { delay: (i) => (assert.equal(i.delayMs, 1000), 30) }));
  assert.equal(res.status, 200);
  assert.deepEqual(
    s.log.map(([t]) => t),
    [0, 30],
  );
  let done;
  const t = server([{ status: 503 }]);
  const g = withBackoff(t.send, { gate });
  const last = await clock.run(g('http://a.test/', undefined, { delay: () => false, onDone: (d) => (done = d) }));
  assert.equal(last.status, 503);
  assert.equal(done.reason, 'vetoed');
  const boom = new Error('boom');
  const u = server([{ status: 503 }]);
  const e = await clock
    .run(
      withBackoff(u.send, { gate })('http://a.test/', undefined, {
        delay: () => {
          throw boom;
        },
        onDone: (d) => (done = d),
      }),
    )
    .catch((x) => x);
  assert.equal(e, boom);
  assert.equal(done.reason, 'hook-error');
  assert.equal(gate.state('k').inFlight, 0, 'the gate was told the outcome');
  gate.free();
});

test('delay returning a promise (it is synchronous): the call rejects with a TypeError naming delay; the promise’s rejection is handled and reported', async (t) => {
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  t.after(() => process.off('unhandledRejection', onUnhandled));
  const logged = t.mock.method(console, 'error', () => {});
  const gate = createGate({ baseMs: 100, consecutive: 5, key: () => 'k' });
  t.after(() => gate.free());
  const now = new Error('rejected at once');
  const later = new Error('rejected later');
  const hooks = {
    'an async hook that throws': async () => {
      throw now;
    },
    'a promise that rejects after 50 ms': () => new Promise((_, reject) => setTimeout(reject, 50, later)),
  };
  for (const [lane, extra] of [
    ['plain', {}],
    ['gate', { gate }],
  ]) {
    for (const [what, delay] of Object.entries(hooks)) {
      const s = server([{ status: 503 }, { status: 200 }]);
      let done;
      const e = await clock
        .run(withBackoff(s.send, extra)('http://a.test/', undefined, { delay, onDone: (d) => (done = d) }))
        .catch((x) => x);
      assert.ok(e instanceof TypeError && /^delay must return/.test(e.message), `${lane}, ${what}: ${e}`);
      assert.equal(done.reason, 'hook-error');
      assert.equal(s.log.length, 1, 'no retry');
      await clock.tick(100); // the hook's own timer fires: its promise rejects now
    }
  }
  assert.deepEqual(unhandled, [], 'no unhandled rejection');
  const reported = logged.mock.calls.map((c) => c.arguments.at(-1));
  assert.deepEqual(reported, [now, later, now, later], 'each rejection went to console.error');
});

test('throttleBaseMs: 429 and 503 draw on it (default 10 × baseMs), other failures on the schedule’s base, one attempt count for both', async () => {
  const s = server([{ status: 500 }, { status: 429 }, new TypeError('fetch failed'), { status: 503 }, { status: 200 }]);
  const f = withBackoff(s.send, { baseMs: 10, jitter: 'none', throttleBaseMs: 1000, maxDelayMs: 60_000 });
  const res = await clock.run(f('http://a.test/'));
  assert.equal(res.status, 200);
  assert.deepEqual(clock.asked, [10, 2000, 40, 8000], 'steps 1-4 of one schedule, on each attempt’s base');
  // Without it, 10 × the schedule's base (a preset's too); throttleBaseMs equal to baseMs: one base (the behaviour before).
  clock.asked.length = 0;
  const t = server([{ status: 429 }, { status: 503 }, { status: 500 }, { status: 200 }]);
  await clock.run(withBackoff(t.send, { baseMs: 10, jitter: 'none' })('http://a.test/'));
  assert.deepEqual(clock.asked, [100, 200, 40]);
  clock.asked.length = 0;
  const u = server([{ status: 429 }, { status: 200 }]);
  await clock.run(withBackoff(u.send, { preset: 'aws', jitter: 'none' })('http://a.test/'));
  const aws = [...new Backoff({ preset: 'aws', jitter: 'none', maxAttempts: 2 })][0];
  assert.deepEqual(clock.asked, [10 * aws]);
  clock.asked.length = 0;
  const w = server([{ status: 429 }, { status: 200 }]);
  await clock.run(withBackoff(w.send, { baseMs: 10, jitter: 'none', throttleBaseMs: 10 })('http://a.test/'));
  assert.deepEqual(clock.asked, [10]);
  // retry(fn): the error's status picks the base.
  clock.asked.length = 0;
  let n = 0;
  const v = retrying(
    () => {
      if (n++ === 0) throw Object.assign(new Error('slow down'), { status: 429 });
      return 'ok';
    },
    { baseMs: 10, jitter: 'none', throttleBaseMs: 500 },
  );
  assert.equal(await clock.run(v), 'ok');
  assert.deepEqual(clock.asked, [500]);
});

test('retry(fn): the wait an error carries is a floor (retryAfterMs, headers, response.headers); over the maximum it ends the call', async () => {
  for (const [error, floor] of [
    [Object.assign(new Error('x'), { retryAfterMs: 3000 }), 3000],
    [Object.assign(new Error('x'), { headers: new Headers({ 'retry-after': '2' }) }), 2000],
    [Object.assign(new Error('x'), { response: { headers: new Headers({ 'retry-after-ms': '1500' }) } }), 1500],
    [Object.assign(new Error('x'), { headers: { 'Retry-After-Ms': '1200' } }), 1200],
  ]) {
    clock.asked.length = 0;
    let n = 0;
    const infos = [];
    const p = retrying(
      () => {
        if (n++ === 0) throw error;
        return 'ok';
      },
      { baseMs: 1, onRetry: (i) => infos.push(i) },
    );
    assert.equal(await clock.run(p), 'ok');
    assert.equal(infos[0].retryAfterMs, floor);
    assert.ok(clock.asked[0] >= floor && clock.asked[0] <= floor * 1.1, `${clock.asked[0]} for ${floor}`);
  }
  let done;
  const e = await clock
    .run(
      retrying(
        () => {
          throw Object.assign(new Error('much later'), { retryAfterMs: 120_000 });
        },
        { onDone: (d) => (done = d) },
      ),
    )
    .catch((x) => x);
  assert.equal(e.message, 'much later');
  assert.equal(done.reason, 'retry-after');
});

test('retryOnTimeout: false — a timed-out attempt ends the call (fetch and retry(fn)); other failures still retried', async () => {
  let done;
  const s = server(['hang', { status: 200 }]);
  const e = await clock
    .run(withBackoff(s.send, { timeoutMs: 100, retryOnTimeout: false })('http://a.test/', undefined, { onDone: (d) => (done = d) }))
    .catch((x) => x);
  assert.equal(e.name, 'TimeoutError');
  assert.equal(s.log.length, 1);
  assert.equal(done.reason, 'not-retryable');
  const t = server(['hang', { status: 200 }]);
  const ok = await clock.run(withBackoff(t.send, { timeoutMs: 100, baseMs: 1 })('http://a.test/'));
  assert.equal(ok.status, 200, 'retried by default');

  let n = 0;
  const r = await clock
    .run(
      retrying(
        ({ signal }) => {
          n++;
          return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
        },
        { timeoutMs: 50, retryOnTimeout: false, onDone: (d) => (done = d) },
      ),
    )
    .catch((x) => x);
  assert.equal(r.name, 'TimeoutError');
  assert.equal(n, 1);
  assert.equal(done.reason, 'not-retryable');
  let m = 0;
  const flaky = retrying(
    () => {
      if (m++ === 0) throw new Error('flaky');
      return 'ok';
    },
    { baseMs: 1, timeoutMs: 50, retryOnTimeout: false },
  );
  assert.equal(await clock.run(flaky), 'ok', 'a rejection that is no timeout is retried');
  assert.equal(clock.timers(), 0);
});

test("retryAfterOverMax: 'clamp' waits maxRetryAfterMs (plus its jitter) instead of giving up", async () => {
  const s = server([{ status: 503, headers: { 'retry-after': '3600' } }, { status: 200 }]);
  const infos = [];
  const res = await clock.run(
    withBackoff(s.send, { maxRetryAfterMs: 2000, retryAfterOverMax: 'clamp' })('http://a.test/', undefined, {
      onRetry: (i) => infos.push(i),
    }),
  );
  assert.equal(res.status, 200);
  assert.equal(infos[0].retryAfterMs, 2000, 'told the wait honoured');
  assert.ok(clock.asked[0] >= 2000 && clock.asked[0] <= 2200, String(clock.asked[0]));
  // Through a gate the same.
  const gate = createGate({ baseMs: 10, consecutive: 5 });
  const t = server([{ status: 503, headers: { 'retry-after': '3600' } }, { status: 200 }]);
  const g = await clock.run(withBackoff(t.send, { gate, maxRetryAfterMs: 2000, retryAfterOverMax: 'clamp' })('http://a.test/'));
  assert.equal(g.status, 200);
  const gap = t.log[1][0] - t.log[0][0];
  assert.ok(gap >= 2000 && gap <= 2200, String(gap));
  gate.free();
});

test('pacing: a success saying none remains holds the client’s next call to that origin until the reset; other origins and other clients go', async () => {
  const s = server([{ status: 200, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' } }, { status: 200 }]);
  const f = withBackoff(s.send);
  await clock.run(f('http://a.test/one'));
  const other = f('http://b.test/x');
  const same = f('http://a.test/two');
  const fresh = withBackoff(s.send)('http://a.test/three');
  await clock.run(Promise.all([other, fresh]));
  assert.deepEqual(
    s.log.map(([t, u]) => `${u}@${t}`),
    ['http://a.test/one@0', 'http://b.test/x@0', 'http://a.test/three@0'],
  );
  await clock.run(same);
  assert.equal(s.log.at(-1).join(' '), '30000 http://a.test/two', 'held until the reset');
  // After the reset: no hold. A success with requests left: none either.
  await clock.run(f('http://a.test/four'));
  assert.equal(s.log.at(-1)[0], 30000);
  // Relative URLs and Requests are paced by their origin too.
  const t = server([{ status: 200, headers: { 'ratelimit-remaining': '0', 'ratelimit-reset': '5' } }, { status: 200 }]);
  const g = withBackoff(t.send);
  await clock.run(g(new Request('http://c.test/a')));
  const held = g('http://c.test/b');
  await clock.run(held);
  assert.equal(t.log.at(-1)[0] - t.log[0][0], 5000);
});

test('pacing: the per-origin record keeps only the origins holding now (a client that paced 200 origins does not keep them)', async () => {
  const at = new Map();
  for (let i = 0; i < 200; i++) {
    paceFor(at, `http://o${i}.test`, 1000);
    await clock.tick(2000);
  }
  assert.equal(at.size, 1, 'the last one only');
  paceFor(at, 'http://x.test', 5000);
  paceFor(at, 'http://x.test', 3000);
  assert.deepEqual([...at.keys()], ['http://x.test'], 'the past entry let go, the origin paced again kept once');
  assert.equal(at.get('http://x.test'), Date.now() + 3000);
});

test('pacing: an abort while held rejects at once and leaves no timer; the deadline cuts a hold short', async () => {
  const s = server([{ status: 200, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' } }]);
  const f = withBackoff(s.send);
  await clock.run(f('http://a.test/'));
  const ac = new AbortController();
  const p = f('http://a.test/', { signal: ac.signal });
  p.catch(() => {});
  await clock.tick(10);
  ac.abort(new Error('stop'));
  const e = await clock.run(p).catch((x) => x);
  assert.equal(e.message, 'stop');
  assert.equal(s.log.length, 1, 'nothing sent');
  const d = await clock.run(f('http://a.test/', undefined, { maxElapsedMs: 100 })).catch((x) => x);
  assert.equal(d.name, 'TimeoutError');
  assert.equal(clock.timers(), 0);
});
