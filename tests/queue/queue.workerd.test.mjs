// The task queue's workerd entry in workerd (miniflare): the wasm imported
// as a compiled module, a MemoryStore queue run inside one request.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';

let mf;
after(() => mf?.dispose());

test('workerd: a TaskQueue processes, retries and gives up inside a request', { timeout: 30_000 }, async () => {
  mf = worker('queue.mjs');
  const res = await mf.dispatchFetch('http://localhost/');
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const r = JSON.parse(text);
  assert.deepEqual(r.states, [
    ['ok', 'processed', 0],
    ['flaky', 'processed', 1],
    ['doomed', 'error', 1],
  ]);
  assert.deepEqual(r.events.sort(), [
    ['error', 'doomed'],
    ['processed', 'flaky'],
    ['processed', 'ok'],
    ['retry', 'flaky'],
  ]);
  assert.deepEqual(r.tries.sort(), [
    ['doomed', 1],
    ['flaky', 2],
    ['ok', 1],
  ]);
});
