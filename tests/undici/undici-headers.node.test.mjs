// wasm-backoff/undici: the request's headers in each form undici's
// dispatch takes (a record, a flat array) and those callers hand it anyway
// (fetch-style pairs, a Map, a generator), as the attempt header and the
// idempotency key rewrite them; and the edges of pacing (the origin as a URL,
// a reset past maxRetryAfterMs) and of bodies read once: each chunk type
// against plain undici's, a body that fails to read, one over
// maxBufferBytes. Against the scripted server on 127.0.0.1, through
// undici's Agent. The bodies' invariant: the bytes the server stored are
// the caller's bytes, or the call fails. And the request model the fetch
// driver shares (js/request-model.js): the same request, with the same
// options, through fetchWithBackoff (Node's plain global fetch) and
// through undici's Agent gets the same idempotency verdict (the core's one
// rule: which request gets a generated key, which keeps the caller's,
// which is retried) and the same request stages on every attempt.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { Agent } from 'undici';
import { retryInterceptor, retryGlobalFetch } from 'wasm-backoff/undici';
import { fetchWithBackoff } from 'wasm-backoff';
import { startScripted } from '../server/scripted.mjs';

let srv;
let agent;
before(async () => {
  srv = await startScripted();
  agent = new Agent();
});
after(async () => {
  await agent?.close();
  await srv?.close();
});

/** The headers the server saw on each request to `path`. */
const seen = (path) => srv.requests.filter((r) => r.path === path).map((r) => r.headers);

/** One request through `d` (undici's dispatcher.request), its body read. */
async function send(d, path, more = {}) {
  const res = await d.request({ origin: srv.url, path, method: 'GET', ...more });
  await res.body.dump();
  return res.statusCode;
}

test('every header form: the attempt header on each attempt, the caller’s own of that name replaced, the rest kept', async () => {
  const d = agent.compose(retryInterceptor({ baseMs: 5, maxAttempts: 2, attemptHeader: 'x-attempt' }));
  const forms = {
    record: () => ({ 'X-Attempt': 'mine', 'x-kept': 'yes' }),
    flat: () => ['x-attempt', 'mine', 'x-kept', 'yes'],
    'fetch-style pairs': () => [
      ['x-attempt', 'mine'],
      ['x-kept', 'yes'],
    ],
    Map: () =>
      new Map([
        ['x-attempt', 'mine'],
        ['x-kept', 'yes'],
      ]),
    // (read once: every attempt still sends it)
    generator: function* () {
      yield ['x-attempt', 'mine'];
      yield ['x-kept', 'yes'];
    },
    'multi-value': () => ({ 'x-kept': ['yes', 'too'] }),
  };
  for (const [form, make] of Object.entries(forms)) {
    const p = `/form-${form.replace(/\W/g, '')}`;
    srv.script(p, [{ status: 503 }, { status: 200 }]);
    assert.equal(await send(d, p, { headers: make() }), 200, form);
    const h = seen(p);
    assert.deepEqual(
      h.map((x) => x['x-attempt']),
      ['attempt=1; max=2', 'attempt=2; max=2'],
      form,
    );
    const kept = form === 'multi-value' ? 'yes, too' : 'yes';
    assert.ok(
      h.every((x) => x['x-kept'] === kept),
      `${form}: ${JSON.stringify(h)}`,
    );
  }
});

test('an odd flat array is still refused by undici, not mended', async () => {
  const d = agent.compose(retryInterceptor({ baseMs: 5, attemptHeader: 'x-attempt' }));
  await assert.rejects(send(d, '/odd', { headers: ['x-a', '1', 'x-b'] }), /headers array must be even/);
  assert.equal(seen('/odd').length, 0);
});

test('idempotency-key: a key given as undefined is no key (undici would not send it): the POST is sent once, or keyed by idempotencyKey', async () => {
  srv.script('/undef-key', [{ status: 503 }, { status: 201 }]);
  const plain = agent.compose(retryInterceptor({ baseMs: 5 }));
  assert.equal(await send(plain, '/undef-key', { method: 'POST', body: 'x', headers: { 'idempotency-key': undefined } }), 503);
  assert.equal(seen('/undef-key').length, 1, 'not retried without a key');
  srv.script('/gen-key', [{ status: 503 }, { status: 201 }]);
  const keyed = agent.compose(retryInterceptor({ baseMs: 5, idempotencyKey: true }));
  assert.equal(await send(keyed, '/gen-key', { method: 'POST', body: 'x', headers: { 'idempotency-key': undefined } }), 201);
  const keys = seen('/gen-key').map((x) => x['idempotency-key']);
  assert.ok(keys.length === 2 && /^[0-9a-f-]{36}$/.test(keys[0]) && keys[0] === keys[1], JSON.stringify(keys));
});

