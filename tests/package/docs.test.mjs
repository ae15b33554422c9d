// The code of docs/*.md, run as written (tests/support/markdown.mjs): each
// ```js block is written to a module under target/ and imported against the
// scripted server (https://api.example.com becomes its URL); what it logs and
// what the server saw are checked. A block written with production waits
// (docs/integrations.md) runs with FAST laid over its options. A block that cannot run in Node (a Worker,
// a Service Worker, a placeholder) is marked `<!-- not run: why -->` on the
// line before its fence; the last test fails for any other block no test ran.
// The fleet's Worker examples are checked for where they hand flush() to waitUntil.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { startScripted } from '../server/scripted.mjs';
import { ROOT, codeBlocks, runBlock, runnable } from '../support/markdown.mjs';
import { SDK_ANSWERS } from '../recipes/answers.mjs';

const DOCS = readdirSync(new URL('docs/', ROOT))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `docs/${f}`);
const ran = new Set();

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

/** Runs the `i`-th runnable ```js block of `file` (`options`: runBlock's); returns what it logged. */
function run(file, i, options) {
  const block = runnable(file)[i];
  assert.ok(block, `${file}: no runnable js block ${i}`);
  ran.add(`${file}:${block.line}`);
  return runBlock(block, srv.url, options);
}

/** Laid over a block's options when it shows production waits: the same schedule, in milliseconds. */
const FAST = { over: { baseMs: 1, throttleBaseMs: 10 } };

// docs/fetch.md, "fetchWithBackoff / withBackoff / retry": each hook.
const FETCH = 'docs/fetch.md';

test(`${FETCH} has its four examples`, () =>
  assert.equal(runnable(FETCH).filter((b) => b.heading === '## fetchWithBackoff / withBackoff / retry').length, 4));

test('shouldRetry: a pending job is polled until done; a 409 is not retried', async () => {
  srv.script('/jobs/7', [
    { status: 200, body: { state: 'pending' } },
    { status: 200, body: { state: 'done' } },
  ]);
  assert.deepEqual(await run(FETCH, 0), ['done']);
  assert.equal(srv.count('/jobs/7'), 2);
  srv.reset();
  srv.script('/jobs/7', [
    { status: 409, body: { state: 'conflict' } },
    { status: 200, body: { state: 'done' } },
  ]);
  assert.deepEqual(await run(FETCH, 0), ['conflict']);
  assert.equal(srv.count('/jobs/7'), 1);
});

test('beforeRetry: the retry carries the refreshed token', async () => {
  srv.script('/me', (req) => ({ status: req.headers.authorization === 'Bearer fresh' ? 200 : 401 }));
  assert.deepEqual(await run(FETCH, 1), ['200']);
  assert.deepEqual(
    srv.requests.filter((r) => r.path === '/me').map((r) => r.headers.authorization),
    ['Bearer expired', 'Bearer fresh'],
  );
});

test('onRetry and onDone log the request id and the outcome', async () => {
  srv.script('/items', [{ status: 503, headers: { 'x-request-id': 'req-1' } }, { status: 200 }]);
  const logged = await run(FETCH, 2);
  assert.equal(logged.length, 2, logged.join('\n'));
  assert.match(logged[0], /^attempt 1: 503 \(req-1\), again in \d+ ms$/);
  assert.equal(logged[1], 'success after 2 attempts');
});

test('idempotencyKey, attemptHeader, per-call options, extend and retry(fn)', async () => {
  srv.reset();
  srv.script('/orders', [{ status: 503 }, { status: 201 }]);
  srv.script('/items', { status: 200, body: 'ok' });
  assert.deepEqual(await run(FETCH, 3), ['201 function 2']);
  const orders = srv.requests.filter((r) => r.path === '/orders');
  assert.equal(orders.length, 2);
  assert.equal(orders[0].headers['idempotency-key'], orders[1].headers['idempotency-key']);
  assert.deepEqual(
    orders.map((r) => r.headers['amz-sdk-request']),
    ['attempt=1; max=5', 'attempt=2; max=5'],
  );
});

// docs/telemetry.md: spans and metrics of a withBackoff client and of retry(fn).
const TELEMETRY = 'docs/telemetry.md';

test(`${TELEMETRY}: the spans of a call retried once, and its retries per call`, async () => {
  assert.equal(runnable(TELEMETRY).length, 1);
  srv.script('/items', [{ status: 503 }, { status: 200 }]);
  assert.deepEqual(await run(TELEMETRY, 0), [
    '200',
    'GET 503',
    'GET 1 200',
    'GET 200',
    'attempt',
    'retry success',
    'api: 1 retries, jobs: 0 retries',
  ]);
  srv.reset();
});

