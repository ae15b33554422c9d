// A fleet sharing one retry budget, in real workerd (miniflare): five
// Workers (a–e, each its own isolate with its module-level budgets) and the
// GateObject (defined by `host`) that keeps the budget
// (tests/workerd/fleet-budget.mjs), against the scripted server on
// 127.0.0.1. Healthy traffic costs one round trip per isolate per window;
// against an origin that always fails, the fleet sends at most the one
// budget's retries (counted on the server), where a RetryBudget per isolate
// lets each isolate send its own floor; an object that fails leaves each
// isolate on a local budget. Each test has a budget key of its own (a fresh
// object). Then the pure logic in Node: BudgetHub behind an in-process
// namespace, with a hand-driven clock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Miniflare } from 'miniflare';
import { startScripted } from '../server/scripted.mjs';
import { answerOf, workerOptions } from '../support/workerd.mjs';
import { BudgetHub, SharedBudget } from '../../js/fleet/shared-budget.js';

const ISOLATES = ['a', 'b', 'c', 'd', 'e'];
const K = 10; // calls per isolate
// The budget: a window longer than any test (even on a loaded machine: a
// reserve that expires mid-test is asked for again), a floor of 5 retries in
// it, 0.1 retry per first attempt.
const TTL_MS = 20_000;
const FLOOR = 5;
const RATIO = 0.1;

