// A fleet's shared retry budget on virtual time, in Node: isolates (each a
// sharedBudget of the js/ sources, as each Worker's module-level budget is)
// draw on one budget kept by objects in this process (BudgetHub, the code a
// GateObject runs, behind a structured-clone RPC: tests/support/objects.mjs),
// against an origin answered by the kit's scriptedFetch: round trips per
// isolate, retries granted against the fleet's budget, a failing or silent
// object, to the request and the millisecond. budget.fleet.test.mjs keeps
// the Durable Object's smoke in real workerd. Then the hub's and the
// isolate's logic alone, by hand-given times.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff } from '../../js/fetch/index.js';
import { BudgetHub, SharedBudget, sharedBudget } from '../../js/fleet/shared-budget.js';
import { RetryBudget } from '../../js/budget.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import { T0, install } from '../engine/clock.mjs';
import { objects } from '../support/objects.mjs';

const ORIGIN = 'https://origin.test';
const NAMES = ['a', 'b', 'c', 'd', 'e'];
const K = 10; // calls per isolate
// The budget: a window of 20 s, a floor of 5 retries in it, 0.1 retry per first attempt.
const TTL_MS = 20_000;
const FLOOR = 5;
const RATIO = 0.1;
const OPTIONS = { ttlMs: TTL_MS, minPerSec: (FLOOR * 1000) / TTL_MS, retryRatio: RATIO };

/**
 * A fleet for test `t`: the clock, the objects, the origin answering
 * `script` (each request's `attempt` is in its x-attempt header), and per
 * isolate and mode its budget: 'shared' (sharedBudget over its view of the
 * objects), or 'local' (a RetryBudget of the same options).
 */
function fleet(t, script) {
  const clock = install();
  const objs = objects();
  const origin = scriptedFetch(script);
  const made = new Map();
  t.after(() => {
    objs.free();
    clock.off();
  });
  const isolate = (name, mode = 'shared', key = 'k') => {
    const id = `${name} ${mode} ${key}`;
    if (!made.has(id)) {
      const ns = objs.view();
      made.set(id, { ns, budget: mode === 'local' ? new RetryBudget(OPTIONS) : sharedBudget(ns, { ...OPTIONS, key }) });
    }
    return made.get(id);
  };
  /** `n` concurrent calls of isolate `name` to `path` through its budget; their statuses. Then its flush() (a Worker's waitUntil) unless `flush` is false. */
  const calls = async (name, path, n, { mode, key, flush = true } = {}) => {
    const { budget } = isolate(name, mode, key);
    const api = withBackoff(origin, {
      budget,
      baseMs: 5,
      maxDelayMs: 20,
      jitter: 'none',
      maxAttempts: 30,
      maxElapsedMs: 3000,
      attemptHeader: 'x-attempt',
    });
    const out = await Promise.all(Array.from({ length: n }, (_, i) => api(`${ORIGIN}${path}?by=${name}&i=${i}`).then((r) => r.status)));
    if (flush) await budget.flush?.();
    return out;
  };
  const fleetCalls = (path, n, o) => Promise.all(NAMES.map((name) => calls(name, path, n, o)));
  const attempts = (path) =>
    origin.calls.filter((c) => new URL(c.url).pathname === path).map((c) => Number(/attempt=(\d+)/.exec(c.headers['x-attempt'])[1]));
  const retriesTo = (path) => attempts(path).filter((a) => a > 1).length;
  return { clock, objs, origin, isolate, calls, fleetCalls, attempts, retriesTo };
}

const attempt = (call) => Number(/attempt=(\d+)/.exec(call.headers['x-attempt'])[1]);

