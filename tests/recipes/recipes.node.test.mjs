// The recipes of docs/integrations.md in Node 20 against the scripted server
// on 127.0.0.1, where every try fails: each client, its own retry turned off
// and withBackoff as its fetch, sends exactly maxAttempts requests (not its
// tries times ours) and throws its own error for the last answer, carrying
// the status. The OpenAI and Anthropic recipes, run as the docs write them
// (their options under a `delay` hook that records each wait and waits
// none: `over` of tests/support/markdown.mjs), retry what their SDKs
// retry, on the SDK's schedule, and read retry-after-ms first. The happy
// path (a 503 then a 429's wait) runs from the docs' blocks in
// tests/package/docs.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import axios from 'axios';
import ky from 'ky';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { withBackoff } from 'wasm-backoff';
import { startScripted } from '../server/scripted.mjs';
import { runBlock, runnable } from '../support/markdown.mjs';
import { SDK_ANSWERS } from './answers.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

const retrying = () => withBackoff(fetch, { baseMs: 1, maxAttempts: 3, idempotencyKey: true, retryOn: [429, 503, 529] });

const CLIENTS = {
  axios: {
    path: '/a',
    call: () => axios.create({ baseURL: srv.url, adapter: 'fetch', env: { fetch: retrying() } }).get('/a'),
    status: (e) => e.response?.status,
  },
  ky: {
    path: '/k',
    call: () => ky.create({ prefixUrl: srv.url, retry: 0, fetch: retrying() }).get('k'),
    status: (e) => e.response?.status,
  },
  OpenAI: {
    path: '/v1/chat/completions',
    call: () =>
      new OpenAI({ apiKey: 'k', baseURL: `${srv.url}/v1`, maxRetries: 0, fetch: retrying() }).chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    status: (e) => e.status,
  },
  Anthropic: {
    path: '/v1/messages',
    call: () =>
      new Anthropic({ apiKey: 'k', baseURL: srv.url, maxRetries: 0, fetch: retrying() }).messages.create({
        model: 'm',
        max_tokens: 1,
        messages: [{ role: 'user', content: 'hi' }],
      }),
    status: (e) => e.status,
  },
};

for (const [name, { path, call, status }] of Object.entries(CLIENTS)) {
  test(`${name}: every try fails with 503: maxAttempts requests in all, the client's error carries the 503`, async () => {
    srv.reset();
    srv.script(path, { status: 503, body: { error: { type: 'overloaded', message: 'down' } } });
    const err = await call().then(
      () => assert.fail('resolved'),
      (e) => e,
    );
    assert.equal(status(err), 503, String(err));
    assert.equal(srv.count(path), 3);
  });
}

test('ky with its own retry left on multiplies the tries: the reason for retry: 0', async () => {
  srv.reset();
  srv.script('/k2', { status: 503 });
  const api = ky.create({ prefixUrl: srv.url, retry: { limit: 1, backoffLimit: 1 }, fetch: retrying() });
  await assert.rejects(api.get('k2'), { name: 'HTTPError' });
  assert.equal(srv.count('/k2'), 6);
});

test('axios: a POST without a key is sent once (nothing is sent twice that was not asked for)', async () => {
  srv.reset();
  srv.script('/orders', [{ status: 503 }, { status: 201 }]);
  const api = axios.create({ baseURL: srv.url, adapter: 'fetch', env: { fetch: withBackoff(fetch, { baseMs: 1 }) } });
  await assert.rejects(api.post('/orders', { item: 1 }), (e) => e.response?.status === 503);
  assert.equal(srv.count('/orders'), 1);
});

test('ky: a JSON PUT is sent again whole after a 503', async () => {
  srv.reset();
  srv.script('/doc', [{ status: 503 }, { echo: true }]);
  const api = ky.create({ prefixUrl: srv.url, retry: 0, fetch: withBackoff(fetch, { baseMs: 1 }) });
  const echoed = await api.put('doc', { json: { a: 1 } }).json();
  assert.equal(echoed.body, '{"a":1}');
  assert.deepEqual(
    srv.requests.filter((r) => r.path === '/doc').map((r) => r.body),
    ['{"a":1}', '{"a":1}'],
  );
});

test("OpenAI: a request's own maxRetries turns the SDK's retry back on, multiplying the tries: the reason to leave it out", async () => {
  srv.reset();
  srv.script('/v1/chat/completions', { status: 503, headers: { 'retry-after-ms': '1' } });
  const openai = new OpenAI({ apiKey: 'k', baseURL: `${srv.url}/v1`, maxRetries: 0, fetch: retrying() });
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  await assert.rejects(openai.chat.completions.create(body, { maxRetries: 1 }), { status: 503 });
  assert.equal(srv.count('/v1/chat/completions'), 6);
});

