// The fetch driver's timing and policy, on the js/ sources, in virtual
// time (tests/fetch/virtual.mjs: the kit's clock and scriptedFetch as the
// global fetch): which outcomes are retried, how often, after exactly which
// waits (`clock.asked`, onRetry's delayMs) and at which virtual time each
// request went; Retry-After and the rate-limit headers' values, deadlines,
// timeouts, aborts in a wait, budgets, a gate's round, hooks and options.
// Each test leaves no timer pending. What differs between runtimes stays on
// the real scripted server in every runtime (fetch-checks.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { fetchWithBackoff, retry, withBackoff } from '../../js/entries/main.js';
import { RetryBudget } from '../../js/budget.js';
import { createGate } from '../../js/gate/index.js';
import { T0, above, quiet, unhandled, world } from './virtual.mjs';

/** No jitter, base 100 ms: the waits are exact (100, 200, 400, … and, for a 429/503, 10× that: 1000, 2000, …). */
const EXACT = { baseMs: 100, jitter: 'none' };

test('retries 503s and resolves with the first success, after exactly the throttled waits', async (t) => {
  const w = world(t, { '/flaky': [503, 503, { status: 200, body: 'ok' }] });
  const infos = [];
  const res = await w.run(fetchWithBackoff(w.url('/flaky'), undefined, { ...EXACT, onRetry: (i) => infos.push(i) }));
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'ok');
  assert.deepEqual(
    infos.map((i) => [i.attempt, i.status, i.delayMs]),
    [
      [1, 503, 1000],
      [2, 503, 2000],
    ],
  );
  assert.deepEqual(w.clock.asked, [1000, 2000], 'no other timer');
  assert.deepEqual(w.times('/flaky'), [0, 1000, 3000]);
  assert.equal(w.at(), 3000, 'resolved as the third answer came');
});

test('after the last attempt, resolves with the last response; onDone says so', async (t) => {
  const w = world(t, { '/down': { status: 502, body: 'last' } });
  let done;
  const res = await w.run(fetchWithBackoff(w.url('/down'), {}, { ...EXACT, maxAttempts: 3, onDone: (d) => (done = d) }));
  assert.equal(res.status, 502);
  assert.equal(await res.text(), 'last');
  assert.deepEqual(w.times('/down'), [0, 100, 300], 'a 502 waits on baseMs: 100, then 200');
  assert.deepEqual({ ...done }, { attempts: 3, elapsedMs: 300, reason: 'exhausted', status: 502, error: undefined });
});

test('default maxAttempts is 5; a 4xx other than 408/429 is returned at once; retryOn overrides', async (t) => {
  const w = world(t, { '/five': 500, '/notfound': [404, 200], '/custom': [404, 200] });
  await w.run(fetchWithBackoff(w.url('/five'), undefined, EXACT));
  assert.deepEqual(w.times('/five'), [0, 100, 300, 700, 1500], 'five attempts by default');
  const res = await w.run(fetchWithBackoff(w.url('/notfound'), undefined, EXACT));
  assert.equal(res.status, 404);
  assert.equal(w.count('/notfound'), 1);
  assert.deepEqual(w.clock.asked, [100, 200, 400, 800], 'no wait after the 404');
  const res2 = await w.run(fetchWithBackoff(w.url('/custom'), undefined, { ...EXACT, retryOn: [404] }));
  assert.equal(res2.status, 200);
  assert.deepEqual(w.times('/custom'), [1500, 1600]);
});

test('network errors are retried on baseMs; the last one is rejected with it', async (t) => {
  const w = world(t, { '/reset': ['reset', 'reset', 200], '/dead': 'reset' });
  let done;
  const res = await w.run(fetchWithBackoff(w.url('/reset'), undefined, { ...EXACT, onDone: (d) => (done = d) }));
  assert.equal(res.status, 200);
  assert.deepEqual(w.times('/reset'), [0, 100, 300]);
  assert.equal(done.attempts, 3);
  const err = await w
    .run(fetchWithBackoff(w.url('/dead'), undefined, { ...EXACT, maxAttempts: 2, onDone: (d) => (done = d) }))
    .catch((e) => e);
  assert.ok(err instanceof TypeError && err.message === 'fetch failed', String(err));
  assert.equal(done.attempts, 2);
  assert.equal(done.reason, 'exhausted');
  assert.equal(done.error, err);
  assert.deepEqual(w.times('/dead'), [300, 400]);
});

test('POST is not retried unless idempotent by key or by option; its body is the same on every attempt', async (t) => {
  const w = world(t, { '/post': [503, 201], '/postkey': [503, 503, 200], '/postopt': [503, 200] });
  let done;
  const res = await w.run(fetchWithBackoff(w.url('/post'), { method: 'POST', body: 'x' }, { ...EXACT, onDone: (d) => (done = d) }));
  assert.equal(res.status, 503);
  assert.equal(w.count('/post'), 1, 'a plain POST is sent once');
  assert.equal(done.reason, 'not-idempotent');
  assert.deepEqual(w.clock.asked, []);

  const body = JSON.stringify({ order: 42, note: 'é✓' });
  const init = { method: 'POST', body, headers: { 'Idempotency-Key': 'k-1', 'content-type': 'application/json' } };
  const res2 = await w.run(fetchWithBackoff(w.url('/postkey'), init, EXACT));
  assert.equal(res2.status, 200);
  assert.deepEqual(
    w.sent('/postkey').map((r) => [r.method, r.body, r.headers['idempotency-key'], r.at - T0]),
    [
      ['POST', body, 'k-1', 0],
      ['POST', body, 'k-1', 1000],
      ['POST', body, 'k-1', 3000],
    ],
  );

  const res3 = await w.run(
    fetchWithBackoff(w.url('/postopt'), { method: 'POST', body: new Uint8Array([1, 2, 3]) }, { ...EXACT, retryNonIdempotent: true }),
  );
  assert.equal(res3.status, 200);
  assert.deepEqual(
    w.sent('/postopt').map((r) => r.body),
    ['\x01\x02\x03', '\x01\x02\x03'],
  );
});

