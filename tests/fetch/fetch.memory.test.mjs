// 20 000 sequential calls in a fresh process, each a 503 then a 200, so
// that every call makes a schedule (in wasm), waits on a timer, retries and
// frees it: the JS heap and the wasm memory must not grow after warm-up, and
// no call may leave a timer pending. The fetch is the kit's scriptedFetch on
// its virtual clock (wasm-backoff/testing): what is measured is the driver's
// memory, not a socket's (fetch.load.test.mjs has the real sockets), and
// every call retries (a call answered at once makes no schedule: a leaked
// slot could not show).
//
// What the bounds catch over 20 000 calls: 52 B a call or more kept in wasm
// memory (1 MiB; a schedule not freed keeps ~160 B a call, 3 MiB here) or on
// the JS heap (1 MiB; the heap moves by up to ~0.4 MiB from run to run when
// nothing leaks). Figures are printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import vm from 'node:vm';
import { withBackoff } from 'wasm-backoff';
import { scriptedFetch, virtualClock } from 'wasm-backoff/testing';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const WARM = 2000;
const CALLS = 20_000;
const BOUND = 1024 * 1024;

/** The heap and external memory once garbage is collected (finalizers, which run as tasks, included). */
async function measure() {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setImmediate(r)); // (not a timer: the clock leaves setImmediate real)
  }
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, external: m.external };
}

test('20 000 sequential retried calls: JS heap and wasm memory flat after warm-up, no timer left', { timeout: 120_000 }, async () => {
  const clock = virtualClock();
  try {
    // Each call: a 503 (its schedule made), a wait of 0 ms, a 200 (its schedule freed).
    const fetch = scriptedFetch((_call, n) => (n % 2 ? { status: 200, body: 'ok' } : 503));
    let retries = 0;
    let left = 0;
    const api = withBackoff(fetch, { baseMs: 0, jitter: 'none', onRetry: () => retries++ });
    const one = async () => {
      const res = await clock.run(api('https://api.test/items'));
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      if (clock.pending()) left++;
      // The kit records every call and every delay asked, by design: not the driver's memory.
      fetch.calls.length = 0;
      clock.asked.length = 0;
    };
    for (let i = 0; i < WARM; i++) await one();
    const warm = await measure();
    const t0 = process.hrtime.bigint(); // (performance.now() is the clock's)
    for (let i = 0; i < CALLS; i++) await one();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    const end = await measure();
    const kib = (x) => `${(x / 1024).toFixed(1)} KiB`;
    console.log(
      `# memory: heap ${kib(end.heap - warm.heap)}, external (incl. wasm memory) ${kib(end.external - warm.external)} over ${CALLS} calls (${Math.round(ms)} ms)`,
    );
    assert.equal(retries, WARM + CALLS, 'every call retried once (so each made a schedule)');
    assert.equal(left, 0, 'calls that left a timer pending');
    assert.ok(end.heap - warm.heap < BOUND, `JS heap grew ${kib(end.heap - warm.heap)}`);
    assert.ok(end.external - warm.external < BOUND, `external memory (wasm included) grew ${kib(end.external - warm.external)}`);
  } finally {
    clock.uninstall();
  }
});
