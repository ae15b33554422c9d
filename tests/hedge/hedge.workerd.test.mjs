// Hedging and failover in workerd (miniflare): the shared scenarios run
// inside a Worker against three scripted servers on 127.0.0.1; and failover
// with the fleet's shared gate (sharedGate on a GateObject).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { workerOptions } from '../support/workerd.mjs';
import { startScripted } from '../server/scripted.mjs';

let mf, sa, sb, sc;
before(async () => {
  [sa, sb, sc] = await Promise.all([startScripted(), startScripted(), startScripted()]);
  mf = new Miniflare({
    ...workerOptions('hedge.mjs', { A: sa.url, B: sb.url, C: sc.url }),
    durableObjects: { GATES: { className: 'GateObject', useSQLite: true } },
  });
});
after(async () => {
  await mf?.dispose();
  await Promise.all([sa?.close(), sb?.close(), sc?.close()]);
});

test('every hedging and failover scenario passes inside workerd', { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/');
  assert.deepEqual(await res.json(), []);
});

test("failover with the fleet's shared gate: the object keeps each endpoint's health", { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/fleet');
  assert.deepEqual(await res.json(), []);
});
