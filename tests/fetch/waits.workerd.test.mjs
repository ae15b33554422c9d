// The waits the outcome chooses (tests/fetch/waits-checks.mjs) inside
// workerd (miniflare), against the scripted server on 127.0.0.1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';
import { startScripted } from '../server/scripted.mjs';

let mf, srv;
before(async () => {
  srv = await startScripted();
  mf = worker('waits.mjs', { ORIGIN: srv.url });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

test('every wait scenario passes inside workerd', { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/');
  assert.deepEqual(await res.json(), []);
});
