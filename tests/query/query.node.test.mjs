// wasm-backoff/query in Node 20: TanStack Query's real QueryClient
// (@tanstack/query-core) fetching from the scripted server on 127.0.0.1 with
// the adapter's `retry` and `retryDelay`; SWR's `onErrorRetry` called as
// SWR's core calls it (useSWR needs a React renderer: swr's use-swr calls
// `onErrorRetry(err, key, config, revalidate, { retryCount, dedupe: true })`,
// and `revalidate(opts)` starts the next request), checked against SWR's own
// default callback from `swr/_internal` under the same harness.
import { test, before, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import { QueryClient } from '@tanstack/query-core';
import { defaultConfig } from 'swr/_internal';
import { queryRetry, swrRetry } from 'wasm-backoff/query';
import { Backoff } from 'wasm-backoff/backoff';
import { fetchWithBackoff } from 'wasm-backoff';
import { startScripted } from '../server/scripted.mjs';
import { settled } from '../engine/clock.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

/** An HTTP error as ky and most fetch wrappers throw it: the Response on `error.response`. */
class HTTPError extends Error {
  constructor(response) {
    super(`HTTP ${response.status}`);
    this.response = response;
  }
}

/** A query function on the scripted server: the body, or an HTTPError. */
const getText = (path) => async () => {
  const res = await fetch(srv.url + path);
  if (!res.ok) throw new HTTPError(res);
  return res.text();
};

/** The adapter with its answers recorded. */
function recorded(options) {
  const { retry, retryDelay } = queryRetry(options);
  const delays = [];
  return {
    delays,
    retry,
    retryDelay: (n, e) => {
      const d = retryDelay(n, e);
      delays.push(d);
      return d;
    },
  };
}

/** Gaps in ms between the requests the server saw on `path`. */
const gaps = (path) => {
  const at = srv.requests.filter((r) => new URL(r.url, srv.url).pathname === path).map((r) => r.at);
  return at.slice(1).map((t, i) => t - at[i]);
};

test('TanStack Query: 502, 500, 200 succeeds after the seeded schedule’s delays', async () => {
  // (statuses that are not throttling: a 429, 503 or 529 waits on throttleBaseMs, tested below)
  srv.script('/flaky', [{ status: 502 }, { status: 500 }, { status: 200, body: 'ok' }]);
  const options = { baseMs: 20, seed: 7 };
  const { delays, retry, retryDelay } = recorded(options);
  const client = new QueryClient();
  const data = await client.fetchQuery({ queryKey: ['flaky'], queryFn: getText('/flaky'), retry, retryDelay });
  assert.equal(data, 'ok');
  assert.equal(srv.count('/flaky'), 3);
  // Retry n's delay is the nth of the same options' schedule (full jitter: U[0, 20·2^(n−1))).
  const b = new Backoff(options);
  const expected = [b.next(), b.next()];
  assert.deepEqual(delays.slice(0, 2), expected);
  assert.ok(expected[0] < 20 && expected[1] < 40, String(expected));
  for (const [i, g] of gaps('/flaky').entries()) assert.ok(g >= expected[i] - 2, `gap ${g} ms >= delay ${expected[i]} ms`);
  client.clear();
});

test('a 429, 503 or 529 waits on throttleBaseMs (10 × baseMs by default), as the fetch driver waits for it; other failures on baseMs', async () => {
  const options = { baseMs: 10, seed: 5 };
  for (const status of [429, 503, 529, 500]) {
    // The fetch driver's wait before its first retry, with the same seeded options.
    srv.script(`/throttled-${status}`, [{ status }, { status: 200 }]);
    let waited;
    const onRetry = ({ delayMs }) => {
      waited = delayMs;
    };
    assert.equal((await fetchWithBackoff(`${srv.url}/throttled-${status}`, undefined, { ...options, onRetry })).status, 200);
    const error = new HTTPError(new Response(null, { status }));
    assert.equal(queryRetry(options).retryDelay(0, error), waited, `${status}: the fetch driver's wait`);
  }
  const none = { baseMs: 10, jitter: 'none' };
  const wait = (options, status) => queryRetry(options).retryDelay(0, { status, headers: {} });
  assert.deepEqual(
    [429, 503, 529, 500, 502].map((s) => wait(none, s)),
    [100, 100, 100, 10, 10],
  );
  assert.equal(wait({ ...none, throttleBaseMs: 30 }, 429), 30, 'throttleBaseMs set');
  assert.equal(wait({ ...none, throttleBaseMs: 30 }, 500), 10);
  // A server-named wait still lifts it (with the core's jitter above).
  const lifted = queryRetry({ ...none, throttleBaseMs: 1 }).retryDelay(0, { status: 429, headers: { 'retry-after-ms': '50' } });
  assert.ok(lifted >= 50 && lifted <= 55, `lifted to the server's 50 ms: ${lifted}`);
});

test('TanStack Query: a 429 waits the server’s wait (retry-after-ms), jitter above', async () => {
  srv.script('/limited', [
    { status: 429, headers: { 'retry-after-ms': '150' } },
    { status: 200, body: 'ok' },
  ]);
  const { delays, retry, retryDelay } = recorded({ baseMs: 1 });
  const client = new QueryClient();
  assert.equal(await client.fetchQuery({ queryKey: ['limited'], queryFn: getText('/limited'), retry, retryDelay }), 'ok');
  assert.equal(delays.length, 1);
  assert.ok(delays[0] >= 150 && delays[0] <= 165, `delay ${delays[0]} in [150, 165]`);
  assert.ok(gaps('/limited')[0] >= 148, `the server saw the retry ${gaps('/limited')[0]} ms later`);
  client.clear();
});

test('TanStack Query: a server wait over maxRetryAfterMs, a 404, and the last attempt end at once', async () => {
  const client = new QueryClient();
  srv.script('/later', [{ status: 503, headers: { 'retry-after': '120' } }, { status: 200 }]);
  const q = queryRetry({ baseMs: 1, maxRetryAfterMs: 60_000 });
  await assert.rejects(client.fetchQuery({ queryKey: ['later'], queryFn: getText('/later'), ...q }), /HTTP 503/);
  assert.equal(srv.count('/later'), 1);

  srv.script('/missing', { status: 404 });
  await assert.rejects(client.fetchQuery({ queryKey: ['missing'], queryFn: getText('/missing'), ...q }), /HTTP 404/);
  assert.equal(srv.count('/missing'), 1);
  // shouldRetry: true retries a 404 all the same.
  const forced = queryRetry({ baseMs: 1, maxAttempts: 2, shouldRetry: ({ status }) => (status === 404 ? true : undefined) });
  await assert.rejects(client.fetchQuery({ queryKey: ['missing2'], queryFn: getText('/missing'), ...forced }), /HTTP 404/);
  assert.equal(srv.count('/missing'), 3);

  srv.script('/down', { status: 503 });
  await assert.rejects(
    client.fetchQuery({ queryKey: ['down'], queryFn: getText('/down'), ...queryRetry({ baseMs: 1, maxAttempts: 3 }) }),
    /HTTP 503/,
  );
  assert.equal(srv.count('/down'), 3);
  client.clear();
});

test('TanStack Query: x-should-retry overrules the status, as in the fetch driver', async () => {
  const client = new QueryClient();
  srv.script('/never', { status: 503, headers: { 'x-should-retry': 'false' } });
  srv.script('/conflict', [
    { status: 409, headers: { 'x-should-retry': 'true' } },
    { status: 200, body: 'ok' },
  ]);
  const q = queryRetry({ baseMs: 1, maxAttempts: 3 });
  await assert.rejects(client.fetchQuery({ queryKey: ['never'], queryFn: getText('/never'), ...q }), /HTTP 503/);
  assert.equal(srv.count('/never'), 1, 'a 503 the server says not to retry is not');
  assert.equal(await client.fetchQuery({ queryKey: ['conflict'], queryFn: getText('/conflict'), ...q }), 'ok');
  assert.equal(srv.count('/conflict'), 2, 'a 409 the server says to retry is');
  client.clear();
});

test('TanStack Query: a network failure is retried', async () => {
  const q = queryRetry({ baseMs: 1, maxAttempts: 2 });
  let n = 0;
  const client = new QueryClient();
  const queryFn = async () => {
    if (n++ === 0) await fetch('http://127.0.0.1:1/'); // refused: fetch's TypeError
    return 'ok';
  };
  assert.equal(await client.fetchQuery({ queryKey: ['net'], queryFn, ...q }), 'ok');
  assert.equal(n, 2);
  client.clear();
});

test('the server’s wait is read from each documented shape of error', () => {
  const { retry, retryDelay } = queryRetry({ baseMs: 0, seed: 1 });
  const hdrs = new Headers({ 'retry-after-ms': '200' });
  const shapes = {
    'a thrown Response': new Response(null, { status: 429, headers: hdrs }),
    'error.response: a Response (ky)': new HTTPError(new Response(null, { status: 503, headers: hdrs })),
    'error.response.headers: a plain record (axios)': { response: { status: 429, headers: { 'Retry-After-Ms': '200' } } },
    'error.response.headers: get(name) (AxiosHeaders)': { response: { status: 429, headers: { get: (n) => hdrs.get(n) } } },
    'error.status and error.headers (OpenAI, Anthropic SDKs)': Object.assign(new Error('rate limited'), { status: 429, headers: hdrs }),
  };
  for (const [what, error] of Object.entries(shapes)) {
    const d = retryDelay(0, error);
    assert.ok(retry(0, error) && d >= 200 && d <= 220, `${what}: ${d}`);
  }
  // 429 without a wait is retried (retryOn); 413 only with one; a 400 never; a status < 400 on an error neither.
  assert.equal(retry(0, { status: 429, headers: {} }), true);
  assert.equal(retry(0, { status: 413, headers: {} }), false);
  assert.equal(retry(0, { status: 413, headers: { 'retry-after': '1' } }), true);
  assert.equal(retry(0, { response: { status: 400, headers: { 'retry-after': '1' } } }), false);
  assert.equal(queryRetry({ retryOn: [400] }).retry(0, { status: 400 }), true);
  // Errors carrying no status are retried; the schedule's delay stands.
  assert.equal(retryDelay(3, new TypeError('fetch failed')), 0);
  assert.equal(retryDelay(4, new TypeError('fetch failed')), 0, 'exhausted (5 attempts): 0, and retry says no');
  assert.equal(retry(4, new TypeError('fetch failed')), false);
  // A preset's attempts, and Infinity.
  const aws = queryRetry({ preset: 'aws' }); // 3 attempts
  assert.deepEqual([aws.retry(1, null), aws.retry(2, null)], [true, false]);
  assert.equal(queryRetry({ maxAttempts: Infinity }).retry(1000, null), true);
});

test('bad options throw TypeError or RangeError naming the option, at the factory', () => {
  const cases = [
    [5, TypeError, /^options/],
    [{ baseMs: 'x' }, TypeError, /^baseMs/],
    [{ baseMs: -1 }, RangeError, /^baseMs/],
    [{ maxAttempts: 0 }, RangeError, /^maxAttempts/],
    [{ jitter: 'sometimes' }, RangeError, /^jitter/],
    [{ maxRetryAfterMs: -1 }, RangeError, /^maxRetryAfterMs/],
    [{ maxRetryAfterMs: '1' }, TypeError, /^maxRetryAfterMs/],
    [{ retryOn: 503 }, TypeError, /^retryOn/],
    [{ retryOn: [99] }, RangeError, /^retryOn/],
    [{ shouldRetry: true }, TypeError, /^shouldRetry/],
    [{ maxElapsedMs: 1000 }, TypeError, /^maxElapsedMs/],
    [{ throttleBaseMs: -1 }, RangeError, /^throttleBaseMs/],
    [{ throttleBaseMs: Infinity }, RangeError, /^throttleBaseMs/],
    [{ throttleBaseMs: '100' }, TypeError, /^throttleBaseMs/],
  ];
  for (const make of [queryRetry, swrRetry]) {
    for (const [options, type, message] of cases) {
      assert.throws(
        () => make(options),
        (e) => e instanceof type && message.test(e.message),
        `${make.name}(${JSON.stringify(options)})`,
      );
    }
  }
});

/** Calls `onErrorRetry` as swr's use-swr does after the fetcher's rejection number `retryCount`. */
const swrCalls = (onErrorRetry, error, retryCount, revalidate) =>
  onErrorRetry(error, '/key', { ...defaultConfig, errorRetryInterval: 100 }, revalidate, { retryCount, dedupe: true });

test('SWR: revalidate(opts) after the seeded delay; nothing once maxAttempts is reached', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const options = { baseMs: 100, seed: 3, maxAttempts: 3 };
  const { onErrorRetry } = swrRetry(options);
  const b = new Backoff(options);
  const expected = [b.next(), b.next()];
  for (const [i, d] of expected.entries()) {
    const revalidate = mock.fn();
    swrCalls(onErrorRetry, new Error('boom'), i + 1, revalidate);
    t.mock.timers.tick(Math.floor(d));
    assert.equal(revalidate.mock.callCount(), Number.isInteger(d) ? 1 : 0, `retry ${i + 1}: not before ${d} ms`);
    t.mock.timers.tick(1);
    assert.equal(revalidate.mock.callCount(), 1);
    assert.deepEqual(revalidate.mock.calls[0].arguments, [{ retryCount: i + 1, dedupe: true }], 'the opts go back to SWR');
  }
  // The third failure is the last attempt: no timer.
  const revalidate = mock.fn();
  swrCalls(onErrorRetry, new Error('boom'), 3, revalidate);
  t.mock.timers.tick(1e6);
  assert.equal(revalidate.mock.callCount(), 0);
  // The harness is SWR's contract: its own default, called the same way, revalidates with the same opts.
  const theirs = mock.fn();
  swrCalls(defaultConfig.onErrorRetry, new Error('boom'), 1, theirs);
  t.mock.timers.tick(300); // (0.5..1.5) · 2 · errorRetryInterval
  assert.deepEqual(theirs.mock.calls[0].arguments, [{ retryCount: 1, dedupe: true }]);
  // A 404 is not retried, a server wait over maxRetryAfterMs neither.
  const never = mock.fn();
  swrCalls(onErrorRetry, new HTTPError(new Response(null, { status: 404 })), 1, never);
  swrCalls(onErrorRetry, { status: 429, headers: { 'retry-after': '3600' } }, 1, never);
  t.mock.timers.tick(1e7);
  assert.equal(never.mock.callCount(), 0);
});