test('a Request input is cloned for each attempt, body included; a URL input', async (t) => {
  const w = world(t, { '/request': [500, 200], '/url': [500, 200] });
  const req = new Request(w.url('/request'), { method: 'PUT', body: 'put-body' });
  const res = await w.run(fetchWithBackoff(req, undefined, EXACT));
  assert.equal(res.status, 200);
  assert.deepEqual(
    w.sent('/request').map((r) => [r.method, r.body]),
    [
      ['PUT', 'put-body'],
      ['PUT', 'put-body'],
    ],
  );
  assert.equal(req.bodyUsed, false, "the caller's Request is left unread");
  const res2 = await w.run(fetchWithBackoff(new URL(w.url('/url')), undefined, EXACT));
  assert.equal(res2.status, 200);
  assert.equal(w.count('/url'), 2);
});

test('Retry-After (seconds or an HTTP-date) is the exact wait reported, and a floor of the wait', async (t) => {
  const date = new Date(T0 + 3000).toUTCString();
  const w = world(t, {
    '/seconds': [{ status: 429, headers: { 'retry-after': '2' } }, 200],
    '/date': [{ status: 429, headers: { 'retry-after': date } }, 200],
  });
  // (the date first: it names 3 s after T0, and is read at T0)
  for (const [p, want] of [
    ['/date', 3000],
    ['/seconds', 2000],
  ]) {
    const from = w.at();
    const infos = [];
    const res = await w.run(fetchWithBackoff(w.url(p), undefined, { ...EXACT, onRetry: (i) => infos.push(i) }));
    assert.equal(res.status, 200);
    assert.deepEqual(
      infos.map((i) => [i.attempt, i.status, i.retryAfterMs]),
      [[1, 429, want]],
      p,
    );
    const { delayMs } = infos[0];
    assert.ok(above(delayMs, want), `${p}: the wait is the server's plus at most 10 %: ${delayMs}`);
    assert.equal(w.clock.asked.at(-1), delayMs, 'the wait reported is the wait asked');
    assert.deepEqual(w.times(p), [Math.floor(from), Math.floor(from + delayMs)]);
  }
  assert.equal(w.clock.asked.length, 2);
});

test('Retry-After: 1 is a wait of one second, no less, then the retry', async (t) => {
  const w = world(t, { '/ra1': [{ status: 503, headers: { 'retry-after': '1' } }, 200] });
  let info;
  const call = fetchWithBackoff(w.url('/ra1'), undefined, { baseMs: 5, onRetry: (i) => (info = i) });
  await w.tick(999);
  assert.equal(await w.settled(call), false, 'still waiting at 999 ms');
  assert.equal(w.count('/ra1'), 1);
  const res = await w.run(call);
  assert.equal(res.status, 200);
  assert.equal(info.retryAfterMs, 1000);
  assert.ok(above(info.delayMs, 1000), `${info.delayMs}`);
  assert.deepEqual(w.clock.asked, [info.delayMs]);
  assert.deepEqual(w.times('/ra1'), [0, Math.floor(info.delayMs)]);
  assert.equal(w.clock.now(), T0 + info.delayMs);
});

test('Retry-After above maxRetryAfterMs returns that response at once; at it, is waited', async (t) => {
  const values = ['61', '120', '86400000', '1700000000'];
  const w = world(t, {
    ...Object.fromEntries(values.map((v) => [`/long-${v}`, [{ status: 429, headers: { 'retry-after': v } }, 200]])),
    '/max': [{ status: 429, headers: { 'retry-after': '2' } }, 200],
  });
  for (const value of values) {
    let done;
    const res = await w.run(fetchWithBackoff(w.url(`/long-${value}`), undefined, { ...EXACT, onDone: (d) => (done = d) }));
    assert.equal(res.status, 429, value);
    assert.equal(w.count(`/long-${value}`), 1, value);
    assert.equal(done.reason, 'retry-after', value);
  }
  assert.deepEqual(w.clock.asked, [], 'nothing waited');
  assert.equal(w.at(), 0);
  // A server's wait equal to maxRetryAfterMs is waited.
  const res = await w.run(fetchWithBackoff(w.url('/max'), undefined, { ...EXACT, maxRetryAfterMs: 2000 }));
  assert.equal(res.status, 200);
  assert.equal(w.count('/max'), 2);
  assert.ok(above(w.clock.asked[0], 2000), `${w.clock.asked}`);
});

test('a garbage or past Retry-After falls back to the backoff, exactly', async (t) => {
  const values = ['-3', 'soon', '1.5', 'Sun, 06 Nov 1994 08:49:37 GMT', ''];
  const w = world(t, Object.fromEntries(values.map((v, i) => [`/bad-${i}`, [{ status: 503, headers: { 'retry-after': v } }, 200]])));
  for (const [i, value] of values.entries()) {
    const infos = [];
    const res = await w.run(fetchWithBackoff(w.url(`/bad-${i}`), undefined, { ...EXACT, onRetry: (x) => infos.push(x) }));
    assert.equal(res.status, 200, JSON.stringify(value));
    assert.deepEqual(
      infos.map((x) => [x.retryAfterMs, x.delayMs]),
      [[undefined, 1000]],
      `${JSON.stringify(value)}: the throttled base's first step`,
    );
  }
  assert.deepEqual(w.clock.asked, [1000, 1000, 1000, 1000, 1000]);
});