test('healthy traffic: one round trip per isolate (its reserve, carrying its deposits), none per call', async (t) => {
  const f = fleet(t, { status: 200, body: 'ok' });
  const first = await f.clock.run(f.fleetCalls('/up', K));
  for (const o of first) assert.deepEqual(o, Array(K).fill(200));
  // Each isolate asked once, at its first deposit, for a retry in reserve.
  assert.deepEqual(
    NAMES.map((n) => [f.isolate(n).budget.rpcs, f.isolate(n).budget.failedRpcs]),
    NAMES.map(() => [1, 0]),
  );
  await f.clock.tick(1000);
  await f.clock.run(f.fleetCalls('/up', K));
  // A second later, within the window, the reserve is still there: no more round trips.
  assert.deepEqual(
    NAMES.map((n) => f.isolate(n).budget.rpcs),
    NAMES.map(() => 1),
  );
  const obj = f.objs.stats('k');
  assert.deepEqual(
    obj.budget,
    { rpcs: 5, deposits: 50, asked: 5, granted: 5 },
    "each request carried its isolate's 10 first attempts, made before it went",
  );
  assert.deepEqual(obj.rpcs, { report: 0, admit: 0, probed: 0, lease: 0 }, 'the gate part of the object is untouched');
  // Past the window the reserve expires: the next deposit asks again, carrying the deposits since.
  await f.clock.tick(TTL_MS);
  await f.clock.run(f.fleetCalls('/up', 1));
  assert.deepEqual(
    NAMES.map((n) => f.isolate(n).budget.rpcs),
    NAMES.map(() => 2),
  );
  // (the second round's deposits, 21 s old, are not sent: they would have left the object's window)
  assert.equal(f.objs.stats('k').budget.deposits, 50 + 5, "the new request carried the window's deposits only");
});

test('an origin that always fails: the fleet sends exactly one budget of retries; a budget per isolate sends each its own', async (t) => {
  // (answers after 5 ms: the reserve each isolate asks for at its first deposit comes first)
  const f = fleet(t, { status: 503, delayMs: 5 });
  const shared = await f.clock.run(f.fleetCalls('/down-shared', K));
  const local = await f.clock.run(f.fleetCalls('/down-local', K, { mode: 'local' }));
  for (const o of [...shared, ...local]) assert.deepEqual(o, Array(K).fill(503), 'every call ends on its 503 (retries refused)');
  const firsts = NAMES.length * K;
  assert.equal(f.attempts('/down-shared').filter((a) => a === 1).length, firsts);
  // One floor and the ratio of the fleet's first attempts: 5 + 0.1 × 50; per isolate, 5 + 0.1 × 10 each.
  assert.equal(f.retriesTo('/down-shared'), FLOOR + RATIO * firsts, "the fleet's budget");
  assert.equal(f.objs.stats('k').budget.granted, FLOOR + RATIO * firsts, 'every retry sent was granted by the object');
  assert.equal(f.retriesTo('/down-local'), NAMES.length * (FLOOR + RATIO * K), 'a budget per isolate: a floor each');
  for (const n of NAMES) assert.ok(f.isolate(n).budget.rpcs <= 4, `${n}: ${f.isolate(n).budget.rpcs} round trips for ${K} failing calls`);
});

test('the first retry finds credit: the reserve asked for at the first deposit', async (t) => {
  const f = fleet(t, { '/up1': 200, '/once': (call) => (attempt(call) === 1 ? 503 : 200) });
  await f.clock.run(f.fleetCalls('/up1', 1));
  const out = await f.clock.run(f.fleetCalls('/once', 1));
  for (const o of out) assert.deepEqual(o, [200]);
  assert.equal(f.retriesTo('/once'), NAMES.length);
  assert.deepEqual(
    f.origin.calls.filter((c) => c.url.includes('/once')).map((c) => c.at - T0),
    [...Array(5).fill(0), ...Array(5).fill(20)],
    'each retry after its wait (a 503: the throttling base, capped at 20), none held for credit',
  );
});