test('SWR: a fetcher on the scripted server, retried through onErrorRetry as SWR does, gets its 200', async () => {
  srv.script('/swr', [{ status: 503 }, { status: 429, headers: { 'retry-after-ms': '40' } }, { status: 200, body: 'ok' }]);
  const { onErrorRetry } = swrRetry({ baseMs: 5, seed: 9 });
  const fetcher = getText('/swr');
  const data = await new Promise((resolve, reject) => {
    // SWR's revalidate for one key: run the fetcher; on error hand it to onErrorRetry with retryCount + 1.
    const revalidate = (opts = {}) =>
      fetcher().then(resolve, (err) => {
        if ((opts.retryCount ?? 0) >= 5) return reject(err);
        swrCalls(onErrorRetry, err, (opts.retryCount || 0) + 1, revalidate);
      });
    revalidate();
  });
  assert.equal(data, 'ok');
  assert.equal(srv.count('/swr'), 3);
  const [first, second] = gaps('/swr');
  assert.ok(first < 1000 && second >= 38, `gaps ${first}, ${second}`);
});

/**
 * A broken hook, or an error whose getters throw: never thrown into the
 * host library. Each case: the options, the error the query function
 * throws, and what must go to console.error (the last argument of a call).
 */
function broken() {
  const hookBug = new Error('hook bug');
  const getterBug = new Error('getter bug');
  const boom = () => {
    throw getterBug;
  };
  const junk = (e) => e instanceof TypeError && /^shouldRetry must return a boolean or undefined/.test(e.message);
  const is = (x) => (e) => e === x;
  const down = () => new Error('down');
  return [
    ['shouldRetry returns a string', { shouldRetry: () => 'yes' }, down(), [junk]],
    [
      'shouldRetry throws',
      {
        shouldRetry: () => {
          throw hookBug;
        },
      },
      down(),
      [is(hookBug)],
    ],
    [
      'shouldRetry is async and rejects',
      {
        shouldRetry: async () => {
          throw hookBug;
        },
      },
      down(),
      [junk, is(hookBug)],
    ],
    ['error.status getter throws', {}, Object.defineProperty(new Error('x'), 'status', { get: boom }), [is(getterBug)]],
    ['error.response getter throws', {}, Object.defineProperty(new Error('x'), 'response', { get: boom }), [is(getterBug)]],
    [
      'error.headers getter throws',
      {},
      Object.defineProperty(Object.assign(new Error('x'), { status: 429 }), 'headers', { get: boom }),
      [is(getterBug)],
    ],
    [
      'error.response.headers getter throws',
      {},
      { response: Object.defineProperty({ status: 503 }, 'headers', { get: boom }) },
      [is(getterBug)],
    ],
    ['error.headers.get throws', {}, Object.assign(new Error('x'), { status: 429, headers: { get: boom } }), [is(getterBug)]],
  ];
}