test('timeoutMs: a hung first attempt is cut at exactly timeoutMs, then retried after baseMs', async (t) => {
  const w = world(t, { '/hang': [{ hang: true }, { status: 200, body: 'second' }] });
  const infos = [];
  const res = await w.run(fetchWithBackoff(w.url('/hang'), undefined, { ...EXACT, timeoutMs: 1000, onRetry: (i) => infos.push(i) }));
  assert.equal(await res.text(), 'second');
  assert.deepEqual(
    infos.map((i) => [i.error?.name, i.delayMs]),
    [['TimeoutError', 100]],
  );
  assert.deepEqual(w.clock.asked, [1000, 100, 1000], "each attempt's timeout, the wait between");
  assert.deepEqual(w.times('/hang'), [0, 1100]);
});

test('maxElapsedMs: no wait starts that would end at or past the deadline', async (t) => {
  const w = world(t, { '/deadline': 500 });
  // (a 500: a 503 is throttling, whose retries wait on 10 × baseMs)
  const plan = { strategy: 'constant', jitter: 'none', baseMs: 300, maxAttempts: 10 };
  for (const [maxElapsedMs, times, elapsedMs] of [
    [550, [0, 300], 300],
    [599, [0, 300], 300],
    // (a wait ending at the deadline would leave the attempt no time: its abort would meet it at once)
    [600, [0, 300], 300],
    [601, [0, 300, 600], 600],
  ]) {
    const from = w.at();
    let done;
    const res = await w.run(fetchWithBackoff(w.url('/deadline'), undefined, { ...plan, maxElapsedMs, onDone: (d) => (done = d) }));
    assert.equal(res.status, 500);
    assert.deepEqual(
      w
        .times('/deadline')
        .slice(-times.length)
        .map((x) => x - from),
      times,
      `maxElapsedMs ${maxElapsedMs}`,
    );
    assert.deepEqual([done.reason, done.attempts, done.elapsedMs], ['deadline', times.length, elapsedMs]);
    assert.equal(w.at() - from, elapsedMs, 'returned at once, not at the deadline');
  }
});

test('maxElapsedMs is a hard deadline: an attempt in flight is aborted with a TimeoutError at exactly the deadline', async (t) => {
  const w = world(t, { '/slow': [503, { status: 200, delayMs: 3000 }] });
  let done;
  const err = await w
    .run(fetchWithBackoff(w.url('/slow'), undefined, { baseMs: 10, jitter: 'none', maxElapsedMs: 300, onDone: (d) => (done = d) }))
    .then(
      (r) => `resolved ${r.status}`,
      (e) => e,
    );
  assert.ok(err instanceof DOMException && err.name === 'TimeoutError', String(err));
  assert.deepEqual([done.reason, done.error, done.attempts, done.elapsedMs], ['deadline', err, 2, 300]);
  assert.deepEqual(w.times('/slow'), [0, 100]);
  assert.equal(w.at(), 300);
});

test('an aborted signal sends nothing; an abort in a wait, an attempt or a hook rejects at once with the reason', async (t) => {
  const w = world(t, { '/pre': 200, '/wait': 503, '/during': { hang: true }, '/reqsignal': 200 });
  const reason = { why: 'user left' };
  assert.equal(await w.run(fetchWithBackoff(w.url('/pre'), { signal: AbortSignal.abort(reason) }).catch((e) => e)), reason);
  assert.equal(w.count('/pre'), 0);

  const ac = new AbortController();
  const reason2 = new Error('cancelled during the wait');
  const onRetry = () => setTimeout(() => ac.abort(reason2), 20);
  const opts = { strategy: 'constant', jitter: 'none', baseMs: 10_000, onRetry };
  const got = await w.run(fetchWithBackoff(w.url('/wait'), { signal: ac.signal }, opts).catch((e) => e));
  assert.equal(got, reason2);
  assert.equal(w.at(), 20, 'rejected as the abort came, not at the end of the 10 s wait');
  assert.equal(w.count('/wait'), 1, 'no further attempt');

  const ac3 = new AbortController();
  const reason3 = new Error('cancelled during the attempt');
  const during = fetchWithBackoff(w.url('/during'), { signal: ac3.signal }, EXACT).catch((e) => e);
  await w.tick(50);
  assert.equal(w.count('/during'), 1);
  ac3.abort(reason3);
  assert.equal(await w.run(during), reason3);
  assert.equal(w.at(), 70);

  const reason4 = new Error('request signal');
  const got4 = await w.run(fetchWithBackoff(new Request(w.url('/reqsignal'), { signal: AbortSignal.abort(reason4) })).catch((e) => e));
  assert.equal(got4, reason4, "a Request's own signal is honoured");
  assert.equal(w.count('/reqsignal'), 0);
});

test('shouldRetry can veto and force', async (t) => {
  const w = world(t, { '/veto': [503, 200], '/force': [409, 200] });
  const res = await w.run(fetchWithBackoff(w.url('/veto'), undefined, { ...EXACT, shouldRetry: () => false }));
  assert.equal(res.status, 503);
  assert.equal(w.count('/veto'), 1);
  const res2 = await w.run(
    fetchWithBackoff(w.url('/force'), undefined, { ...EXACT, shouldRetry: ({ status }) => (status === 409 ? true : undefined) }),
  );
  assert.equal(res2.status, 200);
  assert.deepEqual(w.times('/force'), [0, 100], 'a forced 409 waits on baseMs');
});

