// wasm-backoff/sse and /ws in workerd (miniflare), against the live server on
// 127.0.0.1: the shared checks (tests/sse/live-checks.mjs), run inside the
// worker with workerd's fetch and WebSocket.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';
import { startLive } from '../server/live.mjs';

let mf, live;
before(async () => {
  live = await startLive();
  mf = worker('live.mjs', { LIVE: live.url, LIVE_WS: live.wsUrl });
});
after(async () => {
  await mf?.dispose();
  await live?.close();
});

test('the shared EventSource and WebSocket checks pass inside workerd', { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/');
  assert.deepEqual(await res.json(), []);
});
