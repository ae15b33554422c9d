// `wasm-backoff/stream` in workerd (miniflare): the shared stream
// scenarios run inside a Worker against the scripted server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';
import { startScripted } from '../server/scripted.mjs';

let mf, srv;
before(async () => {
  srv = await startScripted();
  mf = worker('stream.mjs', { ORIGIN: srv.url });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

test('the stream scenarios pass inside workerd', { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/');
  assert.deepEqual(await res.json(), []);
});