// docs/fetch.md, "Waits the outcome chooses": one example per feature.
const WAITS = '## Waits the outcome chooses';
/** The index among the runnable blocks of docs/fetch.md of the `k`-th block of that section. */
const waits = (k) => {
  const i = runnable(FETCH).findIndex((b) => b.heading === WAITS);
  assert.ok(i >= 0 && runnable(FETCH)[i + k]?.heading === WAITS, `${FETCH}: no block ${k} under ${WAITS}`);
  return i + k;
};

test(`${FETCH} "Waits the outcome chooses": the delay hook keeps a short server wait`, async () => {
  srv.script('/reports/9', [{ status: 429, headers: { 'retry-after-ms': '20' } }, { status: 200 }]);
  assert.deepEqual(await run(FETCH, waits(0)), ['200']);
  const at = srv.requests.filter((r) => r.path === '/reports/9').map((r) => r.at);
  assert.ok(at.length === 2 && at[1] - at[0] >= 19, String(at));
  srv.script('/reports/9', [{ status: 503 }, { status: 200 }]);
  assert.deepEqual(await run(FETCH, waits(0)), ['503'], 'a 503 without a wait: given up');
});

test(`${FETCH} "Waits the outcome chooses": retry(fn) waits what the SDK-shaped error carries`, async () => {
  srv.script('/v1/complete', [
    { status: 429, headers: { 'retry-after-ms': '30' } },
    { status: 200, body: { text: 'hi' } },
  ]);
  assert.deepEqual(await run(FETCH, waits(1)), ['hi']);
  const at = srv.requests.filter((r) => r.path === '/v1/complete').map((r) => r.at);
  assert.ok(at.length === 2 && at[1] - at[0] >= 29, String(at));
});

test(`${FETCH} "Waits the outcome chooses": retryOnTimeout, the clamp and x-should-retry`, async () => {
  srv.script('/search', [
    { status: 503, headers: { 'retry-after': '3600' } },
    { status: 404, headers: { 'x-should-retry': 'true' } },
    { status: 200 },
  ]);
  assert.deepEqual(await run(FETCH, waits(2)), ['200 3']);
});

