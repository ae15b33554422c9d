// The package in workerd (Cloudflare's runtime) through miniflare: the
// worker imports the .wasm as a compiled module (CompiledWasm rule).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let mf;
before(() => {
  mf = new Miniflare({
    modules: true,
    scriptPath: path.join(root, 'tests/workerd/worker.mjs'),
    modulesRoot: root,
    modulesRules: [
      // First match wins, and miniflare's globs are unanchored ('*.js'
      // would also take '.json'), so the JSON rule comes first.
      { type: 'Text', include: ['**/*.json'] },
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: '2025-07-01',
  });
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
