// The code of docs/around.md (auth, dedupe, fallback and staleIfError,
// quota), run as written against the scripted server (tests/support/
// markdown.mjs: https://api.example.com becomes its URL), with the package
// as a user imports it. Its blocks are marked `<!-- not run: … -->` for
// tests/package/docs.test.mjs, which names this file: each runs here, and
// this file fails if the page has a ```js block it does not run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startScripted } from '../server/scripted.mjs';
import { codeBlocks, runBlock } from '../support/markdown.mjs';
import { SDK_ANSWERS } from '../recipes/answers.mjs';

const PAGE = 'docs/around.md';
const blocks = codeBlocks(PAGE).filter((b) => b.lang === 'js');
/** The production waits, in milliseconds (as tests/package/docs.test.mjs lays them). */
const FAST = { over: { baseMs: 1, throttleBaseMs: 10 } };

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

test(`${PAGE} has the five examples this file runs, each marked for docs.test.mjs`, () => {
  assert.deepEqual(
    blocks.map((b) => b.heading),
    [
      '## A token refresh for every 401: `wasm-backoff/auth`',
      '## One request for many identical GETs: `wasm-backoff/dedupe`',
      '## A fallback when the service stays down: `fallback` and `staleIfError`',
      '## A fallback when the service stays down: `fallback` and `staleIfError`',
      '## Quotas for rate-limited APIs: `wasm-backoff/quota`',
    ],
  );
  for (const b of blocks) assert.match(b.skip ?? '', /tests\/auth\/around-docs\.node\.test\.mjs runs it/);
});

test('auth: three calls with an expired token, one refresh', async () => {
  srv.reset();
  srv.script('/token', { status: 200, body: { access_token: 'fresh' }, delayMs: 50 });
  srv.script('*', (req) => ({ status: req.headers.authorization === 'Bearer fresh' ? 200 : 401 }));
  assert.deepEqual(await runBlock(blocks[0], srv.url), ['200 200 200 (1 refresh)']);
  assert.equal(srv.count('/token'), 1);
  const items = srv.requests.filter((r) => r.path.startsWith('/items/'));
  assert.equal(items.length, 6);
  srv.reset();
});

test('dedupe: ten callers, one request', async () => {
  srv.script('/me', { status: 200, body: { name: 'Ada' }, delayMs: 50 });
  assert.deepEqual(await runBlock(blocks[1], srv.url), ['10 Ada']);
  assert.equal(srv.count('/me'), 1);
  srv.reset();
});

test('fallback: a default answer after the last attempt', async () => {
  srv.script('/recommendations', { status: 503 });
  assert.deepEqual(await runBlock(blocks[2], srv.url, FAST), ['exhausted 503']);
  assert.equal(srv.count('/recommendations'), 3);
  srv.reset();
});

test('staleIfError: the copy, with an Age, once the service is down', async () => {
  srv.script('/prices', [{ status: 200, body: { eur: 1 } }, { status: 503 }]);
  assert.deepEqual(await runBlock(blocks[3], srv.url, FAST), ['{"eur":1}', '200 {"eur":1} true']);
  assert.equal(srv.count('/prices'), 6, 'the first call, then the second and its four retries');
  srv.reset();
});

test('quota: the OpenAI SDK through a quota; the model is its key', async () => {
  // (the recipe reads the key from the environment, as the SDK does)
  process.env.OPENAI_API_KEY ??= 'sk-test';
  srv.script('/v1/chat/completions', {
    status: 200,
    body: SDK_ANSWERS['/v1/chat/completions'],
    headers: { 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '499', 'x-ratelimit-reset-requests': '120ms' },
  });
  assert.deepEqual(await runBlock(blocks[4], srv.url), ['hi 500']);
  assert.equal(srv.count('/v1/chat/completions'), 1);
  srv.reset();
});
