// The JS/wasm boundary as users meet it, in Node: what crosses, how often,
// and what options can and cannot do to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { countCalls } from '../../bench/calls.mjs'; // (wraps the module's exports before the package loads)

const { Backoff, fetchWithBackoff, parseRetryAfter } = await import('wasm-backoff');
const { createGate } = await import('wasm-backoff/gate');
const { TaskQueue, MemoryStore } = await import('wasm-backoff/queue');
const PKG = new URL('../../pkg/', import.meta.url);

test('each wasm module imports nothing and exports only numbers-in, numbers-out functions of ours', () => {
  for (const file of ['wasm_backoff_bg.wasm', 'wasm_backoff_gate.wasm', 'wasm_backoff_queue.wasm']) {
    const m = new WebAssembly.Module(readFileSync(new URL(file, PKG)));
    assert.deepEqual(WebAssembly.Module.imports(m), [], file);
    const exports = WebAssembly.Module.exports(m);
    assert.deepEqual(
      exports.filter((e) => e.kind !== 'function' && e.name !== 'memory'),
      [],
      `${file}: no table or global exported`,
    );
    assert.ok(
      exports.every((e) => !e.name.startsWith('__')),
      `${file}: none of the linker's own exports (__data_end, __heap_base), nor a binding generator's`,
    );
  }
});

test('wasm calls: none for a plain success, two for a healthy gated call (no allocation), one schedule per retried call', async () => {
  const rows = Object.fromEntries((await countCalls()).map((r) => [r.name, r]));
  const total = (c) => Object.values(c).reduce((a, b) => a + b, 0);
  assert.deepEqual(rows['fetchWithBackoff(url), 200'].calls, {});
  assert.deepEqual(rows['withBackoff(fetch, options)(url), 200'].calls, {});
  assert.deepEqual(rows['gated, healthy target, 200'].calls, { gate_admit: 1, gate_settle: 1 });
  const retried = rows['withBackoff(fetch, options)(url), 503, 503, 200'];
  assert.equal(retried.status, 200);
  assert.deepEqual(retried.calls, { backoff_new: 1, backoff_next: 2, backoff_free: 1 }, 'one schedule, freed');
  const gated = rows['gated, 503, 503, 200'];
  assert.equal(gated.status, 200);
  assert.equal(gated.calls.backoff_new, gated.calls.backoff_free, 'every schedule freed');
  assert.ok(total(gated.calls) > 0);
});

test('options are read once, own properties only: a getter cannot pass the check with one value and supply another', () => {
  let reads = 0;
  const tricky = {
    get baseMs() {
      reads++;
      return reads === 1 ? 100 : -1;
    },
    seed: 1,
    jitter: 'none',
  };
  const b = new Backoff(tricky);
  assert.equal(reads, 1, 'baseMs read exactly once');
  assert.equal(b.next(), 100);
  // Inherited properties are not options.
  const inherited = Object.create({ baseMs: 7, preset: 'flume' });
  inherited.seed = 1;
  assert.equal(new Backoff(inherited).next() < 100, true, 'defaults (full jitter on 100 ms), not the prototype');
});

test('a polluted Object.prototype changes nothing (no POST retried, no option taken from it)', async () => {
  const { startScripted } = await import('../server/scripted.mjs');
  const srv = await startScripted();
  Object.prototype.retryNonIdempotent = true;
  Object.prototype.baseMs = -1;
  Object.prototype.gate = 'yes';
  try {
    srv.script('/post', [{ status: 503 }, { status: 200 }]);
    const res = await fetchWithBackoff(`${srv.url}/post`, { method: 'POST', body: 'x' }, { baseMs: 1 });
    assert.equal(res.status, 503, 'returned, not retried');
    assert.equal(srv.count('/post'), 1);
    assert.equal(new Backoff({ seed: 1, jitter: 'none' }).next(), 100);
  } finally {
    delete Object.prototype.retryNonIdempotent;
    delete Object.prototype.baseMs;
    delete Object.prototype.gate;
    await srv.close();
  }
});

test('documented ranges are the checked ones: any integer >= 1 is a valid maxAttempts / maxFailures', () => {
  assert.ok(new Backoff({ maxAttempts: 2 ** 53 }));
  assert.ok(new Backoff({ maxAttempts: 2 ** 60 }));
  assert.ok(new TaskQueue({ handler: () => {}, maxFailures: 2 ** 32 }));
  assert.throws(() => new Backoff({ maxAttempts: 1.5 }), RangeError);
  assert.ok(createGate({ maxQueued: 2 ** 40, concurrency: 2 ** 33 }));
});

test('free() releases at once: the object then throws TypeError, freeing twice is harmless', async () => {
  const b = new Backoff({ seed: 3 });
  b.next();
  b.free();
  b.free();
  assert.throws(
    () => b.next(),
    (e) => e instanceof TypeError && /freed/.test(e.message),
  );
  assert.throws(() => b.attempt, TypeError);
  assert.equal(typeof Backoff.prototype[Symbol.dispose], 'function');
  const c = new Backoff({ seed: 3, jitter: 'none' });
  c[Symbol.dispose]();
  assert.throws(() => c.reset(), TypeError);
  const g = createGate();
  await g.run('x', () => 1);
  g.free();
  await assert.rejects(
    g.run('x', () => 1),
    (e) => e instanceof TypeError && /freed/.test(e.message),
  );
});

test('one seed convention: the same integer gives the same stream in every API; task seeds do not collide', async () => {
  // A negative seed is the same two's complement everywhere.
  const a = new Backoff({ seed: -42, jitter: 'full' });
  const b = new Backoff({ seed: -42, jitter: 'full' });
  assert.deepEqual([a.next(), a.next()], [b.next(), b.next()]);
  assert.deepEqual([...Backoff.sample({ seed: -42 }, 1, 1)], [new Backoff({ seed: -42 }).next()]);
  // 20 000 tasks of one seeded queue: 20 000 distinct task seeds.
  const store = new MemoryStore();
  const q = new TaskQueue({ handler: () => {}, store, backoff: { seed: 7 } });
  for (let i = 0; i < 20000; i++) await q.enqueue(i, { id: `task-${i}` });
  const seeds = new Set((await store.list()).map((r) => r.seed));
  assert.equal(seeds.size, 20000);
  for (const s of seeds) assert.ok(Number.isSafeInteger(s));
});

test('parseRetryAfter: non-ASCII input is invalid; no input buffer limits a valid value', () => {
  assert.equal(parseRetryAfter('\u0135'), undefined);
  assert.equal(parseRetryAfter('1\u0130'), undefined);
  assert.equal(parseRetryAfter(`${'0'.repeat(100)}5`), 5000);
  assert.equal(parseRetryAfter(' 7 '), 7000);
});

test('a getter of a nested option runs before anything is written: it cannot change the record', () => {
  const b = new Backoff({
    baseMs: 1000,
    jitter: {
      get ratio() {
        new Backoff({ baseMs: 5 }); // another constructor call in the middle
        return 0;
      },
    },
    seed: 1,
  });
  assert.equal(b.next(), 1000);
});
