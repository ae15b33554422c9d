// The fetch driver in workerd (miniflare): a worker proxying to a flaky
// origin through withBackoff, and the shared scenarios run inside workerd.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';
import { startScripted } from '../server/scripted.mjs';

let mf, srv;
before(async () => {
  srv = await startScripted();
  mf = worker('proxy.mjs', { ORIGIN: srv.url });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

test('a worker wrapping fetch with withBackoff recovers a flaky origin on 127.0.0.1', async () => {
  srv.script('/item', [{ status: 503 }, { reset: true }, { status: 200, body: 'from origin' }]);
  const res = await mf.dispatchFetch('http://worker.test/item');
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'from origin');
  assert.equal(srv.count('/item'), 3, 'the origin saw exactly three requests');
  assert.equal(res.headers.get('x-retries'), '2');
});

test('a POST through the worker is not retried', async () => {
  srv.script('/order', [{ status: 503 }, { status: 201 }]);
  const res = await mf.dispatchFetch('http://worker.test/order', { method: 'POST', body: 'x' });
  assert.equal(res.status, 503);
  assert.equal(srv.count('/order'), 1);
});

test('the shared fetch scenarios pass inside workerd', { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/__scenarios');
  assert.deepEqual(await res.json(), []);
});