test('pace: the origin as a URL and as a string is one origin; a reset past maxRetryAfterMs is not waited', async () => {
  const spent = (ms) => ({ status: 200, headers: { 'x-ratelimit-remaining': '0', 'retry-after-ms': String(ms) } });
  const d = agent.compose(retryInterceptor({ baseMs: 5 }));
  srv.script('/url-origin', [spent(300), { status: 200 }]);
  await send(d, '/url-origin', { origin: new URL(`${srv.url}/`) });
  await send(d, '/url-origin');
  // (measured between the two arrivals at the server: the hold counts from the first answer, before the test's next line)
  const [first, second] = srv.requests.filter((r) => r.path === '/url-origin').map((r) => r.at);
  assert.ok(second - first >= 250, `held by the reset the URL origin was told: ${second - first} ms`);
  // (3 s, over maxRetryAfterMs: the next request goes, and the server's answer decides)
  const capped = agent.compose(retryInterceptor({ baseMs: 5, maxRetryAfterMs: 200 }));
  srv.script('/capped', [spent(3000), { status: 200 }]);
  await send(capped, '/capped');
  const t1 = Date.now();
  await send(capped, '/capped');
  assert.ok(Date.now() - t1 < 2000, `not held past maxRetryAfterMs: ${Date.now() - t1} ms`);
});

test('a body that fails while it is read: the call fails with its error and leaves no timer behind', async () => {
  const d = agent.compose(retryInterceptor({ baseMs: 5, maxElapsedMs: 600_000 }));
  const timers = () => process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length;
  const before = timers();
  async function* body() {
    yield 'a';
    throw new Error('body broke');
  }
  await assert.rejects(send(d, '/broken-body', { method: 'PUT', body: body() }), /body broke/);
  await new Promise((r) => setImmediate(r));
  assert.equal(timers(), before, 'the deadline timer of a call that never started');
  assert.equal(seen('/broken-body').length, 0);
});

/** The bodies the server stored for `path`, in order. */
const stored = (path) => srv.requests.filter((r) => r.path === path).map((r) => r.body);

const enc = (/** @type {string} */ s) => new TextEncoder().encode(s);

/**
 * Chunks of a body read once, and the bytes undici sends for them (null:
 * undici refuses them). Every chunk's bytes are ASCII (the server stores
 * bodies as UTF-8 text) but the string 'é'.
 */
const CHUNKS = {
  'Uint8Array and Buffer': [() => [enc('ab'), Buffer.from('cd')], 'abcd'],
  ArrayBuffer: [() => [enc('ab').buffer, enc('cd').buffer], null],
  'Uint8Array, ArrayBuffer, string': [() => [enc('ab'), enc('cd').buffer, 'ef'], null],
  strings: [() => ['a', 'é', ''], 'aé'],
  'DataView, Uint16Array, Float32Array, a subarray': [
    () => [
      new DataView(enc('xaby').buffer, 1, 2),
      new Uint16Array(enc('cd').buffer),
      new Float32Array(enc('efgh').buffer),
      enc('xijx').subarray(1, 3),
    ],
    'abcdefghij',
  ],
  'an empty ArrayBuffer (undici skips it)': [() => [new ArrayBuffer(0), enc('ab')], 'ab'],
  'a number': [() => [enc('ab'), 5], null],
  'an object': [() => [enc('ab'), { a: 1 }], null],
};

/** The forms of a body read once. */
const FORMS = {
  'async generator': (chunks) =>
    (async function* () {
      yield* chunks;
    })(),
  'object-mode Readable': (chunks) => Readable.from(chunks, { objectMode: true }),
};

/** A PUT of `body` through `d`: its status and what the server stored, or its error (name, code) and what the server stored. */
async function put(d, path, body) {
  try {
    const res = await d.request({ origin: srv.url, path, method: 'PUT', body });
    await res.body.dump();
    return [{ status: res.statusCode, stored: stored(path) }];
  } catch (e) {
    return [{ error: e.name, code: e.code, stored: stored(path) }, e];
  }
}