test('a shared RetryBudget stops retries when spent', async (t) => {
  const w = world(t, { '/budget': 503 });
  const budget = new RetryBudget({ minPerSec: 0.2, ttlMs: 10000, retryRatio: 0 }); // 2 retries per window, whatever the traffic
  const reasons = [];
  for (let i = 0; i < 3; i++) {
    await w.run(fetchWithBackoff(w.url('/budget'), undefined, { ...EXACT, maxAttempts: 3, budget, onDone: (d) => reasons.push(d.reason) }));
  }
  // 3 calls + 2 retries in all, then the budget says no (the window is 10 s: the calls end at 3 s).
  assert.deepEqual(w.times('/budget'), [0, 1000, 3000, 3000, 3000]);
  assert.deepEqual(reasons, ['exhausted', 'budget', 'budget']);
});

test('withBackoff wraps a fetch function and validates options when wrapping', async (t) => {
  const w = world(t, { '/wrap': [503, 200] });
  const f = withBackoff(fetch, EXACT);
  const res = await w.run(f(w.url('/wrap')));
  assert.equal(res.status, 200);
  assert.equal(w.count('/wrap'), 2);
  assert.throws(() => withBackoff(fetch, { retryOn: 'all' }), { name: 'TypeError', message: /^retryOn/ });
  assert.throws(() => withBackoff(fetch, { timeoutMs: -1 }), { name: 'RangeError', message: /^timeoutMs/ });
});

test("a Gate holds a target's calls: three fail together, one round, one probe at its end, the two others released", async (t) => {
  const w = world(t, { '/gated': [503, 503, 503, { status: 200, body: 'ok' }] });
  const gate = createGate({ baseMs: 300, maxDelayMs: 300, jitter: 'none', consecutive: 1, key: () => 'target' });
  const f = withBackoff(fetch, { ...EXACT, gate });
  const res = await w.run(Promise.all([f(w.url('/gated')), f(w.url('/gated')), f(w.url('/gated'))]));
  assert.deepEqual(
    res.map((r) => r.status),
    [200, 200, 200],
  );
  const { rounds, probes } = gate.stats();
  assert.deepEqual([rounds, probes], [1, 1]);
  assert.deepEqual(w.times('/gated'), [0, 0, 0, 300, 300, 300], '3 failures, the probe at the round’s end, 2 released after it');
  assert.equal(w.clock.asked[0], 300, 'the round');
  assert.equal(gate.state('target').state, 'closed');
  gate.free(); // (and with it the gate's idle timer)
});

test('bad options reject without sending anything', async (t) => {
  const w = world(t, { '/badopt': 200 });
  await assert.rejects(fetchWithBackoff(w.url('/badopt'), undefined, { baseMs: -1 }), { name: 'RangeError', message: /^baseMs/ });
  await assert.rejects(fetchWithBackoff(w.url('/badopt'), undefined, { onRetry: 1 }), { name: 'TypeError', message: /^onRetry/ });
  assert.equal(w.count('/badopt'), 0);
});

test("the caller's signal reaches the body, whatever timer the call had: an abort while it is read rejects the read", async (t) => {
  const w = world(t, { '/slowbody': { status: 200, body: 'head-and-tail', stallAfter: 5 } });
  for (const extra of [{ timeoutMs: 5000 }, { maxElapsedMs: 5000 }, {}]) {
    const ac = new AbortController();
    const res = await w.run(fetchWithBackoff(w.url('/slowbody'), { signal: ac.signal }, { ...EXACT, ...extra }));
    const reason = new Error('stop reading');
    const reading = res.text().then(
      () => 'read on',
      (e) => e,
    );
    ac.abort(reason);
    assert.equal(await w.run(reading), reason, JSON.stringify(extra));
  }
  assert.equal(w.at(), 0);
});

test("a request fetch cannot build, or a custom fetchFn's own error, is not retried", async (t) => {
  const w = world(t, { '/badheader': 503 });
  let retried = 0;
  const opts = { ...EXACT, onRetry: () => retried++ };
  const bad = await w.run(fetchWithBackoff('http://exa mple.invalid:99999/', undefined, opts).catch((e) => e));
  assert.ok(bad instanceof TypeError, `invalid URL: ${bad}`);
  const badHeader = await w.run(fetchWithBackoff(w.url('/badheader'), { headers: { 'x-bad': 'a\nb' } }, opts).catch((e) => e));
  assert.ok(badHeader instanceof TypeError, `bad header: ${badHeader}`);
  assert.equal(w.count('/badheader'), 0, 'nothing sent');
  let calls = 0;
  const boom = new TypeError('boom');
  const custom = withBackoff(() => {
    calls++;
    throw boom;
  }, opts);
  assert.equal(await w.run(custom(w.url('/badheader')).catch((e) => e)), boom);
  assert.equal(calls, 1);
  assert.equal(retried, 0);
  const forced = withBackoff(
    () => {
      calls++;
      throw boom;
    },
    { ...EXACT, maxAttempts: 3, shouldRetry: ({ error }) => error === boom },
  );
  calls = 0;
  assert.equal(await w.run(forced(w.url('/badheader')).catch((e) => e)), boom);
  assert.equal(calls, 3);
  assert.deepEqual(w.clock.asked, [100, 200]);
});

