// The virtual clock's timer heap (js/testing/timers.js, from the sources):
// cleared timers do not pile up, and the timers left still fire in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Timers } from '../../js/testing/timers.js';

test('a clear leaves at most twice the armed timers in the heap; the rest still fire by due time, then armed order', async () => {
  const t = new Timers(0);
  const fired = [];
  // A call's long timeout armed and cleared 10,000 times, time never reaching it: the heap stays small.
  for (let i = 0; i < 10_000; i++) t.clear(t.set(() => {}, 60_000, [], false));
  assert.equal(t.live.size, 0);
  assert.ok(t.heaped <= 64, `${t.heaped} timers in the heap, none armed`);
  // Then 300 timers on 30 due times, every other one cleared: those left fire in order, each once.
  const kept = [];
  for (let i = 0; i < 300; i++) {
    const due = ((i * 7) % 30) * 10;
    const h = t.set(() => fired.push([due, i]), due, [], false);
    if (i % 2) t.clear(h);
    else kept.push([due, i]);
  }
  assert.ok(t.heaped <= 2 * t.live.size, `${t.heaped} in the heap for ${t.live.size} armed`);
  for (let next = t.next(); next; next = t.next()) await t.step(next);
  kept.sort(([a, i], [b, j]) => a - b || i - j);
  assert.deepEqual(fired, kept);
  assert.equal(t.heaped, 0);
});

test("refresh() arms a Node timer object again from now: pending, or fired already (as Node's); not once cleared", async () => {
  const t = new Timers(0);
  const fired = [];
  const run = async () => {
    for (let next = t.next(); next; next = t.next()) await t.step(next);
  };
  const a = t.set(() => fired.push(['a', t.elapsed]), 100, [], false);
  assert.equal(typeof a, 'object', "Node's timers are objects");
  await run();
  assert.deepEqual(fired, [['a', 100]]);
  a.refresh(); // fired already: due 100 ms from now again
  await run();
  assert.deepEqual(fired, [
    ['a', 100],
    ['a', 200],
  ]);
  const b = t.set(() => fired.push(['b', t.elapsed]), 50, [], false);
  t.clear(b);
  b.refresh(); // cleared: stays cleared
  t.clear(t.set(() => {}, 10, [], false));
  const c = t.set(() => fired.push(['c', t.elapsed]), 30, [], false);
  t.clear(Number(c)); // cleared by its number
  c.refresh();
  await run();
  assert.deepEqual(fired, [
    ['a', 100],
    ['a', 200],
  ]);
});
