// The waits the outcome chooses (issue 26) through the fetch driver and
// retry(fn), on the js/ sources in virtual time (tests/fetch/virtual.mjs):
// the `delay` hook, the throttling base, `x-should-retry`, a wait carried
// by an error in retry(fn), pacing after `RateLimit-Remaining: 0` (per
// origin, and through a gate), `retryOnTimeout` and `retryAfterOverMax`,
// each asserted to the millisecond. The engine's own unit tests of these
// rules are tests/engine/waits.test.mjs; that the headers are read from a
// real server's answer in every runtime, fetch-checks.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWithBackoff, retry, withBackoff } from '../../js/entries/main.js';
import { createGate } from '../../js/gate/index.js';
import { above, world } from './virtual.mjs';

test('the delay hook chooses the wait (told the server’s wait and the proposal); false gives up; junk is a hook error', async (t) => {
  const w = world(t, {
    '/delay': [
      { status: 503, headers: { 'retry-after': '30' } },
      { status: 200, body: 'ok' },
    ],
    '/delay-no': [503, 200],
    '/delay-bad': [503, 200],
  });
  const infos = [];
  const res = await w.run(
    fetchWithBackoff(w.url('/delay'), undefined, {
      baseMs: 5,
      delay: (info) => (infos.push({ ...info, response: info.response?.status }), 20),
    }),
  );
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'ok');
  assert.equal(infos.length, 1);
  const [i] = infos;
  assert.deepEqual([i.attempt, i.status, i.response, i.retryAfterMs], [1, 503, 503, 30_000]);
  assert.ok(above(i.delayMs, 30_000), `the proposal is the server's wait and its jitter: ${i.delayMs}`);
  assert.deepEqual(w.clock.asked, [20], "the hook's 20 ms, not Retry-After's 30 s");
  assert.deepEqual(w.times('/delay'), [0, 20]);

  let done;
  const last = await w.run(fetchWithBackoff(w.url('/delay-no'), undefined, { baseMs: 5, delay: () => false, onDone: (d) => (done = d) }));
  assert.equal(last.status, 503);
  assert.equal(w.count('/delay-no'), 1);
  assert.equal(done.reason, 'vetoed');

  const bad = await w.run(
    fetchWithBackoff(w.url('/delay-bad'), undefined, { baseMs: 5, delay: () => 'soon', onDone: (d) => (done = d) }).catch((e) => e),
  );
  assert.ok(bad instanceof TypeError && bad.message.startsWith('delay must return'), String(bad));
  assert.equal(done.reason, 'hook-error');
  assert.equal(w.count('/delay-bad'), 1);
  assert.deepEqual(w.clock.asked, [20], 'no other wait');
});

test('throttleBaseMs: a 429 waits on the throttling base, a 500 on the schedule’s', async (t) => {
  const w = world(t, { '/throttle': [500, 429, 200] });
  const waits = [];
  const res = await w.run(
    fetchWithBackoff(w.url('/throttle'), undefined, {
      baseMs: 2,
      jitter: 'none',
      throttleBaseMs: 100,
      onRetry: (i) => waits.push([i.status, i.delayMs]),
    }),
  );
  assert.equal(res.status, 200);
  // Attempt 1 (500): 2 ms; attempt 2 (429): the second step on base 100 (factor 2).
  assert.deepEqual(waits, [
    [500, 2],
    [429, 200],
  ]);
  assert.deepEqual(w.times('/throttle'), [0, 2, 202]);
});

test('throttleBaseMs defaults to 10 × baseMs for 429, 503 and 529; other failures wait on baseMs', async (t) => {
  const w = world(t, { '/mixed': [429, 503, 529, 500, 200] });
  const waits = [];
  await w.run(
    fetchWithBackoff(w.url('/mixed'), undefined, {
      baseMs: 3,
      jitter: 'none',
      maxDelayMs: 60_000,
      onRetry: (i) => waits.push([i.status, i.delayMs]),
    }),
  );
  assert.deepEqual(waits, [
    [429, 30],
    [503, 60],
    [529, 120],
    [500, 24],
  ]);
  assert.deepEqual(w.times('/mixed'), [0, 30, 90, 210, 234]);
});