test('an async shouldRetry is awaited; an abort while it runs rejects at once', async (t) => {
  const w = world(t, { '/asyncshould': [503, 200], '/asyncforce': [404, 200], '/asyncabort': 503 });
  let done;
  const res = await w.run(
    fetchWithBackoff(w.url('/asyncshould'), undefined, {
      ...EXACT,
      shouldRetry: async ({ status }) => (status === 503 ? false : undefined),
      onDone: (d) => (done = d),
    }),
  );
  assert.equal(res.status, 503);
  assert.equal(w.count('/asyncshould'), 1);
  assert.equal(done.reason, 'vetoed');
  const res2 = await w.run(fetchWithBackoff(w.url('/asyncforce'), undefined, { ...EXACT, shouldRetry: async () => true, maxAttempts: 2 }));
  assert.equal(res2.status, 200);
  assert.equal(w.count('/asyncforce'), 2);
  const ac = new AbortController();
  const reason = new Error('gone');
  const pending = fetchWithBackoff(
    w.url('/asyncabort'),
    { signal: ac.signal },
    {
      shouldRetry: () => {
        ac.abort(reason);
        return new Promise(() => {}); // never settles
      },
    },
  );
  assert.equal(await w.run(pending.catch((e) => e)), reason);
  assert.equal(w.at(), 100);
});

test('rate-limit headers name the wait: retry-after-ms, X-RateLimit-Reset (delta and epoch), RateLimit, …; each waited', async (t) => {
  const epoch = String(T0 / 1000 + 30);
  const cases = [
    [{ 'retry-after-ms': '120' }, 120],
    [{ 'x-ratelimit-reset': epoch }, 30_000],
    [{ 'x-ratelimit-reset': '25' }, 25_000],
    [{ 'ratelimit-reset': '12' }, 12_000],
    [{ 'x-ms-retry-after-ms': '15000' }, 15_000],
    [{ 'x-ratelimit-retry-after': '14' }, 14_000],
    [{ ratelimit: '"default";r=0;t=13' }, 13_000],
    [{ 'x-rate-limit-reset': '11' }, 11_000],
    // (milliseconds win over a Retry-After beside them)
    [{ 'retry-after-ms': '150', 'retry-after': '9' }, 150],
  ];
  const w = world(t, Object.fromEntries(cases.map(([headers], i) => [`/rate-${i}`, [{ status: 429, headers }, 200]])));
  // (the epoch first: read at T0, it is exactly 30 s away)
  for (const i of [1, 0, ...[...cases.keys()].slice(2)]) {
    const [headers, want] = cases[i];
    const from = w.at();
    const infos = [];
    const res = await w.run(fetchWithBackoff(w.url(`/rate-${i}`), undefined, { ...EXACT, onRetry: (x) => infos.push(x) }));
    assert.equal(res.status, 200);
    const what = JSON.stringify(headers);
    assert.deepEqual(
      infos.map((x) => x.retryAfterMs),
      [want],
      what,
    );
    const { delayMs } = infos[0];
    // (a 429 waits at least the throttled base, 1000 ms, and at least the server's wait)
    assert.ok(above(delayMs, Math.max(want, 1000)), `${what}: ${delayMs}`);
    assert.equal(w.clock.asked.at(-1), delayMs);
    assert.deepEqual(w.times(`/rate-${i}`), [Math.floor(from), Math.floor(from + delayMs)], what);
  }
});

test('413, 429 and 503 are retried when the server names a wait; 413 alone is not', async (t) => {
  const w = world(t, {
    '/toolarge': [{ status: 413, headers: { 'retry-after': '0' } }, 200],
    '/toolarge2': [413, 200],
    '/unavail': [{ status: 503, headers: { 'retry-after-ms': '5' } }, 200],
  });
  assert.equal((await w.run(fetchWithBackoff(w.url('/toolarge'), undefined, EXACT))).status, 200);
  assert.equal(w.count('/toolarge'), 2);
  assert.equal((await w.run(fetchWithBackoff(w.url('/toolarge2'), undefined, EXACT))).status, 413);
  assert.equal(w.count('/toolarge2'), 1);
  const res3 = await w.run(fetchWithBackoff(w.url('/unavail'), undefined, { ...EXACT, retryOn: [500] }));
  assert.equal(res3.status, 200, '503 + a named wait outside retryOn');
  assert.equal(w.count('/unavail'), 2);
  // (413: not throttled, its 0 s wait lifted to baseMs; 503: throttled, the base is 1000 ms)
  assert.deepEqual(w.clock.asked, [100, 1000]);
});

test('hooks: a throwing decision hook rejects with its error; observers never change the outcome', async (t) => {
  const w = world(t, {
    '/hooks': { status: 200, body: 'fine' },
    '/hooksabort': 503,
    '/hooksretry': [503, 200],
    '/decide-0': [503, 200],
    '/decide-1': [503, 200],
  });
  const bug = new Error('hook bug');
  let res;
  const logged = await quiet(async () => {
    res = await w.run(
      fetchWithBackoff(w.url('/hooks'), undefined, {
        onDone: () => {
          throw bug;
        },
      }),
    );
  });
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'fine', 'a throwing onDone on a 200 still resolves');
  assert.equal(logged.length, 1);
  assert.ok(logged[0].includes(bug));
  // On an abort, the rejection is the signal's reason, not the hook's error.
  const ac = new AbortController();
  const reason = new Error('user abort');
  let err;
  const logged2 = await quiet(async () => {
    err = await w.run(
      fetchWithBackoff(
        w.url('/hooksabort'),
        { signal: ac.signal },
        {
          baseMs: 5000,
          onRetry: () => setTimeout(() => ac.abort(reason), 10),
          onDone: async () => {
            throw bug;
          },
        },
      ).catch((e) => e),
    );
  });
  assert.equal(err, reason);
  assert.equal(logged2.length, 1, 'the async onDone’s rejection is logged');
  assert.ok(logged2[0].includes(bug));
  // Async onRetry rejecting: reported, the call goes on.
  let res3;
  const logged3 = await quiet(async () => {
    res3 = await w.run(fetchWithBackoff(w.url('/hooksretry'), undefined, { ...EXACT, onRetry: () => Promise.reject(bug) }));
  });
  assert.equal(res3.status, 200);
  assert.equal(logged3.length, 1);
  // Decision hooks: shouldRetry and beforeRetry reject the call with their error.
  for (const [i, hooks] of [{ shouldRetry: () => Promise.reject(bug) }, { beforeRetry: () => Promise.reject(bug) }].entries()) {
    let done;
    const e = await w.run(
      fetchWithBackoff(w.url(`/decide-${i}`), undefined, { ...EXACT, ...hooks, onDone: (d) => (done = d) }).catch((x) => x),
    );
    assert.equal(e, bug, Object.keys(hooks)[0]);
    assert.equal(done.reason, 'hook-error');
    assert.equal(done.error, bug);
    assert.equal(w.count(`/decide-${i}`), 1, 'one request');
  }
});

