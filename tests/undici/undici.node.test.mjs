// wasm-backoff/undici in Node 20 against the scripted server on 127.0.0.1:
// Node's own global fetch after retryGlobalFetch() (no undici package), and
// the undici package's Agent with retryDispatcher (setGlobalDispatcher) and
// retryInterceptor (Agent.compose, undici.request). Each checks what the
// server saw: how many requests, the waits between them, the body sent again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request, setGlobalDispatcher, getGlobalDispatcher } from 'undici';
import { retryGlobalFetch, retryDispatcher, retryInterceptor } from 'wasm-backoff/undici';
import { startScripted } from '../server/scripted.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

/** Gaps in ms between the requests the server saw on `path`. */
const gaps = (path) => {
  const at = srv.requests.filter((r) => r.path === path).map((r) => r.at);
  return at.slice(1).map((t, i) => t - at[i]);
};

/** Runs `fn` with Node's global fetch retrying, then puts the dispatcher back. */
async function withGlobal(options, fn) {
  const undo = await retryGlobalFetch(options);
  try {
    return await fn();
  } finally {
    undo();
  }
}

test("Node's global fetch: a 503 then a 429's retry-after-ms are retried, the wait honoured, the failures never seen", () =>
  withGlobal({ baseMs: 5, maxAttempts: 4 }, async () => {
    srv.script('/items', [
      { status: 503, body: 'down' },
      { status: 429, headers: { 'retry-after-ms': '80' } },
      { status: 200, body: [1, 2] },
    ]);
    const res = await fetch(`${srv.url}/items`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), [1, 2]);
    assert.equal(srv.count('/items'), 3);
    assert.ok(gaps('/items')[1] >= 78, `the 429's wait: ${gaps('/items')}`);
  }));

test("Node's global fetch: a PUT's body is sent again after a 503 and a connection reset", () =>
  withGlobal({ baseMs: 5 }, async () => {
    srv.script('/put', [{ status: 503 }, { reset: true }, { echo: true }]);
    const res = await fetch(`${srv.url}/put`, { method: 'PUT', body: JSON.stringify({ a: 1 }) });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).body, '{"a":1}');
    assert.deepEqual(
      srv.requests.filter((r) => r.path === '/put').map((r) => r.body),
      ['{"a":1}', '{"a":1}', '{"a":1}'],
    );
  }));

test("Node's global fetch: a POST is sent once; with idempotencyKey it is retried under one key", async () => {
  srv.script('/post', [{ status: 503 }, { status: 201 }]);
  await withGlobal({ baseMs: 5 }, async () => {
    assert.equal((await fetch(`${srv.url}/post`, { method: 'POST', body: 'x' })).status, 503);
  });
  assert.equal(srv.count('/post'), 1);
  srv.reset();
  srv.script('/post', [{ status: 503 }, { status: 201 }]);
  await withGlobal({ baseMs: 5, idempotencyKey: true }, async () => {
    assert.equal((await fetch(`${srv.url}/post`, { method: 'POST', body: 'x' })).status, 201);
  });
  const keys = srv.requests.filter((r) => r.path === '/post').map((r) => r.headers['idempotency-key']);
  assert.equal(keys.length, 2);
  assert.match(keys[0], /^[0-9a-f-]{36}$/);
  assert.equal(keys[0], keys[1]);
});

test("Node's global fetch: the last try's answer after maxAttempts; a 404 is not retried", () =>
  withGlobal({ baseMs: 1, maxAttempts: 3 }, async () => {
    srv.script('/down', { status: 503, body: 'still down' });
    const res = await fetch(`${srv.url}/down`);
    assert.equal(res.status, 503);
    assert.equal(await res.text(), 'still down');
    assert.equal(srv.count('/down'), 3);
    srv.script('/missing', { status: 404 });
    assert.equal((await fetch(`${srv.url}/missing`)).status, 404);
    assert.equal(srv.count('/missing'), 1);
  }));

