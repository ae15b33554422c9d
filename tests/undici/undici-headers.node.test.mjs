// wasm-backoff/undici: the request's headers in each form undici's
// dispatch takes (a record, a flat array) and those callers hand it anyway
// (fetch-style pairs, a Map, a generator), as the attempt header and the
// idempotency key rewrite them; and the edges of pacing (the origin as a URL,
// a reset past maxRetryAfterMs) and of a body that fails to read. Against
// the scripted server on 127.0.0.1, through undici's Agent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'undici';
import { retryInterceptor } from 'wasm-backoff/undici';
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
  const t0 = Date.now();
  await send(d, '/url-origin');
  assert.ok(Date.now() - t0 >= 250, `held by the reset the URL origin was told: ${Date.now() - t0} ms`);
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
