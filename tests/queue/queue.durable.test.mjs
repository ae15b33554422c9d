// The task queue on a Durable Object in real workerd (miniflare): several
// Worker instances (a, b, c: each its own isolate) and the object itself
// process one queue (tests/workerd/durable.mjs), every handler run counted
// on the scripted server. Each task is run exactly once; and one real-time
// smoke of recovery: a Worker that dies holding a task, the object reset
// mid-task, then the whole process restarted: after the leases, the
// object's alarm (re-armed when the first request starts it) brings both
// back. Outcomes and order only: the exact times (the alarm at the next due
// time, the sweep 1 ms after a lease, the re-arm, no alarm loop) are
// durable.node.test.mjs's, in virtual time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Miniflare } from 'miniflare';
import { startScripted } from '../server/scripted.mjs';
import { until } from '../support/wait.mjs';
import { workerOptions } from '../support/workerd.mjs';

/** The recovery test's lease: short, for it waits the leases out. */
const LEASE_MS = 1000;
/** The fleet test's: no run of its handlers (a POST) may outlast it, even on a loaded machine. */
const LONG_LEASE_MS = 30_000;
const LEASE_EXPIRED = 'the lease expired (completeBy passed) before the handler settled';

let srv;
/** Every handler run: { id, by }, in the order the server saw them. */
const runs = [];
/** Ids whose first run hangs (the scripted server never answers it). */
const hang = new Set();
const fleets = [];
let dir;

before(async () => {
  srv = await startScripted();
  srv.script('/job', (req) => {
    const u = new URL(req.url, 'http://x');
    const id = u.searchParams.get('id');
    const first = !runs.some((r) => r.id === id);
    runs.push({ id, by: u.searchParams.get('by') });
    return hang.has(id) && first ? { hang: true } : { status: 200 };
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'wasm-backoff-do-'));
});
after(async () => {
  await Promise.all(fleets.map((f) => f.dispose()));
  await srv?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Workers host (defines the object), a, b and c (bind it), in one workerd, all with a lease of `leaseMs`; `persist`: a directory for the object's storage. */
function fleet(leaseMs, persist) {
  const options = (name) => ({ ...workerOptions('durable.mjs', { NAME: name, SCRIPTED: srv.url, LEASE_MS: String(leaseMs) }), name });
  const mf = new Miniflare({
    workers: [
      { ...options('host'), durableObjects: { JOBS: { className: 'Jobs', useSQLite: true } } },
      ...['a', 'b', 'c'].map((n) => ({ ...options(n), durableObjects: { JOBS: { className: 'Jobs', scriptName: 'host' } } })),
    ],
    ...(persist ? { durableObjectsPersist: persist } : {}),
  });
  fleets.push(mf);
  return mf;
}

/** Worker `name` of `mf` answers `route` (JSON). */
async function call(mf, name, route, method = 'GET') {
  const res = await (await mf.getWorker(name)).fetch(`http://worker${route}`, { method });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

const runsOf = (id) => runs.filter((r) => r.id === id);

let mf;
test('three Worker instances and the object share one DurableObjectStore: every task runs exactly once', { timeout: 60_000 }, async () => {
  mf = fleet(LONG_LEASE_MS);
  const ids = Object.fromEntries(['a', 'b', 'c'].map((n) => [n, Array.from({ length: 30 }, (_, i) => `${n}${i}`)]));
  const all = Object.values(ids).flat();
  // Each Worker enqueues its 30 through the object and drains the queue; the object's alarm drains it too.
  const ran = await Promise.all(['a', 'b', 'c'].map((n) => call(mf, n, `/work?ids=${ids[n].join(',')}`, 'POST')));
  const recs = await until('every task processed', async () => {
    const rs = await Promise.all(all.map((id) => call(mf, 'a', `/get?id=${id}`)));
    return rs.every((r) => r?.state === 'processed') && rs;
  });
  assert.deepEqual(
    recs.filter((r) => r.failureCount !== 0 || r.lockedBy !== null),
    [],
  );
  const perId = new Map(all.map((id) => [id, runsOf(id).length]));
  assert.deepEqual(
    [...perId].filter(([, n]) => n !== 1),
    [],
    'each task ran exactly once',
  );
  const by = {};
  for (const id of all) for (const r of runsOf(id)) by[r.by] = (by[r.by] ?? 0) + 1;
  assert.ok(Object.keys(by).length >= 2, `the work was shared: ${JSON.stringify(by)}`);
  assert.deepEqual(ran.flat().sort(), all.filter((id) => runsOf(id)[0].by !== 'object').sort(), 'the Workers report what the server saw');
});

test('an id with a lone surrogate is refused (RangeError naming id) by enqueueTo and by the object; nothing is stored', {
  timeout: 30_000,
}, async () => {
  const r = await call(mf, 'a', '/lone', 'POST');
  for (const [name, message] of [r.client, r.rpc]) {
    assert.equal(name, 'RangeError');
    assert.match(message, /^id must be a well-formed string/);
  }
  assert.deepEqual(
    r.stored.filter(([k]) => k.startsWith('order-')),
    [],
  );
});

test('recovery: a Worker dies holding a task, the object is reset mid-task, the process restarts; the alarm brings both back after their leases', {
  timeout: 60_000,
}, async () => {
  const first = fleet(LEASE_MS, dir);
  hang.add('k1');
  hang.add('r1');
  // Worker a claims k1 while the object takes nothing; its request ends, and its handler with it.
  await call(first, 'b', '/pause?on=1', 'POST');
  const claimed = await call(first, 'a', '/hang?id=k1', 'POST');
  assert.deepEqual([claimed.state, claimed.lockedBy], ['processing', 'a']);
  await call(first, 'b', '/pause?on=0', 'POST');
  // The object starts r1, and is reset in the middle of it.
  await call(first, 'a', '/enqueue?id=r1', 'POST');
  await until('the object to start r1', () => runsOf('r1').length === 1);
  assert.match(await call(first, 'a', '/reset', 'POST'), /reset by the test/);
  // The whole process stops; local workerd forgets scheduled alarms across a restart.
  await first.dispose();
  fleets.splice(fleets.indexOf(first), 1);
  const again = fleet(LEASE_MS, dir);
  const left = await call(again, 'b', '/get?id=k1'); // the first request starts the object, which re-arms its alarm
  assert.equal(left.id, 'k1', 'the record survived the restart');
  for (const id of ['k1', 'r1']) await until(`${id} run again`, () => runsOf(id).length === 2, 15_000);
  assert.deepEqual(
    ['k1', 'r1'].map((id) => runsOf(id).map((r) => r.by)),
    [
      ['a', 'object'],
      ['object', 'object'],
    ],
    'each run once more, by the object, after the run cut off',
  );
  const recs = await until('both processed', async () => {
    const rs = await Promise.all(['k1', 'r1'].map((id) => call(again, 'c', `/get?id=${id}`)));
    return rs.every((r) => r.state === 'processed') && rs;
  });
  assert.deepEqual(
    recs.map((r) => [r.id, r.failureCount, r.lastError, r.lockedBy]),
    [
      ['k1', 1, LEASE_EXPIRED, null],
      ['r1', 1, LEASE_EXPIRED, null],
    ],
  );
  const stats = await until('no alarm left', async () => {
    const s = await call(again, 'a', '/stats');
    return s.alarm === null && s;
  });
  assert.equal(stats.started, false, "the object's queue is never started: it has no poll timer");
});