test('options are copied when given: changing them later changes nothing', async (t) => {
  const w = world(t, { '/snapshot': 503 });
  const opts = { ...EXACT, maxAttempts: 3, retryOn: [503], jitter: { ratio: 0 } };
  const f = withBackoff(fetch, opts);
  opts.maxAttempts = -1;
  opts.retryOn.push('x');
  opts.jitter.ratio = 7;
  opts.baseMs = 1;
  const res = await w.run(f(w.url('/snapshot')));
  assert.equal(res.status, 503);
  assert.deepEqual(w.times('/snapshot'), [0, 1000, 3000]);
});

test('beforeRetry refreshes Authorization: the server sees the new token on attempt 2; a Request it returns replaces the request', async (t) => {
  const w = world(t, { '/refresh': [401, 200], '/swapped': 503, '/swapped-to': { status: 200, body: 'swapped' } });
  const seen = [];
  const res = await w.run(
    fetchWithBackoff(
      w.url('/refresh'),
      { headers: { authorization: 'Bearer old', 'x-keep': 'kept' } },
      {
        ...EXACT,
        retryOn: [401],
        beforeRetry: async ({ attempt, request, status }) => {
          seen.push([attempt, status, request.headers.get('authorization'), Date.now() - T0]);
          return { authorization: 'Bearer new' };
        },
      },
    ),
  );
  assert.equal(res.status, 200);
  assert.deepEqual(
    w.sent('/refresh').map((r) => [r.headers.authorization, r.headers['x-keep'], r.at - T0]),
    [
      ['Bearer old', 'kept', 0],
      ['Bearer new', 'kept', 100],
    ],
  );
  assert.deepEqual(seen, [[2, 401, 'Bearer old', 100]], 'asked after the wait, before attempt 2');
  const res2 = await w.run(
    fetchWithBackoff(w.url('/swapped'), undefined, { ...EXACT, beforeRetry: () => new Request(w.url('/swapped-to')) }),
  );
  assert.equal(await res2.text(), 'swapped');
  assert.deepEqual([w.count('/swapped'), w.count('/swapped-to')], [1, 1]);
  const e = await w.run(fetchWithBackoff(w.url('/swapped'), undefined, { ...EXACT, beforeRetry: () => 42 }).catch((x) => x));
  assert.ok(e instanceof TypeError && e.message.startsWith('beforeRetry'), String(e));
});

test('methods, idempotencyKey and attemptHeader', async (t) => {
  const w = world(t, { '/methods': 503, '/methodspost': [503, 200], '/idem': [503, 503, 201], '/more': 201 });
  await w.run(fetchWithBackoff(w.url('/methods'), { method: 'PUT' }, { ...EXACT, methods: ['GET'] }));
  assert.equal(w.count('/methods'), 1, 'PUT not retried with methods: [GET]');
  await w.run(fetchWithBackoff(w.url('/methodspost'), { method: 'POST', body: 'x' }, { ...EXACT, methods: ['post'] }));
  assert.equal(w.count('/methodspost'), 2, 'POST retried with methods: [post]');
  const res = await w.run(
    fetchWithBackoff(
      w.url('/idem'),
      { method: 'POST', body: 'order' },
      { ...EXACT, idempotencyKey: true, attemptHeader: 'amz-sdk-request', maxAttempts: 3 },
    ),
  );
  assert.equal(res.status, 201);
  const reqs = w.sent('/idem');
  const keys = reqs.map((x) => x.headers['idempotency-key']);
  assert.equal(new Set(keys).size, 1);
  assert.match(keys[0], /^[0-9a-f-]{36}$/);
  assert.deepEqual(
    reqs.map((x) => [x.body, x.headers['amz-sdk-request']]),
    [
      ['order', 'attempt=1; max=3'],
      ['order', 'attempt=2; max=3'],
      ['order', 'attempt=3; max=3'],
    ],
  );
  // A second call gets a key of its own; a GET needs none; the caller's is kept.
  await w.run(fetchWithBackoff(w.url('/more'), { method: 'POST', body: 'order' }, { ...EXACT, idempotencyKey: true }));
  await w.run(fetchWithBackoff(w.url('/more'), { method: 'GET' }, { ...EXACT, idempotencyKey: true }));
  await w.run(
    fetchWithBackoff(
      w.url('/more'),
      { method: 'POST', body: 'o', headers: { 'Idempotency-Key': 'mine' } },
      { ...EXACT, idempotencyKey: true },
    ),
  );
  const more = w.sent('/more').map((x) => x.headers['idempotency-key']);
  assert.match(more[0], /^[0-9a-f-]{36}$/);
  assert.notEqual(more[0], keys[0], 'one key per call');
  assert.deepEqual(more.slice(1), [undefined, 'mine']);
  await assert.rejects(fetchWithBackoff(w.url('/more'), undefined, { methods: 'GET' }), { name: 'TypeError', message: /^methods/ });
  await assert.rejects(fetchWithBackoff(w.url('/more'), undefined, { attemptHeader: 'a b' }), {
    name: 'RangeError',
    message: /^attemptHeader/,
  });
  await assert.rejects(fetchWithBackoff(w.url('/more'), undefined, { idempotencyKey: 'yes' }), {
    name: 'TypeError',
    message: /^idempotencyKey/,
  });
  assert.equal(w.count('/more'), 3);
});

