// The smoke of a fleet's shared retry budget in real workerd (miniflare):
// five Workers (a–e, each its own isolate with its module-level budget) and
// the GateObject (defined by `host`) that keeps the budget
// (tests/workerd/fleet-budget.mjs), against the scripted server on
// 127.0.0.1. What only the runtime shows: the one Durable Object's budget
// bounds the retries of every isolate. Outcomes and counts, never a
// duration: round trips, grants, a failing or silent object are
// budget.node.test.mjs's, on virtual time (the same code, in-process).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { startScripted } from '../server/scripted.mjs';
import { answerOf, workerOptions } from '../support/workerd.mjs';

const ISOLATES = ['a', 'b', 'c', 'd', 'e'];
const K = 10; // calls per isolate
// The budget: a window longer than the test (a reserve that expired mid-test would be asked for
// again), a floor of 5 retries in it, 0.1 retry per first attempt.
const TTL_MS = 60_000;
const FLOOR = 5;
const RATIO = 0.1;

let srv, mf;
before(async () => {
  srv = await startScripted();
  const env = { ORIGIN: srv.url, TTL_MS: String(TTL_MS), MIN_PER_SEC: String((FLOOR * 1000) / TTL_MS), RATIO: String(RATIO) };
  const options = (name) => ({ ...workerOptions('fleet-budget.mjs', { NAME: name, ...env }), name });
  mf = new Miniflare({
    workers: [
      { ...options('host'), durableObjects: { GATES: { className: 'GateObject', useSQLite: true } } },
      ...ISOLATES.map((n) => ({ ...options(n), durableObjects: { GATES: { className: 'GateObject', scriptName: 'host' } } })),
    ],
  });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

const call = (name, route) => answerOf(mf, name, route);
const attempt = (r) => Number(/attempt=(\d+)/.exec(r.headers['x-attempt'] ?? '')?.[1]);

test('an origin that always fails: the retries of the five isolates come from the one object, one budget at most', {
  timeout: 30_000,
}, async () => {
  srv.script('/down', { status: 503 });
  const out = await Promise.all(ISOLATES.map((n) => call(n, `/calls?n=${K}&path=/down&key=down`)));
  for (const o of out) assert.deepEqual(o.statuses, Array(K).fill(503), 'every call ends on its 503 (retries refused)');
  for (const n of ISOLATES) {
    const f = await call(n, '/flush?key=down');
    assert.ok(f.rpcs >= 1 && f.failedRpcs === 0, `${n} asked the object: ${JSON.stringify(f)}`);
  }
  const obj = await call('a', '/object?key=down');
  const reqs = srv.requests.filter((r) => r.path === '/down');
  const retries = reqs.filter((r) => attempt(r) > 1).length;
  const fleetBudget = FLOOR + RATIO * ISOLATES.length * K; // one floor, and the ratio of the fleet's first attempts
  assert.equal(reqs.length - retries, ISOLATES.length * K, 'the first attempts');
  assert.equal(obj.budget.deposits, ISOLATES.length * K, 'every first attempt reached the object');
  // (a budget per isolate would have sent 5 × (5 + 1) = 30)
  assert.ok(retries >= FLOOR && retries <= fleetBudget, `${retries} retries, the fleet's budget ${fleetBudget}`);
  assert.ok(retries <= obj.budget.granted, `${retries} retries sent, ${obj.budget.granted} granted by the object`);
  for (const n of ISOLATES) assert.deepEqual(await call(n, '/unhandled'), [], `unhandled rejections in ${n}`);
});
