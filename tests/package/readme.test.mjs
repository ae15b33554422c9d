// The README's quick starts, run as written (tests/support/markdown.mjs):
// every ```js block is written to a module under target/ and imported against
// the scripted server (https://api.example.com becomes its URL); what it logs
// and what the server saw are checked. A block that cannot run in Node is
// marked `<!-- not run: why -->` on the line before its fence. docs/*.md are
// run the same way by tests/package/docs.test.mjs.
//
// The README is what npm shows (scripts/build.sh copies it into pkg/): for
// users, its only commands are the install and the two commands of a clone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startScripted } from '../server/scripted.mjs';
import { ROOT, codeBlocks, runBlock, runnable } from '../support/markdown.mjs';

const README = 'README.md';
const blocks = runnable(README);
/** The runnable block under `heading` (a line of the README, such as "### `wasm-backoff/gate`…"). */
const under = (heading) => {
  const found = blocks.filter((b) => b.heading.startsWith(heading));
  assert.equal(found.length, 1, `README.md: one js block under ${heading}`);
  return found[0];
};
const ran = new Set();

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

function run(heading) {
  const block = under(heading);
  ran.add(block.line);
  return runBlock(block, srv.url);
}

test('wasm-backoff: fetchWithBackoff retries a 503; withBackoff wraps fetch', async () => {
  srv.reset();
  srv.script('/items', [{ status: 503 }, { status: 200 }, { status: 200 }]);
  assert.deepEqual(await run('### `wasm-backoff`:'), ['200', '200']);
  assert.equal(srv.count('/items'), 3);
});

test('wasm-backoff/backoff: the schedule, and a seeded preset', async () => {
  assert.deepEqual(await run('### `wasm-backoff/backoff`'), ['100 200 400 undefined', '1814']);
});

test('wasm-backoff/gate: a gated call retries its 503; the target stays closed', async () => {
  srv.reset();
  srv.script('/items', [{ status: 503 }, { status: 200 }]);
  assert.deepEqual(await run('### `wasm-backoff/gate`'), ['200 closed']);
  assert.equal(srv.count('/items'), 2);
});

test('wasm-backoff/budget: a retry within the budget', async () => {
  srv.reset();
  srv.script('/items', [{ status: 503 }, { status: 200 }]);
  assert.deepEqual(await run('### `wasm-backoff/budget`'), ['200']);
  assert.equal(srv.count('/items'), 2);
});

test('wasm-backoff/queue: a task is retried after a 503 and processed once', async () => {
  srv.reset();
  srv.script('/forms', [{ status: 503 }, { status: 200 }]);
  assert.deepEqual(await run('### `wasm-backoff/queue`'), ['form-1']);
  const posts = srv.requests.filter((r) => r.path === '/forms');
  assert.deepEqual(
    posts.map((r) => r.method),
    ['POST', 'POST'],
  );
});

test('wasm-backoff/stats: the exact law of full jitter', async () => {
  assert.deepEqual(await run('### `wasm-backoff/stats`'), ['0 200 360 400']);
});

test('wasm-backoff/query: a TanStack QueryClient retries a 503', async () => {
  srv.reset();
  srv.script('/items', [{ status: 503 }, { status: 200, body: 'ok' }]);
  assert.deepEqual(await run('### `wasm-backoff/query`'), ['ok']);
  assert.equal(srv.count('/items'), 2);
});

test("wasm-backoff/undici: Node's global fetch retries a 503", async () => {
  srv.reset();
  srv.script('/items', [{ status: 503 }, { status: 200, body: 'ok' }]);
  assert.deepEqual(await run('### `wasm-backoff/undici`: every `fetch` of a Node process'), ['200']);
  assert.equal(srv.count('/items'), 2);
});

test('every ```js block of the README ran above, or is marked <!-- not run: why -->', () => {
  const left = blocks.filter((b) => !ran.has(b.line)).map((b) => `README.md:${b.line} (${b.heading})`);
  assert.deepEqual(left, [], 'run these in tests/package/readme.test.mjs, or mark them');
});

test('the README is for users: its only shell commands are the install and the two commands', () => {
  const commands = codeBlocks(README)
    .filter((b) => b.lang === 'sh')
    .flatMap((b) => b.code.split('\n'))
    .map((l) => l.replace(/#.*/, '').trim())
    .filter(Boolean);
  assert.deepEqual(commands, ['npm install wasm-backoff', 'npm run demo', 'npm test']);
  // .ci/run runs exactly the README's test command.
  assert.match(readFileSync(new URL('.ci/run', ROOT), 'utf8'), /^exec npm test$/m);
});