test('a body read once, chunk by chunk as plain undici: the bytes the server stored are the caller’s bytes, or the call fails', async () => {
  const ours = agent.compose(retryInterceptor({ baseMs: 5 }));
  for (const [form, make] of Object.entries(FORMS))
    for (const [name, [chunks, bytes]] of Object.entries(CHUNKS)) {
      const p = `/chunks-${form}-${name}`.replace(/[^\w/-]/g, '');
      srv.script(`${p}-plain`, { echo: true });
      srv.script(`${p}-ours`, [{ status: 503 }, { echo: true }]);
      const [plain] = await put(agent, `${p}-plain`, make(chunks()));
      const refused = { error: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', stored: [] };
      assert.deepEqual(plain, bytes === null ? refused : { status: 200, stored: [bytes] }, `plain undici, ${form} of ${name}`);
      // (ours: read first, so that the 503's retry sends it again; refused before anything is sent)
      const [mine, err] = await put(ours, `${p}-ours`, make(chunks()));
      assert.deepEqual(
        mine,
        bytes === null ? refused : { status: 200, stored: [bytes, bytes] },
        `${form} of ${name}: the bytes the server stored are the caller's bytes, or the call fails`,
      );
      if (err) assert.match(err.message, /^body: /, `${form} of ${name}: the error names the body`);
    }
});

test("Node's global fetch: a ReadableStream of ArrayBuffer chunks is refused as plain fetch refuses it; other chunks are sent whole on each try", async () => {
  const stream = (chunks) =>
    new ReadableStream({
      start(c) {
        for (const x of chunks) c.enqueue(x);
        c.close();
      },
    });
  const go = (path, chunks) => fetch(`${srv.url}${path}`, { method: 'PUT', body: stream(chunks), duplex: 'half' });
  srv.script('/fetch-chunks', [{ status: 503 }, { echo: true }]);
  const plain = await go('/fetch-chunks', [enc('ab'), enc('cd').buffer]).catch((e) => e);
  assert.equal(plain.cause?.code, 'ERR_INVALID_ARG_TYPE', `plain fetch refuses an ArrayBuffer chunk: ${plain}`);
  const undo = await retryGlobalFetch({ baseMs: 5 });
  try {
    const err = await go('/fetch-chunks', [enc('ab'), enc('cd').buffer]).then(
      async (res) => assert.fail(`a ${res.status} with the stored bodies ${JSON.stringify(stored('/fetch-chunks'))}`),
      (e) => e,
    );
    assert.equal(err.cause?.name, 'TypeError');
    assert.match(String(err.cause?.message), /^body: /);
    assert.deepEqual(stored('/fetch-chunks'), [], 'nothing sent');
    const res = await go('/fetch-chunks', [enc('ab'), 'cd', new DataView(enc('ef').buffer)]);
    assert.equal(res.status, 200);
    await res.body.cancel();
    assert.deepEqual(stored('/fetch-chunks'), ['abcdef', 'abcdef']);
  } finally {
    undo();
  }
});

test('a body over maxBufferBytes is never sent again (never fewer bytes): the call ends with the answer or the error; its later chunks are checked too', async () => {
  const tries = [];
  const d = agent.compose(retryInterceptor({ baseMs: 5, maxBufferBytes: 4, onDone: (i) => tries.push(i.attempts) }));
  const gen = (...chunks) =>
    (async function* () {
      for (const c of chunks) {
        if (c instanceof Error) throw c;
        yield c;
      }
    })();
  srv.script('/over-503', [{ status: 503 }, { echo: true }]);
  assert.deepEqual((await put(d, '/over-503', gen('abc', 'def', enc('gh'))))[0], { status: 503, stored: ['abcdefgh'] });
  srv.script('/over-reset', [{ reset: true }, { echo: true }]);
  const [reset] = await put(d, '/over-reset', gen('abc', 'def', enc('gh')));
  assert.deepEqual(reset.stored, ['abcdefgh'], `the reset's error ends the call: ${JSON.stringify(reset)}`);
  assert.ok(reset.error, JSON.stringify(reset));
  // (a body that breaks, or a chunk undici refuses, past the bound: the call fails with that error, tried once)
  srv.script('/over-broke', { echo: true });
  const [, broke] = await put(d, '/over-broke', gen('abcdef', new Error('late broke')));
  assert.equal(broke?.message, 'late broke');
  srv.script('/over-refused', { echo: true });
  const [refused, err] = await put(d, '/over-refused', gen('abcdef', enc('gh').buffer));
  assert.deepEqual(refused, { error: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', stored: [] });
  assert.match(err.message, /^body: /);
  assert.deepEqual(tries, [1, 1, 1, 1], 'each tried once');
  assert.deepEqual(stored('/over-broke'), []);
});

test('a body undici refuses is not a network failure: a URLSearchParams body fails once, not retried', async () => {
  const retried = [];
  const d = agent.compose(retryInterceptor({ baseMs: 1, onRetry: (i) => retried.push(i.error?.code) }));
  srv.script('/params', { echo: true });
  const [plain] = await put(agent, '/params', new URLSearchParams('a=1'));
  const [mine] = await put(d, '/params', new URLSearchParams('a=1'));
  assert.deepEqual(mine, plain);
  assert.deepEqual(mine, { error: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', stored: [] });
  assert.deepEqual(retried, [], 'never retried');
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * What the server saw of each attempt at `path`: the key ('generated' for
 * one of ours, the same on every attempt), the attempt header.
 */
function sent(path) {
  const h = seen(path);
  const keys = h.map((x) => x['idempotency-key']);
  const generated = keys[0] !== undefined && UUID.test(keys[0]) && keys.every((k) => k === keys[0]);
  return { attempts: h.length, key: generated ? 'generated' : keys[0], keys: new Set(keys).size, attempt: h.map((x) => x['x-attempt']) };
}

/** The request through the fetch driver (fetch's headers), then through undici's dispatcher (undici's form). */
async function both(name, { method, headers, undiciHeaders = headers }, options) {
  const o = { baseMs: 1, maxAttempts: 2, attemptHeader: 'x-attempt', ...options };
  const steps = [{ status: 503 }, { status: 201 }];
  srv.script(`/fetch-${name}`, steps);
  const res = await fetchWithBackoff(`${srv.url}/fetch-${name}`, { method, headers, body: method === 'GET' ? undefined : 'x' }, o);
  await res.arrayBuffer();
  srv.script(`/undici-${name}`, steps);
  const d = agent.compose(retryInterceptor(o));
  const r = await d.request({
    origin: srv.url,
    path: `/undici-${name}`,
    method,
    headers: undiciHeaders,
    body: method === 'GET' ? undefined : 'x',
  });
  await r.body.dump();
  return [sent(`/fetch-${name}`), sent(`/undici-${name}`)];
}

test('idempotencyKey: a GET gets no key, a POST one generated key on every attempt, in both drivers', async () => {
  const [f, u] = await both('get', { method: 'GET' }, { idempotencyKey: true });
  assert.deepEqual(f, { attempts: 2, key: undefined, keys: 1, attempt: ['attempt=1; max=2', 'attempt=2; max=2'] });
  assert.deepEqual(u, f);
  const [fp, up] = await both('post', { method: 'POST' }, { idempotencyKey: true });
  assert.deepEqual(fp, { attempts: 2, key: 'generated', keys: 1, attempt: ['attempt=1; max=2', 'attempt=2; max=2'] });
  assert.deepEqual(up, fp);
});

test("a caller's key is kept (never replaced by one generated) and makes its POST retryable, in both drivers, in every header form", async () => {
  const forms = {
    record: { headers: { 'Idempotency-Key': 'mine' } },
    pairs: { headers: [['idempotency-key', 'mine']], undiciHeaders: ['Idempotency-Key', 'mine'] },
    Headers: { headers: new Headers({ 'idempotency-key': 'mine' }), undiciHeaders: new Map([['idempotency-key', 'mine']]) },
  };
  for (const [form, h] of Object.entries(forms)) {
    for (const idempotencyKey of [false, true]) {
      const [f, u] = await both(`mine-${form}-${idempotencyKey}`, { method: 'POST', ...h }, { idempotencyKey });
      assert.deepEqual(f, { attempts: 2, key: 'mine', keys: 1, attempt: ['attempt=1; max=2', 'attempt=2; max=2'] }, form);
      assert.deepEqual(u, f, `${form}, idempotencyKey: ${idempotencyKey}`);
    }
  }
});

test('the one rule decides the retry: a POST without a key is sent once; a method outside `methods` too; retryNonIdempotent retries it, in both drivers', async () => {
  const cases = [
    ['post', { method: 'POST' }, {}, 1],
    ['put-unlisted', { method: 'PUT' }, { methods: ['GET'] }, 1],
    ['put-unlisted-keyed', { method: 'PUT' }, { methods: ['GET'], idempotencyKey: true }, 2],
    ['patch-any', { method: 'PATCH' }, { retryNonIdempotent: true }, 2],
    ['delete', { method: 'DELETE' }, {}, 2],
  ];
  for (const [name, request, options, attempts] of cases) {
    const [f, u] = await both(`rule-${name}`, request, options);
    assert.equal(f.attempts, attempts, `${name}: the fetch driver`);
    assert.deepEqual(u, f, name);
  }
});