test("Node's global fetch: an abort during the wait rejects at once and sends nothing more", () =>
  withGlobal({ baseMs: 10_000, jitter: 'none' }, async () => {
    srv.script('/slow', { status: 503 });
    const t0 = Date.now();
    await assert.rejects(fetch(`${srv.url}/slow`, { signal: AbortSignal.timeout(100) }), { name: 'TimeoutError' });
    assert.ok(Date.now() - t0 < 2000);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(srv.count('/slow'), 1);
  }));

test('retryGlobalFetch: the previous dispatcher is back after undo', async () => {
  const before = getGlobalDispatcher();
  const undo = await retryGlobalFetch({ baseMs: 1 });
  assert.notEqual(getGlobalDispatcher(), before);
  undo();
  assert.equal(getGlobalDispatcher(), before);
  srv.script('/once', [{ status: 503 }, { status: 200 }]);
  assert.equal((await fetch(`${srv.url}/once`)).status, 503);
});

test("undici's setGlobalDispatcher(retryDispatcher(new Agent())): Node's fetch retries through the package's Agent", async () => {
  const previous = getGlobalDispatcher();
  const agent = new Agent();
  setGlobalDispatcher(retryDispatcher(agent, { baseMs: 5 }));
  try {
    srv.script('/agent', [{ status: 502 }, { status: 200, body: 'ok' }]);
    const res = await fetch(`${srv.url}/agent`);
    assert.equal(await res.text(), 'ok');
    assert.equal(srv.count('/agent'), 2);
  } finally {
    setGlobalDispatcher(previous);
    await agent.close();
  }
});

test("attemptHeader names each attempt, replacing the caller's own, in each form undici takes headers", async () => {
  const agent = new Agent();
  const dispatcher = agent.compose(retryInterceptor({ baseMs: 5, maxAttempts: 3, attemptHeader: 'Amz-Sdk-Request', idempotencyKey: true }));
  const forms = {
    record: { 'amz-sdk-request': 'mine', 'x-kept': 'yes' },
    flat: ['AMZ-SDK-REQUEST', 'mine', 'x-kept', 'yes'],
    pairs: new Map([
      ['amz-sdk-request', 'mine'],
      ['x-kept', 'yes'],
    ]),
  };
  try {
    for (const [form, headers] of Object.entries(forms)) {
      const p = `/attempt-${form}`;
      srv.script(p, [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
      const res = await request(`${srv.url}${p}`, { method: 'POST', body: 'x', headers, dispatcher });
      assert.equal(res.statusCode, 200, form);
      await res.body.dump();
      const seen = srv.requests.filter((r) => r.path === p).map((r) => r.headers);
      assert.deepEqual(
        seen.map((h) => h['amz-sdk-request']),
        ['attempt=1; max=3', 'attempt=2; max=3', 'attempt=3; max=3'],
        form,
      );
      assert.ok(
        seen.every((h) => h['x-kept'] === 'yes'),
        `${form}: the other headers kept`,
      );
      const keys = new Set(seen.map((h) => h['idempotency-key']));
      assert.ok(keys.size === 1 && !keys.has(undefined), `${form}: one idempotency key on every attempt`);
    }
  } finally {
    await agent.close();
  }
});

test("pace: a success saying no request remains holds that origin's next request until the reset; pace: false does not", async () => {
  const agent = new Agent();
  try {
    const send = async (dispatcher, p) => (await request(`${srv.url}${p}`, { dispatcher })).body.text();
    const spent = { status: 200, headers: { 'x-ratelimit-remaining': '0', 'retry-after-ms': '250' } };
    const paced = agent.compose(retryInterceptor({ baseMs: 5 }));
    srv.script('/paced', [spent, { status: 200 }]);
    await send(paced, '/paced');
    await send(paced, '/paced');
    assert.ok(gaps('/paced')[0] >= 240, `held until the reset: ${gaps('/paced')} ms`);
    // An abort while held rejects at once with its reason, and sends nothing.
    srv.script('/held', [{ ...spent, headers: { ...spent.headers, 'retry-after-ms': '5000' } }]);
    await send(paced, '/held');
    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('stop')), 20);
    const t0 = Date.now();
    await assert.rejects(request(`${srv.url}/held`, { dispatcher: paced, signal: ac.signal }), /stop|abort/i);
    assert.ok(Date.now() - t0 < 2000 && srv.count('/held') === 1, `aborted while held, after ${Date.now() - t0} ms`);
    // (a 3 s reset: two requests in a row stay far below it)
    const unpaced = agent.compose(retryInterceptor({ baseMs: 5, pace: false }));
    srv.script('/unpaced', [{ ...spent, headers: { ...spent.headers, 'retry-after-ms': '3000' } }, { status: 200 }]);
    await send(unpaced, '/unpaced');
    await send(unpaced, '/unpaced');
    assert.ok(gaps('/unpaced')[0] < 2000, `pace: false: ${gaps('/unpaced')} ms`);
  } finally {
    await agent.close();
  }
});

