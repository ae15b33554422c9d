// The recipes of docs/integrations.md in Node 20 against the scripted server
// on 127.0.0.1, where every try fails: each client, its own retry turned off
// and withBackoff as its fetch, sends exactly maxAttempts requests (not its
// tries times ours) and throws its own error for the last answer, carrying
// the status. The happy path (a 503 then a 429's wait) runs from the docs'
// blocks in tests/package/docs.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import axios from 'axios';
import ky from 'ky';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { withBackoff } from 'wasm-backoff';
import { startScripted } from '../server/scripted.mjs';

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