test('an object that fails (stubs that reject or cannot be had, an RPC that throws): each isolate goes on with a local budget, a slot later asks again', async (t) => {
  const f = fleet(t, { '/up2': 200, '/flaky': (call) => (attempt(call) === 1 ? 503 : 200) });
  for (const [mode, fault] of [
    ['reject', () => 'reject'],
    ['throw', (m) => (m === 'get' ? 'throw' : undefined)],
  ]) {
    for (const n of NAMES) f.isolate(n, 'shared', mode).ns.fault = fault;
    // The first request (at the first deposit) finds the object failing…
    const warm = await f.clock.run(f.fleetCalls('/up2', 1, { key: mode }));
    for (const o of warm) assert.deepEqual(o, [200]);
    for (const n of NAMES) {
      const b = f.isolate(n, 'shared', mode).budget;
      assert.deepEqual([b.rpcs, b.failedRpcs], [1, 1], `${mode}: ${n}`);
      assert.equal(b.available(), FLOOR + RATIO, `${mode}: the local budget stands in (a floor and one deposit's share)`);
    }
    // …then the calls retry on their local budgets (a floor each, as alone), and none fails.
    const out = await f.clock.run(f.fleetCalls('/flaky', FLOOR, { key: mode }));
    for (const o of out) assert.deepEqual(o, Array(FLOOR).fill(200), mode);
    // A slot (ttlMs / 10) after the failure, the object is asked again (and still fails).
    await f.clock.tick(TTL_MS / 10);
    await f.clock.run(f.fleetCalls('/up2', 1, { key: mode }));
    for (const n of NAMES) assert.deepEqual(f.isolate(n, 'shared', mode).budget.failedRpcs, 2, `${mode}: asked again`);
  }
});

test("a budget request that is never answered (a Worker request that ended first): the isolate's retries are refused for a second at most, then taken from the local budget", async (t) => {
  const f = fleet(t, { '/up3': 200, '/flaky3': (call) => (attempt(call) === 1 ? 503 : 200) });
  const a = f.isolate('a');
  a.ns.fault = () => 'never';
  assert.deepEqual(await f.clock.run(f.calls('a', '/up3', 1, { flush: false })), [200]);
  await f.clock.tick(0);
  assert.equal(a.budget.rpcs, 1, 'the reserve was asked for, and is never answered');
  a.ns.fault = () => undefined;
  // Within the second, a retry finds no credit: refused (the call ends on its 503).
  await f.clock.to(999);
  assert.deepEqual(await f.clock.run(f.calls('a', '/flaky3', 1, { flush: false })), [503]);
  // From 1000, the request is given up: the local budget stands in, and the retry is taken.
  await f.clock.to(1000);
  assert.deepEqual(await f.clock.run(f.calls('a', '/flaky3', 1, { flush: false })), [200]);
  assert.equal(f.retriesTo('/flaky3'), 1);
  assert.equal(a.budget.failedRpcs, 1, 'the lost request counted as failed');
  await f.clock.run(a.budget.flush());
});

test('bad options: TypeError or RangeError naming them', (t) => {
  const f = fleet(t, 200);
  const ns = f.objs.view();
  const cases = [
    [() => sharedBudget({}, {}), TypeError, /namespace must be a Durable Object namespace/],
    [() => sharedBudget(ns, 5), TypeError, /^options must be an object/],
    [() => sharedBudget(ns, { key: '' }), RangeError, /^key must be a non-empty string/],
    [() => sharedBudget(ns, { key: 7 }), TypeError, /^key must be a non-empty string/],
    [() => sharedBudget(ns, { ttlMs: 0 }), RangeError, /^ttlMs must be a finite number > 0/],
    [() => sharedBudget(ns, { minPerSec: '1' }), TypeError, /^minPerSec must be/],
    [() => sharedBudget(ns, { retryRatio: Number.NaN }), RangeError, /^retryRatio must be/],
    [() => sharedBudget(ns, { maxSlice: 0 }), RangeError, /^maxSlice must be an integer in \[1, 1000\]/],
    [() => sharedBudget(ns, { maxSlice: 2.5 }), RangeError, /^maxSlice must be an integer in \[1, 1000\]/],
    [() => sharedBudget(ns, { maxSlice: '4' }), TypeError, /^maxSlice must be an integer in \[1, 1000\]/],
    [() => sharedBudget(ns, { key: 'bad' }).withdraw(Number.NaN), RangeError, /^nowMs must be a finite number/],
  ];
  for (const [make, type, re] of cases) assert.throws(make, (e) => e instanceof type && re.test(e.message), String(re));
  // (the largest slice, and the driver's check of the option, are fine)
  assert.doesNotThrow(() => withBackoff(fetch, { budget: sharedBudget(ns, { key: 'ok', maxSlice: 1000 }) }));
});

