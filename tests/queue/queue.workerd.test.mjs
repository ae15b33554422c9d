// The task queue's workerd entry in workerd (miniflare): the wasm imported
// as a compiled module, a MemoryStore queue run inside one request on the
// package's virtual clock (tests/workerd/queue.mjs): the exact tries, their
// order and events.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';

let mf;
after(() => mf?.dispose());

test('workerd: a TaskQueue processes, retries after its backoff and gives up inside a request', { timeout: 30_000 }, async () => {
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
  assert.deepEqual(r.tries, [
    ['ok', 0],
    ['flaky', 0],
    ['doomed', 0],
    ['flaky', 5],
  ]);
  assert.deepEqual(r.events, [
    ['processed', 'ok', 0],
    ['retry', 'flaky', 0],
    ['error', 'doomed', 0],
    ['processed', 'flaky', 5],
  ]);
  assert.equal(r.pending, 0, 'no timer left after stop()');
});