test('per-call options and extend() merge over the wrapped options', async (t) => {
  const w = world(t, { '/percall': 503, '/extended': 503 });
  const f = withBackoff(fetch, { ...EXACT, maxAttempts: 2 });
  await w.run(f(w.url('/percall'), undefined, { maxAttempts: 4, baseMs: 10 }));
  assert.deepEqual(w.times('/percall'), [0, 100, 300, 700], 'per call: 4 attempts on base 10 (throttled: 100, 200, 400)');
  const g = f.extend({ maxAttempts: 3 });
  await w.run(g(w.url('/extended')));
  assert.equal(w.count('/extended'), 3);
  await w.run(f(w.url('/extended')));
  assert.equal(w.count('/extended'), 5, 'the original keeps its options');
  await assert.rejects(f(w.url('/extended'), undefined, { maxAttempts: 0 }), { name: 'RangeError', message: /^maxAttempts/ });
});

test('onRetry is told the response', async (t) => {
  const w = world(t, { '/reqid': [{ status: 503, headers: { 'x-request-id': 'r-1' } }, 200] });
  let id;
  await w.run(
    fetchWithBackoff(w.url('/reqid'), undefined, { ...EXACT, onRetry: ({ response }) => (id = response.headers.get('x-request-id')) }),
  );
  assert.equal(id, 'r-1');
});

test('retry(fn) retries any async work with the same options, waits and deadline', async (t) => {
  const w = world(t, { '/retryfn': [503, 503, { status: 200, body: 'done' }] });
  const seen = [];
  const text = await w.run(
    retry(async ({ attempt, signal }) => {
      seen.push([attempt, Date.now() - T0]);
      const r = await fetch(w.url('/retryfn'), { signal });
      if (!r.ok) throw new Error(`status ${r.status}`);
      return r.text();
    }, EXACT),
  );
  assert.equal(text, 'done');
  assert.deepEqual(
    seen,
    [
      [1, 0],
      [2, 100],
      [3, 300],
    ],
    'an error without a status waits on baseMs',
  );
  // Exhausted: the last error; shouldRetry false stops at once.
  let n = 0;
  const last = await w.run(retry(() => Promise.reject(new Error(`try ${++n}`)), { ...EXACT, maxAttempts: 3 }).catch((e) => e));
  assert.equal(last.message, 'try 3');
  n = 0;
  const vetoed = await w.run(retry(() => Promise.reject(new Error(`try ${++n}`)), { ...EXACT, shouldRetry: () => false }).catch((e) => e));
  assert.equal(vetoed.message, 'try 1');
  // The signal aborts a wait; the deadline aborts an attempt that ignores its signal, at exactly the deadline.
  const ac = new AbortController();
  const reason = new Error('stop');
  let from = w.at();
  const aborted = await w.run(
    retry(
      () => {
        setTimeout(() => ac.abort(reason), 5);
        throw new Error('fail');
      },
      { baseMs: 5000, signal: ac.signal },
    ).catch((e) => e),
  );
  assert.equal(aborted, reason);
  assert.equal(w.at() - from, 5);
  from = w.at();
  const late = await w.run(retry(() => new Promise(() => {}), { maxElapsedMs: 50 }).catch((e) => e));
  assert.ok(late instanceof DOMException && late.name === 'TimeoutError', String(late));
  assert.equal(w.at() - from, 50);
  await assert.rejects(
    retry(() => 1, { signal: 'x' }),
    { name: 'TypeError', message: /^signal/ },
  );
  assert.equal(await w.run(retry(() => 7)), 7);
});

test('a rejection after an abort is never left unhandled (fn, shouldRetry, beforeRetry)', async (t) => {
  const w = world(t, { '/abort-hooks': 503 });
  const reason = new Error('stop');
  const seen = await unhandled(async () => {
    // The function aborts its own call, then rejects: the call rejects with the reason, and `fn failed` is handled.
    const ac = new AbortController();
    const got = await w.run(
      retry(
        async () => {
          ac.abort(reason);
          throw new Error('fn failed');
        },
        { ...EXACT, signal: ac.signal },
      ).catch((e) => e),
    );
    assert.equal(got, reason, 'retry(fn)');
    for (const hook of ['shouldRetry', 'beforeRetry']) {
      const ac2 = new AbortController();
      const got2 = await w.run(
        fetchWithBackoff(
          w.url('/abort-hooks'),
          { signal: ac2.signal },
          {
            ...EXACT,
            [hook]: async () => {
              ac2.abort(reason);
              throw new Error(`${hook} failed`);
            },
          },
        ).catch((e) => e),
      );
      assert.equal(got2, reason, hook);
    }
  });
  assert.deepEqual(seen.map(String), []);
});