// ---- The logic alone: BudgetHub behind the in-process objects, times given by hand.

test('grants follow demand, never past the fleet budget; credit expires; a failing object falls back', async (t) => {
  const clock = install();
  const objs = objects();
  t.after(() => clock.off());
  const ns = objs.view();
  const options = { ttlMs: 60_000, minPerSec: 0.1, retryRatio: 0.5, maxSlice: 4, key: 'k' }; // floor 6
  const [a, b] = [new SharedBudget(ns, options), new SharedBudget(objs.view(), options)];
  const now = 5_000_000;
  // No credit before the first answer.
  a.deposit(now);
  assert.equal(a.withdraw(now), false, 'no credit yet: refused');
  await clock.run(a.flush());
  assert.equal(a.rpcs, 1);
  assert.equal(a.available(now), 1, 'the reserve');
  // Demand: 1 granted, then refused; the refusals raise the next ask (up to maxSlice).
  assert.equal(a.withdraw(now), true);
  assert.equal(a.withdraw(now), false);
  assert.equal(a.withdraw(now), false);
  await clock.run(a.flush());
  assert.equal(a.available(now), 4, 'asked for its 4 recent withdraw calls (maxSlice 4)');
  // b empties what is left of the fleet's budget: 6 + 0.5 × (1 + 1) = 7, of which a took 5.
  b.deposit(now);
  await clock.run(b.flush());
  for (let i = 0; i < 10; i++) b.withdraw(now);
  await clock.run(b.flush());
  assert.equal(objs.budgets('k').counts.granted, 7, JSON.stringify(objs.budgets('k').counts));
  // A short grant: the next request waits a slot (6 s); then the deposits since raise the budget.
  const asked = b.rpcs;
  b.withdraw(now + 1000);
  await clock.tick(0);
  assert.equal(b.rpcs, asked, 'held off after a short grant');
  for (let i = 0; i < 10; i++) b.deposit(now + 7000);
  await clock.run(b.flush());
  assert.equal(b.rpcs, asked + 1);
  assert.ok(b.available(now + 7000) >= 1, 'the 10 deposits earned 5 retries');
  // Credit expires ttlMs after it was asked for.
  assert.equal(a.available(now + 60_000), 0);
  // The object fails: the local budget (floor 6 + 0.5 × its deposits) stands in.
  ns.fault = () => 'reject';
  a.deposit(now + 61_000);
  await clock.run(a.flush());
  assert.equal(a.failedRpcs, 1);
  assert.equal(a.withdraw(now + 61_000), true, 'the local budget');
  // It comes back: a slot later the next request succeeds, and the object's credit is used again.
  ns.fault = () => undefined;
  a.deposit(now + 68_000);
  await clock.run(a.flush());
  assert.equal(a.failedRpcs, 1);
  assert.ok(a.available(now + 68_000) >= 1);
});

test('BudgetHub checks its arguments; the first options make the budget', () => {
  const hub = new BudgetHub();
  assert.throws(() => hub.budget('', 0, 1, {}), TypeError);
  assert.throws(() => hub.budget('k', -1, 1, {}), /deposits must be an integer/);
  assert.throws(() => hub.budget('k', 0, 1001, {}), /ask must be an integer/);
  assert.throws(() => hub.budget('k', 0, 1, { ttlMs: -1 }), /ttlMs/);
  assert.deepEqual(hub.budget('k', 0, 3, { minPerSec: 0.2, ttlMs: 10_000 }), { granted: 2, available: 0, ttlMs: 10_000 });
  assert.deepEqual(
    hub.budget('k', 10, 5, { minPerSec: 100 }),
    { granted: 2, available: 0, ttlMs: 10_000 },
    'its options, not the later ones',
  );
  assert.deepEqual(hub.counts, { rpcs: 6, deposits: 10, asked: 8, granted: 4 });
});