test("retryInterceptor with Agent.compose: undici's request retries", async () => {
  const agent = new Agent();
  const dispatcher = agent.compose(retryInterceptor({ baseMs: 5, retryOn: [503] }));
  try {
    srv.script('/req', [{ status: 503 }, { status: 500 }, { status: 200, body: 'ok' }]);
    const res = await request(`${srv.url}/req`, { dispatcher });
    assert.equal(res.statusCode, 500, 'a 500 is outside this retryOn');
    await res.body.dump();
    assert.equal(srv.count('/req'), 2);
  } finally {
    await agent.close();
  }
});

test('options are checked at once, naming the option', async () => {
  assert.throws(() => retryInterceptor({ baseMs: -1 }), RangeError);
  assert.throws(() => retryInterceptor({ retryOn: [700] }), RangeError);
  for (const k of ['beforeRetry', 'gate', 'signal', 'hedge', 'endpoints', 'telemetry', 'fallback', 'auth', 'dedupe', 'limit'])
    assert.throws(() => retryInterceptor({ [k]: {} }), {
      name: 'TypeError',
      message: new RegExp(`^${k} is not an option of wasm-backoff/undici`),
    });
  assert.throws(() => retryInterceptor({ onRetry: 1 }), { name: 'TypeError', message: /^onRetry/ });
  assert.throws(() => retryInterceptor({ attemptHeader: 'Idempotency-Key' }), { name: 'RangeError', message: /^attemptHeader/ });
  assert.throws(() => retryInterceptor({ attemptHeader: 3 }), { name: 'TypeError', message: /^attemptHeader/ });
  assert.throws(() => retryInterceptor({ pace: 'yes' }), { name: 'TypeError', message: /^pace/ });
  assert.throws(() => retryInterceptor({ timeoutMs: -1 }), { name: 'RangeError', message: /^timeoutMs/ });
  assert.throws(() => retryInterceptor({ maxBufferBytes: -1 }), { name: 'RangeError', message: /^maxBufferBytes/ });
  // Not a number (null too, issue 34: it read as the default): a TypeError naming it.
  for (const v of [null, '4', 4n, {}])
    assert.throws(() => retryInterceptor({ maxBufferBytes: v }), { name: 'TypeError', message: /^maxBufferBytes/ }, String(v));
  assert.throws(() => retryDispatcher({}, {}), { name: 'TypeError', message: /^dispatcher/ });
  await assert.rejects(retryGlobalFetch({ methods: 'GET' }), TypeError);
});

test('a body longer than maxBufferBytes is sent once, whole', () =>
  withGlobal({ baseMs: 5, maxBufferBytes: 4 }, async () => {
    srv.script('/big', [{ status: 503 }, { status: 200 }]);
    const res = await fetch(`${srv.url}/big`, { method: 'PUT', body: 'twelve bytes' });
    assert.equal(res.status, 503);
    assert.deepEqual(
      srv.requests.filter((r) => r.path === '/big').map((r) => r.body),
      ['twelve bytes'],
    );
  }));