/** Records unhandled rejections and console.error's calls for the rest of test `t`. */
function watch(t) {
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  process.on('unhandledRejection', onUnhandled);
  t.after(() => process.off('unhandledRejection', onUnhandled));
  const logged = t.mock.method(console, 'error', () => {});
  /** What the package told console.error since the last call (the last argument of each call; not Node's warnings). */
  const reported = () => {
    const ours = logged.mock.calls.filter((c) => String(c.arguments[0]).startsWith('wasm-backoff'));
    const r = ours.map((c) => c.arguments.at(-1));
    logged.mock.resetCalls();
    return r;
  };
  return { unhandled, reported };
}

/** Each expected report matched by one of `reported`, and nothing else reported. */
function assertReported(reported, expected, what) {
  assert.equal(reported.length, expected.length, `${what}: reported ${reported.map(String).join('; ')}`);
  for (const want of expected) assert.ok(reported.some(want), `${what}: reported ${reported.map(String).join('; ')}`);
}

test('TanStack Query: a broken shouldRetry, or an error whose getters throw, ends the retries: the query settles with its error, the fault is reported, nothing unhandled', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { unhandled, reported } = watch(t);
  const client = new QueryClient();
  for (const [i, [what, options, error, expected]] of broken().entries()) {
    const queryFn = mock.fn(() => Promise.reject(error));
    const p = client.fetchQuery({ queryKey: ['broken', i], queryFn, ...queryRetry({ baseMs: 1, ...options }) });
    const outcome = p.then(
      () => 'resolved',
      (e) => e,
    );
    t.mock.timers.tick(1e6);
    assert.equal(await settled(outcome), true, `${what}: the query settled`);
    assert.equal(await outcome, error, `${what}: rejected with the query function's error`);
    const state = client.getQueryState(['broken', i]);
    assert.equal(state?.status, 'error', what);
    assert.equal(state?.error, error, what);
    assert.equal(queryFn.mock.callCount(), 1, `${what}: not retried`);
    await settled(outcome); // an async hook's rejection comes a little later
    assertReported(reported(), expected, what);
    // And called directly: neither throws.
    const q = queryRetry(options);
    assert.equal(q.retryDelay(0, error), 0, what);
    assert.equal(q.retry(0, error), false, what);
    await settled(outcome);
    assertReported(reported(), expected, `${what} (called directly)`);
  }
  assert.deepEqual(unhandled, [], 'no unhandled rejection');
  client.clear();
});

test('SWR: a broken shouldRetry, or an error whose getters throw: onErrorRetry does not throw, schedules nothing, reports the fault, leaves nothing unhandled', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { unhandled, reported } = watch(t);
  for (const [what, options, error, expected] of broken()) {
    const { onErrorRetry } = swrRetry({ baseMs: 1, ...options });
    const revalidate = mock.fn();
    assert.doesNotThrow(() => swrCalls(onErrorRetry, error, 1, revalidate), what);
    t.mock.timers.tick(1e6);
    await settled(Promise.resolve());
    assert.equal(revalidate.mock.callCount(), 0, `${what}: no retry`);
    assertReported(reported(), expected, what);
  }
  assert.deepEqual(unhandled, [], 'no unhandled rejection');
});