// The SDK recipes as docs/integrations.md writes them.
const DOC = 'docs/integrations.md';
process.env.OPENAI_API_KEY ??= 'sk-test';
process.env.ANTHROPIC_API_KEY ??= 'sk-ant-test';
const SDKS = {
  OpenAI: {
    heading: '### The OpenAI SDK',
    path: '/v1/chat/completions',
    alone: () => new OpenAI({ apiKey: 'k', baseURL: `${srv.url}/v1`, maxRetries: 1 }),
    call: (c) => c.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    ok: SDK_ANSWERS['/v1/chat/completions'],
  },
  Anthropic: {
    heading: '### The Anthropic SDK',
    path: '/v1/messages',
    alone: () => new Anthropic({ apiKey: 'k', baseURL: srv.url, maxRetries: 1 }),
    call: (c) => c.messages.create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'hi' }] }),
    ok: SDK_ANSWERS['/v1/messages'],
  },
};

/**
 * Runs the recipe under `heading` as written, every wait recorded and none
 * waited (a `delay` hook laid over its options, no jitter); resolves with
 * the waits' proposals and what the server named, whether the call settles
 * or throws.
 */
async function recipe(heading) {
  const block = runnable(DOC).find((b) => b.heading === heading);
  assert.ok(block, `${DOC}: no runnable block under ${heading}`);
  const waits = [];
  const named = [];
  const delay = ({ delayMs, retryAfterMs }) => {
    waits.push(delayMs);
    named.push(retryAfterMs);
    return 0;
  };
  const logged = await runBlock(block, srv.url, { over: { jitter: 'none', delay } }).catch((e) => [e]);
  return { logged, waits, named };
}

/** The statuses asked of both: the SDKs retry 408, 409, 429 and every 5xx. */
const STATUSES = [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 501, 502, 503, 504, 520, 521, 522, 524, 529];

for (const [name, { heading, path, alone, call, ok }] of Object.entries(SDKS)) {
  test(`${name}: the recipe retries each status its SDK retries, and no other`, async () => {
    const differ = [];
    for (const status of STATUSES) {
      srv.reset();
      srv.script(path, [{ status }, { status: 200, body: ok }]);
      const sdk = alone();
      // The SDK's own wait (0.5 s and more) made 1 ms: only what it retries is asked here.
      sdk.calculateDefaultRetryTimeoutMillis = () => 1;
      await call(sdk).catch(() => {});
      const bySdk = srv.count(path) === 2;
      srv.reset();
      srv.script(path, [{ status }, { status: 200, body: ok }]);
      await recipe(heading);
      const byRecipe = srv.count(path) === 2;
      if (bySdk !== byRecipe)
        differ.push(`${status}: the SDK ${bySdk ? 'retries' : 'does not'}, the recipe ${byRecipe ? 'does' : 'does not'}`);
    }
    assert.deepEqual(differ, []);
  });

  test(`${name}: the recipe's schedule is the SDK's (3 tries, 0.5 s then 1 s); a 429 or 529 draws on the 1 s throttling base`, async () => {
    for (const [status, want] of [
      [500, [500, 1000]],
      [429, [1000, 2000]],
      [529, [1000, 2000]],
    ]) {
      srv.reset();
      srv.script(path, { status });
      const { waits } = await recipe(heading);
      assert.deepEqual(waits, want, `${status}: the waits before each retry (unjittered)`);
      assert.equal(srv.count(path), 3, `${status}: tries`);
    }
  });

  test(`${name}: retry-after-ms wins over a Retry-After beside it, as the SDK reads them`, async () => {
    srv.reset();
    srv.script(path, [
      { status: 429, headers: { 'retry-after': '2', 'retry-after-ms': '40' } },
      { status: 200, body: ok },
    ]);
    const { logged, named } = await recipe(heading);
    assert.deepEqual(logged, ['hi']);
    assert.deepEqual(named, [40]);
  });
}

test("Anthropic: the recipe's model is current (the SDK warns of no deprecation)", async () => {
  srv.reset();
  srv.script('/v1/messages', { status: 200, body: SDKS.Anthropic.ok });
  const warned = [];
  const warn = console.warn;
  console.warn = (...args) => warned.push(args.join(' '));
  try {
    assert.deepEqual((await recipe(SDKS.Anthropic.heading)).logged, ['hi']);
  } finally {
    console.warn = warn;
  }
  assert.deepEqual(warned, []);
});

test(`${DOC}: every recipe shows production waits (baseMs of 100 ms or more; tests lay their own over them)`, () => {
  const fast = runnable(DOC)
    .filter((b) => [...b.code.matchAll(/\bbaseMs: ([\d_]+)/g)].some((m) => +m[1].replaceAll('_', '') < 100))
    .map((b) => `${b.file}:${b.line} (${b.heading})`);
  assert.deepEqual(fast, []);
});