test("the fetch driver's loop: onRetry, shouldRetry and onDone see each answer's status; delay chooses the wait", () => {
  const retries = [];
  const asked = [];
  const done = [];
  return withGlobal(
    {
      baseMs: 5,
      onRetry: (i) => retries.push([i.attempt, i.status, i.response]),
      shouldRetry: (i) => (asked.push(i.status), i.status === 418 ? true : undefined),
      onDone: (i) => done.push(i),
      delay: (i) => (i.status === 418 ? 60 : undefined),
    },
    async () => {
      srv.script('/hooks', [{ status: 418 }, { status: 503 }, { status: 200, body: 'ok' }]);
      const res = await fetch(`${srv.url}/hooks`);
      assert.equal(await res.text(), 'ok');
      assert.deepEqual(retries, [
        [1, 418, undefined],
        [2, 503, undefined],
      ]);
      assert.deepEqual(asked, [418, 503, 200], 'asked of every answer');
      assert.ok(gaps('/hooks')[0] >= 58, `the delay hook's 60 ms: ${gaps('/hooks')}`);
      assert.equal(done.length, 1);
      assert.equal(done[0].reason, 'success');
      assert.equal(done[0].attempts, 3);
      assert.equal(done[0].status, 200);
    },
  );
});

test('timeoutMs ends a try whose headers are late (retried, as a timeout is); a budget refuses retries once spent', async () => {
  // (a 1 s timeout: the room a loaded machine needs to send a try, and to have the second answered)
  srv.script('/late', [
    { status: 200, delayMs: 10_000, body: 'late' },
    { status: 200, body: 'on time' },
  ]);
  await withGlobal({ baseMs: 5, timeoutMs: 1000 }, async () => {
    const res = await fetch(`${srv.url}/late`);
    assert.equal(await res.text(), 'on time');
  });
  assert.equal(srv.count('/late'), 2);
  srv.script('/late2', { status: 200, delayMs: 10_000 });
  await withGlobal({ baseMs: 5, timeoutMs: 1000, retryOnTimeout: false }, async () => {
    await assert.rejects(fetch(`${srv.url}/late2`), (e) => /timeoutMs/.test(String(e.cause?.message ?? e.cause)));
  });
  assert.equal(srv.count('/late2'), 1, 'retryOnTimeout: false');
  const { RetryBudget } = await import('wasm-backoff/budget');
  const budget = new RetryBudget({ minPerSec: 0.1, ttlMs: 10_000, retryRatio: 0 }); // one retry in the window
  const reasons = [];
  srv.script('/spent', { status: 503 });
  await withGlobal({ baseMs: 1, maxAttempts: 5, budget, onDone: (i) => reasons.push(i.reason) }, async () => {
    assert.equal((await fetch(`${srv.url}/spent`)).status, 503);
    assert.equal((await fetch(`${srv.url}/spent`)).status, 503);
  });
  assert.equal(srv.count('/spent'), 3, "the budget's one retry, then none");
  assert.deepEqual(reasons, ['budget', 'budget']);
});

test("an answer held for an async shouldRetry reaches the caller whole; the caller's abort while it is judged ends the call", async () => {
  srv.script('/held', { status: 500, body: 'x'.repeat(100_000) });
  await withGlobal({ baseMs: 5, shouldRetry: async () => false }, async () => {
    const res = await fetch(`${srv.url}/held`);
    assert.equal(res.status, 500);
    assert.equal((await res.text()).length, 100_000);
  });
  srv.script('/judged', { status: 503 });
  const ac = new AbortController();
  await withGlobal({ baseMs: 5, shouldRetry: () => new Promise(() => ac.abort(new Error('stop'))) }, async () => {
    await assert.rejects(fetch(`${srv.url}/judged`, { signal: ac.signal }), /stop/);
  });
  assert.equal(srv.count('/judged'), 1);
});