test(`${FETCH} "Waits the outcome chooses": pacing holds the next call until the reset`, async () => {
  srv.script('/quota', { status: 200, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' } });
  assert.deepEqual(await run(FETCH, waits(3)), ['TimeoutError']);
  assert.equal(srv.count('/quota'), 1, 'the held call sent nothing');
});

// docs/fetch.md, "Streams": one example per feature of wasm-backoff/stream, found by its heading.
const streamBlock = (heading) => {
  const block = runnable(FETCH).find((b) => b.heading === `### ${heading}`);
  assert.ok(block, `${FETCH}: no runnable block under ### ${heading}`);
  ran.add(`${block.file}:${block.line}`);
  return runBlock(block, srv.url);
};

test('streams: the idle timeout ends a body that went silent', async () => {
  srv.script('/events', { size: 5000, chunk: 1000, stallAfter: 3000 });
  const logged = await streamBlock('Idle timeout');
  assert.equal(logged.at(-1), 'TimeoutError');
  assert.ok(logged.length >= 2, logged.join('\n'));
});

test('streams: a first chunk that never comes is retried', async () => {
  srv.script('/completions', [{ size: 1000, stallAfter: 0 }, { size: 1000 }]);
  assert.deepEqual(await streamBlock('First chunk'), ['attempt 1: TimeoutError', '200 1000']);
  assert.equal(srv.count('/completions'), 2);
});

test('streams: a cut download is resumed with Range and If-Range', async () => {
  const headers = { etag: '"v1"' };
  srv.script('/file.bin', [
    { size: 200_000, range: true, headers, cutAfter: 50_000 },
    { size: 200_000, range: true, headers },
  ]);
  assert.deepEqual(await streamBlock('Resume a broken download'), ['200000']);
  const reqs = srv.requests.filter((r) => r.path === '/file.bin');
  assert.equal(reqs.length, 2);
  assert.match(reqs[1].headers.range, /^bytes=\d+-$/);
  assert.equal(reqs[1].headers['if-range'], '"v1"');
});

test('streams: a body function makes a fresh body per attempt', async () => {
  srv.script('/upload', [{ status: 503 }, { status: 200 }]);
  assert.deepEqual(await streamBlock('Streamed request bodies'), ['200 2']);
  assert.deepEqual(
    srv.requests.filter((r) => r.path === '/upload').map((r) => r.body),
    ['part 1', 'part 2'],
  );
});

// docs/protections.md, "Which protection do I want?": its four examples.
const PROTECTIONS = 'docs/protections.md';

test(`${PROTECTIONS} "Which protection do I want?" has four examples, and each does what the text says`, async () => {
  const blocks = runnable(PROTECTIONS);
  assert.deepEqual(
    blocks.map((b) => b.heading),
    Array(4).fill('## Which protection do I want?'),
  );
  srv.script('/budget', [{ status: 503 }, { status: 200 }]);
  assert.deepEqual(await run(PROTECTIONS, 0), ['200']);
  srv.script('/down', { status: 503 });
  assert.deepEqual(await run(PROTECTIONS, 1), ['503', '503', 'api: open (tripped)', '503', 'refused until the next probe']);
  assert.equal(srv.count('/down'), 3, 'the 4th call sent nothing');
  assert.deepEqual(await run(PROTECTIONS, 2), ['open']);
  srv.script('/limited', [{ status: 429, headers: { 'retry-after-ms': '50' } }, { status: 200 }]);
  assert.deepEqual(await run(PROTECTIONS, 3), ['200']);
});

// docs/integrations.md, "TanStack Query and SWR": a QueryClient with queryRetry.
const INTEGRATIONS = 'docs/integrations.md';

test(`${INTEGRATIONS}: TanStack Query retries a 503 and waits a 429's retry-after-ms`, async () => {
  assert.equal(runnable(INTEGRATIONS).length, 6);
  srv.reset();
  srv.script('/items', [
    { status: 503 },
    { status: 429, headers: { 'retry-after-ms': '20' } },
    { status: 200, body: [{ id: 1 }, { id: 2 }] },
  ]);
  assert.deepEqual(await run(INTEGRATIONS, 0, { over: { baseMs: 1 } }), ['2']);
  const at = srv.requests.filter((r) => r.path === '/items').map((r) => r.at);
  assert.equal(at.length, 3);
  assert.ok(at[2] - at[1] >= 19, `the 429's wait: ${at[2] - at[1]} ms`);
});

// docs/integrations.md, the recipes and wasm-backoff/undici: each client
// gets a 503 then a 429 with retry-after-ms: 50; three requests in all (its own
// retry is off: no double retry), the last after the server's wait.
const RECIPES = [
  [1, 'axios', '/items', 503, ['2']],
  [2, 'ky', '/items', 503, ['2']],
  [3, 'OpenAI', '/v1/chat/completions', 503, ['hi']],
  [4, 'Anthropic', '/v1/messages', 529, ['hi']],
  [5, 'wasm-backoff/undici', '/items', 503, ['200']],
];
const OK = { '/items': [{ id: 1 }, { id: 2 }], ...SDK_ANSWERS };
for (const [i, name, path, first, logged] of RECIPES) {
  test(`${INTEGRATIONS}: ${name} retries a ${first} and waits a 429's retry-after-ms, once`, async () => {
    process.env.OPENAI_API_KEY ??= 'sk-test';
    process.env.ANTHROPIC_API_KEY ??= 'sk-ant-test';
    srv.reset();
    srv.script(path, [{ status: first }, { status: 429, headers: { 'retry-after-ms': '50' } }, { status: 200, body: OK[path] }]);
    assert.deepEqual(await run(INTEGRATIONS, i, FAST), logged);
    const sent = srv.requests.filter((r) => r.path === path);
    assert.equal(sent.length, 3);
    assert.ok(sent[2].at - sent[1].at >= 49, `the 429's wait: ${sent[2].at - sent[1].at} ms`);
    // The SDKs' POSTs: one idempotency key on every try.
    if (sent[0].method === 'POST') {
      assert.match(sent[0].headers['idempotency-key'], /^[0-9a-f-]{36}$/);
      assert.equal(new Set(sent.map((r) => r.headers['idempotency-key'])).size, 1);
    }
  });
}

// docs/queue.md, "Outbox": a stored POST replayed after a 503, its key on both tries.
test('docs/queue.md: the outbox stores a POST and replays it', async () => {
  srv.reset();
  srv.script('/forms', [{ status: 503 }, { status: 201 }]);
  const blocks = runnable('docs/queue.md');
  const i = blocks.findIndex((b) => b.heading === '## Outbox: requests sent later');
  assert.deepEqual(await run('docs/queue.md', i), ['processed']);
  const sent = srv.requests.filter((r) => r.path === '/forms');
  assert.deepEqual(
    sent.map((r) => r.body),
    ['{"name":"Ada"}', '{"name":"Ada"}'],
  );
  assert.match(sent[0].headers['idempotency-key'], /^[0-9a-f-]{36}$/);
  assert.equal(sent[1].headers['idempotency-key'], sent[0].headers['idempotency-key']);
});

// docs/hedging.md: a hedge wins over a hung attempt; a failover to a backup origin (a second server).
const HEDGING = 'docs/hedging.md';

test(`${HEDGING}: the hedge wins; the retry goes to the backup, then calls go straight there`, async () => {
  assert.equal(runnable(HEDGING).length, 2);
  srv.script('/profile', [{ hang: true }, { status: 200, body: 'from the hedge' }]);
  assert.deepEqual(await run(HEDGING, 0), ['attempt 2 won (1 hedge, 2 requests)', 'from the hedge']);
  const backup = await startScripted();
  try {
    srv.script('/inventory', { status: 503 });
    backup.script('/inventory', { status: 200 });
    const block = runnable(HEDGING)[1];
    ran.add(`${HEDGING}:${block.line}`);
    const logged = await runBlock({ ...block, code: block.code.replaceAll('https://backup.example.com', backup.url) }, srv.url);
    assert.deepEqual(logged, ['retry to backup', 'answered by backup', 'answered by backup', 'open']);
    assert.deepEqual([srv.count('/inventory'), backup.count('/inventory')], [1, 2]);
  } finally {
    await backup.close();
  }
});

// docs/testing.md: one example per common test, each asserting on virtual time itself (a failed
// assert rejects the import); what each logs is checked here, and that none sent a request.
const TESTING = 'docs/testing.md';

test(`${TESTING}: Retry-After, the deadline, the breaker and chaos, on the virtual clock`, async () => {
  assert.deepEqual(
    runnable(TESTING).map((b) => b.heading),
    ['## Retries after Retry-After', '## Gives up at the deadline', '## Breaker opens', '## Chaos'],
  );
  srv.reset();
  const realSetTimeout = globalThis.setTimeout;
  assert.deepEqual(await run(TESTING, 0), ['3 attempts, 2 waits of 2 s']);
  assert.deepEqual(await run(TESTING, 1), ['TimeoutError at 10000 ms']);
  assert.deepEqual(await run(TESTING, 2), ['open (tripped), half-open (round-over), closed (probe-succeeded)']);
  assert.match((await run(TESTING, 3)).join('\n'), /^20 calls succeeded through \d+ faults$/);
  assert.equal(globalThis.setTimeout, realSetTimeout, 'each example uninstalled its clock');
  assert.equal(srv.requests.length, 0, 'the scripted fetch answered: nothing reached a server');
});

// docs/connections.md: the EventSource's test example, on the virtual clock (asserts on itself).
test('docs/connections.md: an EventSource on a scripted stream and a virtual clock', async () => {
  srv.reset();
  const realSetTimeout = globalThis.setTimeout;
  const logged = await run('docs/connections.md', 0);
  assert.equal(logged.length, 1);
  assert.match(logged[0], /^reconnected after \d+ ms, then \d+ ms$/);
  assert.equal(globalThis.setTimeout, realSetTimeout, 'the example uninstalled its clock');
  assert.equal(srv.requests.length, 0, 'the scripted fetch answered: nothing reached a server');
});

// The fleet's Worker examples (sharedGate, sharedBudget): a report whose request has ended is never
// answered in workerd, so flush() must reach waitUntil on every path, the call's error path included.
test("the fleet's Worker examples hand flush() to waitUntil in a finally (also when the call throws)", () => {
  const fleet = DOCS.flatMap(codeBlocks)
    .filter((b) => b.lang === 'js' && /\.flush\(\)/.test(b.code))
    .map((b) => b.code);
  assert.ok(fleet.length >= 2, `${fleet.length} examples with flush()`);
  for (const b of fleet) {
    for (const m of b.matchAll(/ctx\.waitUntil\(\w+\.flush\(\)\)/g)) {
      const before = b.slice(0, m.index);
      assert.ok(before.lastIndexOf('finally {') > before.lastIndexOf('await '), `not in a finally after the call:\n${b}`);
    }
  }
});

test('every ```js block of docs/ ran above, or is marked <!-- not run: why --> on the line before', () => {
  const left = DOCS.flatMap(runnable)
    .filter((b) => !ran.has(`${b.file}:${b.line}`))
    .map((b) => `${b.file}:${b.line} (${b.heading})`);
  assert.deepEqual(left, [], 'run these in tests/package/docs.test.mjs, or mark them');
});
