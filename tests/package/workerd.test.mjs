// The package in workerd (Cloudflare's runtime) through miniflare: the
// worker imports the .wasm as a compiled module (CompiledWasm rule).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';

let mf;
before(() => {
  mf = worker('worker.mjs');
});
after(() => mf?.dispose());

test('workerd: same schedules as native Rust, same validation, same semantics', async () => {
  const res = await mf.dispatchFetch('http://localhost/');
  const r = await res.json();
  assert.equal(r.first, 250);
  assert.deepEqual(r.golden, []);
  assert.deepEqual(r.validation, []);
  assert.deepEqual(r.semantics, []);
});
