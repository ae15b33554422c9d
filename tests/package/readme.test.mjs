// The README's fetch examples, run as written: every ```js block of the
// section "fetchWithBackoff / withBackoff / retry", against the scripted
// server (https://api.example.com becomes its URL). Each block is written
// to a module under target/ (where 'wasm-backoff' resolves as for a user)
// and imported; what it logs and what the server saw are checked. The same
// for "Which protection do I want?"; the fleet's Worker examples are checked
// for where they hand flush() to waitUntil.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { startScripted } from '../server/scripted.mjs';

const ROOT = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('README.md', ROOT), 'utf8');
const section = readme.slice(readme.indexOf('## fetchWithBackoff / withBackoff / retry'));
const blocks = [...section.slice(0, section.indexOf('\n## ', 5)).matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

/** Runs block `i`; returns what it logged. */
async function run(i) {
  const dir = new URL('target/readme/', ROOT);
  mkdirSync(dir, { recursive: true });
  const file = new URL(`block-${i}-${Date.now()}.mjs`, dir);
  writeFileSync(file, blocks[i].replaceAll('https://api.example.com', srv.url));
  const logged = [];
  const log = console.log;
  console.log = (...args) => logged.push(args.join(' '));
  try {
    await import(pathToFileURL(file.pathname).href);
  } finally {
    console.log = log;
  }
  return logged;
}

test('the section has its four examples', () => assert.equal(blocks.length, 4));

test('shouldRetry: a pending job is polled until done; a 409 is not retried', async () => {
  srv.script('/jobs/7', [
    { status: 200, body: { state: 'pending' } },
    { status: 200, body: { state: 'done' } },
  ]);
  assert.deepEqual(await run(0), ['done']);
  assert.equal(srv.count('/jobs/7'), 2);
  srv.reset();
  srv.script('/jobs/7', [
    { status: 409, body: { state: 'conflict' } },
    { status: 200, body: { state: 'done' } },
  ]);
  assert.deepEqual(await run(0), ['conflict']);
  assert.equal(srv.count('/jobs/7'), 1);
});

test('beforeRetry: the retry carries the refreshed token', async () => {
  srv.script('/me', (req) => ({ status: req.headers.authorization === 'Bearer fresh' ? 200 : 401 }));
  assert.deepEqual(await run(1), ['200']);
  assert.deepEqual(
    srv.requests.filter((r) => r.path === '/me').map((r) => r.headers.authorization),
    ['Bearer expired', 'Bearer fresh'],
  );
});

test('onRetry and onDone log the request id and the outcome', async () => {
  srv.script('/items', [{ status: 503, headers: { 'x-request-id': 'req-1' } }, { status: 200 }]);
  const logged = await run(2);
  assert.equal(logged.length, 2, logged.join('\n'));
  assert.match(logged[0], /^attempt 1: 503 \(req-1\), again in \d+ ms$/);
  assert.equal(logged[1], 'success after 2 attempts');
});

test('idempotencyKey, attemptHeader, per-call options, extend and retry(fn)', async () => {
  srv.reset();
  srv.script('/orders', [{ status: 503 }, { status: 201 }]);
  srv.script('/items', { status: 200, body: 'ok' });
  assert.deepEqual(await run(3), ['201 function 2']);
  const orders = srv.requests.filter((r) => r.path === '/orders');
  assert.equal(orders.length, 2);
  assert.equal(orders[0].headers['idempotency-key'], orders[1].headers['idempotency-key']);
  assert.deepEqual(
    orders.map((r) => r.headers['amz-sdk-request']),
    ['attempt=1; max=5', 'attempt=2; max=5'],
  );
});

// "Which protection do I want?": its four examples, run as written.
const protections = readme.slice(readme.indexOf('## Which protection do I want?'));
const pblocks = [...protections.slice(0, protections.indexOf('\n## ', 5)).matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

test('"Which protection do I want?" has four examples, and each does what the text says', async () => {
  assert.equal(pblocks.length, 4);
  const runP = async (i) => {
    const saved = blocks[0];
    blocks[0] = pblocks[i];
    try {
      return await run(0);
    } finally {
      blocks[0] = saved;
    }
  };
  srv.script('/budget', [{ status: 503 }, { status: 200 }]);
  assert.deepEqual(await runP(0), ['200']);
  srv.script('/down', { status: 503 });
  assert.deepEqual(await runP(1), ['503', '503', 'api: open (tripped)', '503', 'refused until the next probe']);
  assert.equal(srv.count('/down'), 3, 'the 4th call sent nothing');
  assert.deepEqual(await runP(2), ['open']);
  srv.script('/limited', [{ status: 429, headers: { 'retry-after-ms': '50' } }, { status: 200 }]);
  assert.deepEqual(await runP(3), ['200']);
});

// The fleet's Worker examples (sharedGate, sharedBudget): a report whose request has ended is never
// answered in workerd, so flush() must reach waitUntil on every path, the call's error path included.
test("the fleet's Worker examples hand flush() to waitUntil in a finally (also when the call throws)", () => {
  const fleet = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => /\.flush\(\)/.test(b));
  assert.ok(fleet.length >= 2, `${fleet.length} examples with flush()`);
  for (const b of fleet) {
    for (const m of b.matchAll(/ctx\.waitUntil\(\w+\.flush\(\)\)/g)) {
      const before = b.slice(0, m.index);
      assert.ok(before.lastIndexOf('finally {') > before.lastIndexOf('await '), `not in a finally after the call:\n${b}`);
    }
  }
});
