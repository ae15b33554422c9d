// `wasm-backoff/stream` in Node: what only Node can observe (its shared
// scenarios run in tests/fetch/fetch.node.test.mjs): the timers of a body
// that ends, is cancelled, errors or is dropped unread.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWithBackoff } from 'wasm-backoff/stream';
import { startScripted } from '../server/scripted.mjs';
import { timers, sleep } from '../support/wait.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

test('no idle timer outlives a body that ends, is cancelled or errors', async () => {
  srv.script('/whole', { size: 100_000 });
  srv.script('/stall', { size: 100_000, stallAfter: 20_000 });
  const before = timers();
  const whole = await fetchWithBackoff(`${srv.url}/whole`, undefined, { idleTimeoutMs: 60_000 });
  assert.equal((await whole.arrayBuffer()).byteLength, 100_000);
  assert.equal(timers(), before, 'ended: no timer');
  const cancelled = await fetchWithBackoff(`${srv.url}/whole`, undefined, { idleTimeoutMs: 60_000 });
  const reader = cancelled.body.getReader();
  await reader.read();
  await reader.cancel();
  assert.equal(timers(), before, 'cancelled: no timer');
  const stalled = await fetchWithBackoff(`${srv.url}/stall`, undefined, { idleTimeoutMs: 50 });
  await assert.rejects(stalled.arrayBuffer(), { name: 'TimeoutError' });
  assert.equal(timers(), before, 'errored: no timer');
});

test('a body dropped unread keeps its idle timer no longer than one idleTimeoutMs', async () => {
  srv.script('/dropped', { size: 1_000_000 });
  const before = timers();
  const res = await fetchWithBackoff(`${srv.url}/dropped`, undefined, { idleTimeoutMs: 80 });
  const reader = res.body.getReader();
  await reader.read();
  // (the consumer stops reading: no read pending, so no stall either)
  await sleep(250);
  assert.equal(timers(), before, 'no timer once the consumer stopped reading');
  const more = await reader.read();
  assert.ok(!more.done && more.value.byteLength > 0, 'the body goes on when read again');
  await reader.cancel();
});
