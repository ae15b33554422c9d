// The task queue's workerd entry in workerd (miniflare): the wasm imported
// as a compiled module, a MemoryStore queue run inside one request.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let mf;
after(() => mf?.dispose());

test('workerd: a TaskQueue processes, retries and gives up inside a request', { timeout: 30_000 }, async () => {
  mf = new Miniflare({
    modules: true,
    scriptPath: path.join(root, 'tests/workerd/queue.mjs'),
    modulesRoot: root,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: '2025-07-01',
  });
  const res = await mf.dispatchFetch('http://localhost/');
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const r = JSON.parse(text);
  assert.deepEqual(r.states, [
    ['ok', 'processed', 0],
    ['flaky', 'processed', 1],
    ['doomed', 'error', 1],
  ]);
  assert.deepEqual(r.events.sort(), [['error', 'doomed'], ['processed', 'flaky'], ['processed', 'ok'], ['retry', 'flaky']]);
  assert.deepEqual(r.tries.sort(), [['doomed', 1], ['flaky', 2], ['ok', 1]]);
});
