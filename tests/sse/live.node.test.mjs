// wasm-backoff/sse and /ws in Node 20, imported by name from the built
// package, against the live server on 127.0.0.1 (tests/server/live.mjs):
// the shared checks (tests/sse/live-checks.mjs), with the `ws` package as
// the WebSocket implementation (Node 20 has none), and what only `ws` tells:
// the status of a refused upgrade.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from 'wasm-backoff/sse';
import { WebSocket } from 'wasm-backoff/ws';
import WS from 'ws';
import { startLive } from '../server/live.mjs';
import { liveScenarios } from './live-checks.mjs';
import { until } from '../support/wait.mjs';

let live;
before(async () => {
  live = await startLive();
});
after(() => live?.close());

test('the shared EventSource and WebSocket checks pass in Node', { timeout: 30_000 }, async () => {
  assert.deepEqual(await liveScenarios({ EventSource, WebSocket, WS, prefix: 'node' }, live), []);
});

test('ws: an upgrade refused with 404 is not retried (the ws package names the status)', async () => {
  const ws = new WebSocket(`${live.wsUrl}/ws/refused?plan=refuse404`, undefined, { WebSocket: WS, baseMs: 5 });
  const errors = [];
  ws.onerror = (e) => errors.push([e.status, e.delayMs, e.message]);
  await until('closed', () => ws.readyState === 3);
  assert.deepEqual(
    errors.map(([s, d]) => [s, d]),
    [[404, undefined]],
  );
  assert.match(errors[0][2], /404/);
  assert.equal(live.log('refused').length, 1);
});

test('ws: without a WebSocket in the runtime, the constructor says what to pass', () => {
  assert.throws(() => new WebSocket(`${live.wsUrl}/ws/x`), { name: 'TypeError', message: /options\.WebSocket.*'ws'/ });
});