let srv, mf;
before(async () => {
  srv = await startScripted();
  const env = { ORIGIN: srv.url, TTL_MS: String(TTL_MS), MIN_PER_SEC: String((FLOOR * 1000) / TTL_MS), RATIO: String(RATIO) };
  const options = (name) => ({ ...workerOptions('fleet-budget.mjs', { NAME: name, ...env }), name });
  const objects = (host) =>
    Object.fromEntries(
      [
        ['GATES', 'GateObject'],
        ['BROKEN', 'BrokenGate'],
        ['SLOW', 'SlowGate'],
      ].map(([b, c]) => [b, { className: c, ...host }]),
    );
  mf = new Miniflare({
    workers: [
      { ...options('host'), durableObjects: objects({ useSQLite: true }) },
      ...ISOLATES.map((n) => ({ ...options(n), durableObjects: objects({ scriptName: 'host' }) })),
    ],
  });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

const call = (name, route) => answerOf(mf, name, route);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const attempt = (r) => Number(/attempt=(\d+)/.exec(r.headers['x-attempt'] ?? '')?.[1]);
const fleetCalls = (route) => Promise.all(ISOLATES.map((n) => call(n, route)));
const retriesTo = (path) => srv.requests.filter((r) => r.path === path && attempt(r) > 1).length;

test('healthy traffic: one round trip per isolate (its reserve, carrying its deposits), none per call', { timeout: 20_000 }, async () => {
  srv.script('/up', { status: 200, body: 'ok' });
  // (start the object first: a first start slower than STALE_MS, 1 s, on a loaded machine would
  // count the reserve's request as failed and ask again)
  await call('a', '/object?key=healthy');
  const first = await fleetCalls(`/calls?n=${K}&path=/up&mode=shared&key=healthy`);
  for (const o of first) assert.deepEqual(o.statuses, Array(K).fill(200));
  // Each isolate asked once, at its first deposit, for a retry in reserve.
  assert.deepEqual(
    first.map((o) => o.rpcs),
    ISOLATES.map(() => 1),
    `round trips per isolate: ${JSON.stringify(first.map(({ rpcs, failedRpcs }) => ({ rpcs, failedRpcs })))}`,
  );
  const second = await fleetCalls(`/calls?n=${K}&path=/up&mode=shared&key=healthy`);
  for (const n of ISOLATES) await call(n, '/flush?mode=shared&key=healthy');
  // Within the window the reserve is still there: at most one more (its share of the ratio grew).
  for (const o of second) assert.ok(o.rpcs <= 2, `${o.rpcs} round trips (${o.failedRpcs} failed) for ${2 * K} calls`);
  const obj = await call('a', '/object?key=healthy');
  console.log(`  isolates' round trips: ${second.map((o) => o.rpcs).join(', ')}; object: ${JSON.stringify(obj.budget)}`);
  assert.equal(
    obj.budget.rpcs,
    second.reduce((s, o) => s + o.rpcs, 0),
  );
  assert.ok(obj.budget.deposits >= ISOLATES.length * K, 'the fleet saw the first round at least');
  assert.deepEqual(obj.rpcs, { report: 0, admit: 0, probed: 0, lease: 0 }, 'the gate part of the object is untouched');
});

test('an origin that always fails: the fleet sends at most one budget of retries; a budget per isolate sends each its floor', {
  timeout: 30_000,
}, async () => {
  srv.script('/down-shared', { status: 503 });
  srv.script('/down-local', { status: 503 });
  const shared = await fleetCalls(`/calls?n=${K}&path=/down-shared&mode=shared&key=down`);
  const local = await fleetCalls(`/calls?n=${K}&path=/down-local&mode=local&key=down`);
  for (const o of [...shared, ...local]) assert.deepEqual(o.statuses, Array(K).fill(503), 'every call ends on its 503 (retries refused)');
  for (const n of ISOLATES) await call(n, '/flush?mode=shared&key=down');
  const firsts = ISOLATES.length * K;
  const fleetBudget = FLOOR + RATIO * firsts; // one floor, and the ratio of the fleet's first attempts
  const aloneBudget = FLOOR + RATIO * K; // each isolate's own
  const obj = await call('a', '/object?key=down');
  const [s, l] = [retriesTo('/down-shared'), retriesTo('/down-local')];
  console.log(
    `  retries sent: shared ${s} (budget ${fleetBudget}), per isolate ${l} (${ISOLATES.length} × ${aloneBudget}); round trips ${shared.map((o) => o.rpcs).join(', ')}; object ${JSON.stringify(obj.budget)}`,
  );
  assert.equal(srv.requests.filter((r) => r.path === '/down-shared' && attempt(r) === 1).length, firsts);
  assert.ok(s <= fleetBudget, `${s} retries > the fleet's budget ${fleetBudget}`);
  assert.ok(s <= obj.budget.granted, `${s} retries sent, ${obj.budget.granted} granted by the object`);
  assert.ok(s >= FLOOR, `${s} retries: the floor at least was granted`);
  assert.ok(l >= ISOLATES.length * FLOOR, `${l} retries with a budget per isolate: a floor each`);
  assert.ok(l >= 2.5 * s, `per isolate ${l} vs shared ${s}`);
  for (const o of shared) assert.ok(o.rpcs <= 4, `${o.rpcs} round trips for ${K} failing calls`);
});

test('the first retry finds credit: the reserve asked for at the first deposit', { timeout: 20_000 }, async () => {
  srv.script('/up1', { status: 200 });
  srv.script('/once', (req) => ({ status: attempt(req) === 1 ? 503 : 200 }));
  // (the first request to a new object may take longer than a local 503: warm it first)
  await fleetCalls('/calls?n=1&path=/up1&mode=shared&key=once');
  for (const n of ISOLATES) await call(n, '/flush?mode=shared&key=once');
  const out = await fleetCalls('/calls?n=1&path=/once&mode=shared&key=once');
  for (const o of out) assert.deepEqual(o.statuses, [200]);
  assert.equal(retriesTo('/once'), ISOLATES.length);
});

test('an object that fails (stubs that reject or cannot be had, an RPC that throws): each isolate goes on with a local budget', {
  timeout: 30_000,
}, async () => {
  srv.script('/up2', { status: 200 });
  srv.script('/flaky', (req) => ({ status: attempt(req) === 1 ? 503 : 200 }));
  for (const mode of ['reject', 'throw', 'broken']) {
    // The first request (at the first deposit) finds the object failing…
    const warm = await fleetCalls(`/calls?n=1&path=/up2&mode=${mode}&key=faulty`);
    for (const o of warm) assert.deepEqual(o.statuses, [200]);
    for (const n of ISOLATES) {
      const f = await call(n, `/flush?mode=${mode}&key=faulty`);
      assert.equal(f.failedRpcs, f.rpcs, `${mode}: ${JSON.stringify(f)}`);
      assert.ok(f.available >= FLOOR, `${mode}: the local budget stands in (${f.available})`);
    }
    // …then the calls retry on their local budgets (a floor each, as alone), and none fails.
    const out = await fleetCalls(`/calls?n=${FLOOR}&path=/flaky&mode=${mode}&key=faulty`);
    for (const o of out) assert.deepEqual(o.statuses, Array(FLOOR).fill(200), mode);
  }
  for (const n of ISOLATES) assert.deepEqual(await call(n, '/unhandled'), [], `unhandled rejections in ${n}`);
});

test("a request that ends before the budget's request is answered (no flush handed to waitUntil): its isolate's retries are refused for a second at most, not 10 s", {
  timeout: 20_000,
}, async () => {
  srv.script('/up3', { status: 200 });
  srv.script('/flaky3', (req) => ({ status: attempt(req) === 1 ? 503 : 200 }));
  // The first deposit's request (for the reserve; the object answers 300 ms late) is cut with the request that made it.
  const cut = await call('a', '/cut?key=cut&path=/up3&mode=slow');
  assert.equal(cut.status, 200);
  await sleep(1100);
  const t0 = performance.now();
  const out = await call('a', '/calls?n=1&path=/flaky3&mode=slow&key=cut');
  console.log(`  ${(performance.now() - t0).toFixed(0)} ms; ${JSON.stringify(out)}`);
  assert.deepEqual(out.statuses, [200], 'the retry was taken (the cut request given up: the local budget stands in)');
  assert.equal(retriesTo('/flaky3'), 1);
  const f = await call('a', '/flush?mode=slow&key=cut');
  assert.ok(f.failedRpcs >= 1, `the cut request counted as failed: ${JSON.stringify(f)}`);
  assert.deepEqual(await call('a', '/unhandled'), []);
});

test('bad options: TypeError or RangeError naming them', { timeout: 20_000 }, async () => {
  const errors = await call('a', '/bad');
  assert.deepEqual(
    errors.map((e) => e?.[0] ?? null),
    [
      'TypeError',
      'TypeError',
      'RangeError',
      'TypeError',
      'RangeError',
      'TypeError',
      'RangeError',
      'RangeError',
      'RangeError',
      'TypeError',
      'RangeError',
      null,
    ],
  );
  const messages = errors.map((e) => e?.[1]);
  assert.match(messages[0], /namespace must be a Durable Object namespace/);
  assert.match(messages[1], /^options must be an object/);
  assert.match(messages[2], /^key must be a non-empty string/);
  assert.match(messages[3], /^key must be a non-empty string/);
  assert.match(messages[4], /^ttlMs must be a finite number > 0/);
  assert.match(messages[5], /^minPerSec must be/);
  assert.match(messages[6], /^retryRatio must be/);
  for (const i of [7, 8, 9]) assert.match(messages[i], /^maxSlice must be an integer in \[1, 1000\]/);
  assert.match(messages[10], /^nowMs must be a finite number/);
});

// ---- The pure logic in Node: BudgetHub behind an in-process namespace (async, structured clones), a hand-driven clock.

/** A namespace of BudgetHubs in this process; `fail` makes its RPCs reject. */
function fakeNamespace() {
  const hubs = new Map();
  const ns = {
    hubs,
    fail: false,
    idFromName: (name) => name,
    get: (name) => ({
      budget: async (...args) => {
        await null;
        if (ns.fail) throw new Error('unreachable object');
        if (!hubs.has(name)) hubs.set(name, new BudgetHub());
        return structuredClone(hubs.get(name).budget(...structuredClone(args)));
      },
    }),
  };
  return ns;
}

const tick = () => new Promise((r) => setTimeout(r, 1));

test('pure logic: grants follow demand, never past the fleet budget; credit expires; a failing object falls back', async () => {
  const ns = fakeNamespace();
  const options = { ttlMs: 60_000, minPerSec: 0.1, retryRatio: 0.5, maxSlice: 4, key: 'k' }; // floor 6
  const [a, b] = [new SharedBudget(ns, options), new SharedBudget(ns, options)];
  const t = Date.now();
  // No credit before the first answer.
  a.deposit(t);
  assert.equal(a.withdraw(t), false, 'no credit yet: refused');
  await a.flush();
  assert.equal(a.rpcs, 1);
  assert.equal(a.available(t), 1, 'the reserve');
  // Demand: 1 granted, then refused; the refusals raise the next ask (up to maxSlice).
  assert.equal(a.withdraw(t), true);
  assert.equal(a.withdraw(t), false);
  assert.equal(a.withdraw(t), false);
  await a.flush();
  assert.equal(a.available(t), 4, 'asked for its 4 recent withdraw calls (maxSlice 4)');
  // b empties what is left of the fleet's budget: 6 + 0.5 × (1 + 1) = 7, of which a took 5.
  b.deposit(t);
  await b.flush();
  for (let i = 0; i < 10; i++) b.withdraw(t);
  await b.flush();
  await tick();
  const hub = ns.hubs.get('k');
  assert.equal(hub.counts.granted, 7, JSON.stringify(hub.counts));
  // A short grant: the next request waits a slot (6 s); then the deposits since raise the budget.
  const asked = b.rpcs;
  b.withdraw(t + 1000);
  await tick();
  assert.equal(b.rpcs, asked, 'held off after a short grant');
  for (let i = 0; i < 10; i++) b.deposit(t + 7000);
  await b.flush();
  assert.equal(b.rpcs, asked + 1);
  assert.ok(b.available(t + 7000) >= 1, 'the 10 deposits earned 5 retries');
  // Credit expires ttlMs after it was asked for.
  assert.equal(a.available(t + 60_000), 0);
  // The object fails: the local budget (floor 6 + 0.5 × its deposits) stands in.
  ns.fail = true;
  a.deposit(t + 61_000);
  await a.flush();
  assert.equal(a.failedRpcs, 1);
  assert.equal(a.withdraw(t + 61_000), true, 'the local budget');
  // It comes back: a slot later the next request succeeds, and the object's credit is used again.
  ns.fail = false;
  a.deposit(t + 68_000);
  await a.flush();
  assert.equal(a.failedRpcs, 1);
  assert.ok(a.available(t + 68_000) >= 1);
});

test('pure logic: BudgetHub checks its arguments; the first options make the budget', () => {
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
