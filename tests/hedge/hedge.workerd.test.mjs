// Hedging and failover in workerd (miniflare): the runtime smokes of
// hedge-checks.mjs inside a Worker, with workerd's fetch, against two
// scripted servers on 127.0.0.1: a hedge sent as the first was (no cache
// option), a loser's connection closed, a retry to another origin.
// Outcomes and order only; the timing logic (failover with a fleet's shared
// gate included) is hedge.node.test.mjs's, on virtual time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { workerOptions } from '../support/workerd.mjs';
import { startScripted } from '../server/scripted.mjs';

let mf, sa, sb;
before(async () => {
  [sa, sb] = await Promise.all([startScripted(), startScripted()]);
  mf = new Miniflare(workerOptions('hedge.mjs', { A: sa.url, B: sb.url }));
});
after(async () => {
  await mf?.dispose();
  await Promise.all([sa?.close(), sb?.close()]);
});

test('the hedging and failover smokes pass inside workerd', { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/');
  assert.deepEqual(await res.json(), []);
});