test('x-should-retry: true retries a 404, false stops a 503 (even with Retry-After); shouldRetry has the last word', async (t) => {
  const w = world(t, {
    '/advice-yes': [{ status: 404, headers: { 'x-should-retry': 'true' } }, 200],
    '/advice-no': [{ status: 503, headers: { 'x-should-retry': 'false', 'retry-after': '0' } }, 200],
    '/advice-forced': [{ status: 503, headers: { 'x-should-retry': 'false' } }, 200],
  });
  const EXACT = { baseMs: 5, jitter: 'none' };
  const yes = await w.run(fetchWithBackoff(w.url('/advice-yes'), undefined, EXACT));
  assert.equal(yes.status, 200);
  assert.deepEqual(w.times('/advice-yes'), [0, 5]);
  let done;
  const no = await w.run(fetchWithBackoff(w.url('/advice-no'), undefined, { ...EXACT, onDone: (d) => (done = d) }));
  assert.equal(no.status, 503);
  assert.equal(w.count('/advice-no'), 1);
  assert.equal(done.reason, 'not-retryable');
  const forced = await w.run(
    fetchWithBackoff(w.url('/advice-forced'), undefined, { ...EXACT, shouldRetry: ({ status }) => (status === 503 ? true : undefined) }),
  );
  assert.equal(forced.status, 200);
  assert.equal(w.count('/advice-forced'), 2);
});

test('retry(fn) honours the wait an error carries (its headers, as the SDKs throw) and its x-should-retry', async (t) => {
  const w = world(t, {
    '/carried': [
      { status: 429, headers: { 'retry-after-ms': '150' } },
      { status: 200, body: 'ok' },
    ],
  });
  const call = async ({ signal }) => {
    const r = await fetch(w.url('/carried'), { signal });
    if (r.ok) return r.text();
    await r.body?.cancel();
    throw Object.assign(new Error(`status ${r.status}`), { status: r.status, headers: r.headers });
  };
  const retried = [];
  const v = await w.run(retry(call, { baseMs: 5, onRetry: (i) => retried.push([i.status, i.retryAfterMs, i.delayMs]) }));
  assert.equal(v, 'ok');
  assert.equal(retried.length, 1);
  const [[status, hint, delayMs]] = retried;
  assert.deepEqual([status, hint], [429, 150]);
  // (its status, 429, picks the throttled base: 50 ms, below the carried 150)
  assert.ok(above(delayMs, 150), `${delayMs}`);
  assert.deepEqual(w.times('/carried'), [0, Math.floor(delayMs)]);
  // A plain record of headers (the OpenAI/Anthropic v4 shape), saying not to retry.
  let n = 0;
  let done;
  const e = await w.run(
    retry(
      () => {
        n++;
        throw Object.assign(new Error('overloaded'), { status: 529, headers: { 'X-Should-Retry': 'false' } });
      },
      { baseMs: 5, onDone: (d) => (done = d) },
    ).catch((x) => x),
  );
  assert.equal(e.message, 'overloaded');
  assert.equal(n, 1);
  assert.equal(done.reason, 'not-retryable');
  // retryAfterMs over maxRetryAfterMs: rejected at once.
  n = 0;
  const from = w.at();
  await w
    .run(
      retry(
        () => {
          n++;
          throw Object.assign(new Error('later'), { retryAfterMs: 90_000 });
        },
        { baseMs: 5, onDone: (d) => (done = d) },
      ),
    )
    .catch(() => {});
  assert.equal(n, 1);
  assert.equal(done.reason, 'retry-after');
  assert.equal(w.at(), from, 'at once');
});

test('a success saying RateLimit-Remaining: 0 holds the client’s next call to that origin until exactly the reset', async (t) => {
  const paced = { status: 200, headers: { 'x-ratelimit-remaining': '0', 'retry-after-ms': '250' } };
  const long = { status: 200, headers: { 'x-ratelimit-remaining': '0', 'retry-after-ms': '3000' } };
  const w = world(t, {
    '/paced': [paced, 200],
    '/unpaced': [long, 200],
    '/over-max': [long, 200],
    '/paced-abort': { ...long, headers: { ...long.headers, 'retry-after-ms': '5000' } },
  });
  const FAST = { baseMs: 5 };
  const f = withBackoff(fetch, FAST);
  await (await w.run(f(w.url('/paced')))).text();
  await (await w.run(f(w.url('/paced')))).text();
  assert.deepEqual(w.times('/paced'), [0, 250], 'the next call waited for the reset');
  assert.deepEqual(w.clock.asked, [250]);
  // pace: false, and a plain fetchWithBackoff (it keeps nothing between calls), do not.
  const from = w.at();
  const g = withBackoff(fetch, { ...FAST, pace: false });
  await (await w.run(g(w.url('/unpaced')))).text();
  await (await w.run(g(w.url('/unpaced')))).text();
  await (await w.run(fetchWithBackoff(w.url('/unpaced'), undefined, FAST))).text();
  await (await w.run(fetchWithBackoff(w.url('/unpaced'), undefined, FAST))).text();
  assert.deepEqual(w.times('/unpaced'), [from, from, from, from]);
  // A reset past maxRetryAfterMs is not waited (the next call goes; the server's answer decides).
  const capped = withBackoff(fetch, { ...FAST, maxRetryAfterMs: 200 });
  await (await w.run(capped(w.url('/over-max')))).text();
  await (await w.run(capped(w.url('/over-max')))).text();
  assert.deepEqual(w.times('/over-max'), [from, from]);
  // An abort while held rejects at once with its reason.
  const h = withBackoff(fetch, FAST);
  await (await w.run(h(w.url('/paced-abort')))).text();
  const ac = new AbortController();
  const reason = new Error('stop');
  setTimeout(() => ac.abort(reason), 20);
  const e = await w.run(h(w.url('/paced-abort'), { signal: ac.signal }).catch((x) => x));
  assert.equal(e, reason);
  assert.equal(w.at() - from, 20, 'rejected as the abort came');
  assert.equal(w.count('/paced-abort'), 1);
  assert.deepEqual(w.clock.asked, [250, 20, 5000], 'only the paced holds, and the test’s own abort timer');
});

