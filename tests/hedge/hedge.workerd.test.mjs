// Hedging and failover in workerd (miniflare): the shared scenarios run
// inside a Worker against two scripted servers on 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';
import { startScripted } from '../server/scripted.mjs';

let mf, sa, sb;
before(async () => {
  [sa, sb] = await Promise.all([startScripted(), startScripted()]);
  mf = worker('hedge.mjs', { A: sa.url, B: sb.url });
});
after(async () => {
  await mf?.dispose();
  await Promise.all([sa?.close(), sb?.close()]);
});

test('every hedging and failover scenario passes inside workerd', { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/');
  assert.deepEqual(await res.json(), []);
});