test('idempotency is judged on the request actually sent (beforeRetry may change it)', async (t) => {
  const w = world(t, { '/to-post': 503, '/drop-key': 503, '/one-key': [503, 503, 200] });
  // A GET whose hook turns it into a POST: the POST is sent once, not retried.
  let done;
  await w.run(
    fetchWithBackoff(w.url('/to-post'), undefined, {
      ...EXACT,
      beforeRetry: ({ request }) => new Request(request.url, { method: 'POST', body: 'x' }),
      onDone: (d) => (done = d),
    }),
  );
  assert.deepEqual(
    w.sent('/to-post').map((r) => r.method),
    ['GET', 'POST'],
  );
  assert.equal(done.reason, 'not-idempotent');
  // A keyed POST whose hook drops the key: not retried without it.
  await w.run(
    fetchWithBackoff(
      w.url('/drop-key'),
      { method: 'POST', body: 'x', headers: { 'idempotency-key': 'k1' } },
      { ...EXACT, beforeRetry: ({ request }) => new Request(request.url, { method: 'POST', body: 'x' }) },
    ),
  );
  assert.deepEqual(
    w.sent('/drop-key').map((r) => r.headers['idempotency-key'] ?? '-'),
    ['k1', '-'],
  );
  // The generated key is the same on every attempt, whatever the attempt header.
  await w.run(
    fetchWithBackoff(w.url('/one-key'), { method: 'POST', body: 'x' }, { ...EXACT, idempotencyKey: true, attemptHeader: 'X-Attempt' }),
  );
  const sent = w.sent('/one-key');
  assert.equal(sent.length, 3);
  assert.equal(new Set(sent.map((r) => r.headers['idempotency-key'])).size, 1, 'one key for three attempts');
  await assert.rejects(fetchWithBackoff(w.url('/one-key'), undefined, { attemptHeader: 'Idempotency-Key' }), {
    name: 'RangeError',
    message: /^attemptHeader/,
  });
});

// ---- moved from fetch.node.test.mjs: timing, on virtual time ----

test('X-RateLimit-Reset as a Unix time is waited for: the retry goes at the reset, not before', async (t) => {
  // (T0 + 1.5 s: a reset 1 s ahead of the whole second after T0 + 0.5 s)
  const epoch = (T0 + 2000) / 1000;
  const w = world(t, { '/epoch': [{ status: 429, headers: { 'x-ratelimit-reset': String(epoch) } }, 200] });
  await w.tick(500);
  let info;
  const res = await w.run(fetchWithBackoff(w.url('/epoch'), undefined, { baseMs: 1, onRetry: (i) => (info = i) }));
  assert.equal(res.status, 200);
  assert.equal(info.retryAfterMs, 1500);
  assert.ok(above(info.delayMs, 1500), `${info.delayMs}`);
  const [first, second] = w.times('/epoch');
  assert.deepEqual([first, second], [500, Math.floor(500 + info.delayMs)]);
  assert.ok(second >= 2000, 'retried at the reset time or after');
});

test('an abort during a wait, or a hung hook cut by the deadline, leaves no listener on the signals', async (t) => {
  const w = world(t, { '*': 503 });
  const live = new AbortController();
  // A hook that never settles, cut by maxElapsedMs, 50 times on one live signal.
  for (let i = 0; i < 50; i++) {
    const call = fetchWithBackoff(
      w.url('/listeners'),
      { signal: live.signal },
      { baseMs: 1, maxElapsedMs: 20, shouldRetry: () => new Promise(() => {}) },
    );
    const e = await w.run(call.catch((x) => x));
    assert.equal(e?.name, 'TimeoutError');
  }
  assert.equal(w.at(), 50 * 20, 'each call cut at its deadline');
  assert.equal(getEventListeners(live.signal, 'abort').length, 0, 'listeners left on the live signal');
  // Aborted in a wait: nothing stays on the aborted signal either.
  for (let i = 0; i < 20; i++) {
    const ac = new AbortController();
    const call = fetchWithBackoff(w.url(`/listeners-${i}`), { signal: ac.signal }, { baseMs: 1000, jitter: 'none', maxElapsedMs: 60_000 });
    await w.tick(5); // (in the 10 s wait now)
    assert.equal(w.count(`/listeners-${i}`), 1);
    ac.abort(new Error('stop'));
    await w.run(call.catch(() => {}));
    assert.equal(getEventListeners(ac.signal, 'abort').length, 0, 'listeners left on the aborted signal');
  }
});

test('retry(fn) on one long-lived signal with a timeout keeps nothing per call on the signal', async (t) => {
  const w = world(t);
  const live = new AbortController();
  for (let i = 0; i < 200; i++) assert.equal(await w.run(retry(() => i, { signal: live.signal, timeoutMs: 1000, maxElapsedMs: 1000 })), i);
  assert.equal(getEventListeners(live.signal, 'abort').length, 0);
  assert.equal(w.at(), 0);
});

test('a budget that is no RetryBudget instance is named in the error; nothing is sent', async (t) => {
  const w = world(t, { '/none': 200 });
  const fake = Object.create(RetryBudget.prototype);
  await assert.rejects(fetchWithBackoff(w.url('/none'), undefined, { budget: fake }), {
    name: 'TypeError',
    message: /^budget must be a RetryBudget/,
  });
  assert.throws(() => fake.withdraw(), { name: 'TypeError', message: /^budget must be a RetryBudget/ });
  assert.equal(w.count('/none'), 0);
});

test('per-call options of a wrapper never read Object.prototype', async (t) => {
  const w = world(t, { '/proto': 503 });
  const api = withBackoff(fetch, { ...EXACT, maxAttempts: 3 });
  Object.prototype.retryNonIdempotent = true;
  Object.prototype.beforeRetry = () => ({ authorization: 'injected' });
  try {
    const res = await w.run(api(w.url('/proto'), { method: 'POST', body: 'x' }, {}));
    assert.equal(res.status, 503);
    const again = await w.run(api.extend({})(w.url('/proto'), { method: 'POST', body: 'x' }));
    assert.equal(again.status, 503);
  } finally {
    delete Object.prototype.retryNonIdempotent;
    delete Object.prototype.beforeRetry;
  }
  assert.equal(w.count('/proto'), 2, 'each POST sent once');
  assert.ok(w.sent('/proto').every((r) => r.headers.authorization === undefined));
});