test('with a gate, the pause after RateLimit-Remaining: 0 holds the target’s next calls until the reset', async (t) => {
  const w = world(t, { '/paced-gate': [{ status: 200, headers: { ratelimit: '"default";r=0', 'retry-after-ms': '250' } }, 200] });
  const gate = createGate({ baseMs: 5, maxDelayMs: 20, key: () => 'api' });
  const f = withBackoff(fetch, { baseMs: 5, gate });
  await (await w.run(f(w.url('/paced-gate')))).text();
  await w.run(Promise.all([f(w.url('/paced-gate')), f(w.url('/paced-gate'))].map(async (x) => (await x).text())));
  assert.deepEqual(w.times('/paced-gate'), [0, 250, 250]);
  gate.free();
});

test('retryOnTimeout: false returns the first timeout; retryAfterOverMax: clamp waits the maximum', async (t) => {
  const w = world(t, { '/timeout-once': [{ hang: true }, 200], '/clamp': [{ status: 503, headers: { 'retry-after': '120' } }, 200] });
  let done;
  const e = await w.run(
    fetchWithBackoff(w.url('/timeout-once'), undefined, {
      baseMs: 5,
      timeoutMs: 200,
      retryOnTimeout: false,
      onDone: (d) => (done = d),
    }).catch((x) => x),
  );
  assert.equal(e?.name, 'TimeoutError');
  assert.deepEqual([done.reason, done.attempts], ['not-retryable', 1]);
  assert.equal(w.count('/timeout-once'), 1);
  assert.equal(w.at(), 200, 'at exactly timeoutMs');

  const infos = [];
  const res = await w.run(
    fetchWithBackoff(w.url('/clamp'), undefined, {
      baseMs: 5,
      maxRetryAfterMs: 150,
      retryAfterOverMax: 'clamp',
      onRetry: (i) => infos.push([i.retryAfterMs, i.delayMs]),
    }),
  );
  assert.equal(res.status, 200);
  assert.equal(infos[0][0], 150, 'clamped to the maximum');
  assert.ok(above(infos[0][1], 150), `${infos[0][1]}`);
  assert.deepEqual(w.times('/clamp'), [200, Math.floor(200 + infos[0][1])]);
});

test('every new option is checked: a TypeError or RangeError naming it, nothing sent', async (t) => {
  const w = world(t, { '/bad-waits': 200 });
  const cases = [
    [{ delay: 5 }, TypeError, 'delay'],
    [{ throttleBaseMs: '1s' }, TypeError, 'throttleBaseMs'],
    [{ throttleBaseMs: -1 }, RangeError, 'throttleBaseMs'],
    [{ throttleBaseMs: Infinity }, RangeError, 'throttleBaseMs'],
    [{ retryOnTimeout: 'no' }, TypeError, 'retryOnTimeout'],
    [{ retryAfterOverMax: 'wait' }, RangeError, 'retryAfterOverMax'],
    [{ retryAfterOverMax: true }, TypeError, 'retryAfterOverMax'],
    [{ pace: 0 }, TypeError, 'pace'],
  ];
  for (const [o, E, name] of cases) {
    const e = await fetchWithBackoff(w.url('/bad-waits'), undefined, o).catch((x) => x);
    assert.ok(e instanceof E && e.message.startsWith(name), `${JSON.stringify(o)}: ${e}`);
    const r = await retry(() => 1, o).catch((x) => x);
    assert.ok(r instanceof E && r.message.startsWith(name), `retry ${JSON.stringify(o)}: ${r}`);
  }
  assert.equal(w.count('/bad-waits'), 0);
});
