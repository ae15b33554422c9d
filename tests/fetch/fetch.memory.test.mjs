// 40 000 sequential calls in a fresh process: the JS heap and the wasm
// memory must not grow after warm-up (a leaked schedule slot per call, ~200 B,
// would show as ~8 MB; the bounds catch 50 B a call on the heap, 26 B in
// wasm). Figures are printed: 0.19 MiB of heap and 0.03 MiB external over
// 100 000 calls when it ran that many (~60 s of the suite's critical path).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { fetchWithBackoff } from 'wasm-backoff';
import { spawnScripted } from '../server/scripted.mjs';

let srv;
before(async () => {
  srv = await spawnScripted();
});
after(() => srv?.close());

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

test('40 000 sequential calls: JS heap and wasm memory flat after warm-up', { timeout: 300_000 }, async () => {
  await srv.script('/ok', [{ status: 200, body: 'ok' }]);
  const one = async () => (await fetchWithBackoff(`${srv.url}/ok`, undefined, { baseMs: 5 })).arrayBuffer();
  const measure = () => {
    gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed, external: m.external };
  };
  for (let i = 0; i < 5000; i++) await one();
  const warm = measure();
  const t0 = performance.now();
  for (let i = 0; i < 40_000; i++) await one();
  const ms = performance.now() - t0;
  const end = measure();
  const mb = (x) => (x / 1048576).toFixed(2);
  console.log(
    `# memory: heap ${mb(warm.heap)} -> ${mb(end.heap)} MiB, external (incl. wasm memory) ${mb(warm.external)} -> ${mb(end.external)} MiB over 40 000 calls (${Math.round(ms)} ms)`,
  );
  // A leak of one schedule slot (~200 B) per call would be ~8 MB here.
  assert.ok(end.heap - warm.heap < 2 * 1048576, `JS heap grew ${mb(end.heap - warm.heap)} MiB`);
  assert.ok(end.external - warm.external < 1048576, `external memory (wasm included) grew ${mb(end.external - warm.external)} MiB`);
});
