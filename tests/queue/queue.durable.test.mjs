// The task queue on a Durable Object in real workerd (miniflare): several
// Worker instances (a, b, c: each its own isolate) and the object itself
// process one queue (tests/workerd/durable.mjs), every handler run counted
// on the scripted server. Each task is run exactly once; a Worker that dies
// holding a task, an object reset mid-task, and a restart of the whole
// process are recovered after the lease, by the object's alarm; a delayed
// task runs when its alarm fires, with nothing polling.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Miniflare } from 'miniflare';
import { startScripted } from '../server/scripted.mjs';
import { sleep, until } from '../support/wait.mjs';
import { workerOptions } from '../support/workerd.mjs';

const LEASE_MS = 600;
const LEASE_EXPIRED = 'the lease expired (completeBy passed) before the handler settled';

let srv;
/** Every handler run: { id, by, at }. */
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
    runs.push({ id, by: u.searchParams.get('by'), at: Date.now() });
    return hang.has(id) && first ? { hang: true } : { status: 200 };
  });
  dir = mkdtempSync(path.join(os.tmpdir(), 'wasm-backoff-do-'));
});
after(async () => {
  await Promise.all(fleets.map((f) => f.dispose()));
  await srv?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Workers host (defines the object), a, b and c (bind it), in one workerd; `persist`: a directory for the object's storage. */
function fleet(persist) {
  const options = (name) => ({ ...workerOptions('durable.mjs', { NAME: name, SCRIPTED: srv.url, LEASE_MS: String(LEASE_MS) }), name });
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
/**
 * The object's stats once its alarm is gone (and `also` holds): the alarm is let go when a drain
 * ends, a moment after the task's record says processed. Waited for up to 10 s: an alarm that
 * stays (a loop) still fails.
 */
const alarmGone = (mf, name, also = () => true) =>
  until('no alarm left', async () => {
    const r = await call(mf, name, '/stats');
    return r.alarm === null && also(r) && r;
  });

async function call(mf, name, route, method = 'GET') {
  const res = await (await mf.getWorker(name)).fetch(`http://worker${route}`, { method });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

const runsOf = (id) => runs.filter((r) => r.id === id);

let mf;
test('three Worker instances and the object share one DurableObjectStore: every task runs exactly once', { timeout: 60_000 }, async () => {
  mf = fleet();
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

test('a Worker dies holding a task: the object sweeps it after its lease and runs it', { timeout: 30_000 }, async () => {
  hang.add('k1');
  await call(mf, 'b', '/pause?on=1', 'POST'); // the object takes nothing while Worker a claims
  const claimed = await call(mf, 'a', '/hang?id=k1', 'POST');
  assert.deepEqual([claimed.state, claimed.lockedBy], ['processing', 'a']);
  // Worker a's request has ended: its handler is gone, the record stays processing.
  await call(mf, 'b', '/pause?on=0', 'POST');
  await until('the second run', () => runsOf('k1').length === 2);
  const [first, second] = runsOf('k1');
  assert.deepEqual([first.by, second.by], ['a', 'object']);
  assert.ok(second.at > claimed.completeBy, 'not before the lease ended');
  const rec = await until('k1 processed', async () => {
    const r = await call(mf, 'c', '/get?id=k1');
    return r.state === 'processed' && r;
  });
  assert.deepEqual([rec.failureCount, rec.lastError, rec.lockedBy], [1, LEASE_EXPIRED, null]);
});

test('the object is reset mid-task: its alarm alone brings the task back after the lease', { timeout: 30_000 }, async () => {
  hang.add('r1');
  await call(mf, 'a', '/enqueue?id=r1', 'POST');
  await until('the object to start r1', () => runsOf('r1').length === 1);
  assert.equal(runsOf('r1')[0].by, 'object');
  const reset = Date.now();
  assert.match(await call(mf, 'a', '/reset', 'POST'), /reset by the test/);
  // From here no request reaches the object until r1 has run again.
  await until('the run after the reset', () => runsOf('r1').length === 2);
  assert.ok(runsOf('r1')[1].at - reset >= LEASE_MS - 100, 'after the lease');
  const rec = await call(mf, 'a', '/get?id=r1');
  assert.deepEqual([rec.state, rec.failureCount, rec.lastError], ['processed', 1, LEASE_EXPIRED]);
});

test('a delayed task runs when the alarm fires; nothing polls, no alarm is left', { timeout: 30_000 }, async () => {
  const before = await call(mf, 'a', '/stats');
  assert.equal(before.alarm, null, 'nothing pending: no alarm');
  const t0 = Date.now();
  await call(mf, 'a', '/enqueue?id=d1&inMs=400', 'POST');
  const armed = await call(mf, 'b', '/stats');
  assert.ok(armed.alarm >= t0 + 400 && armed.alarm < t0 + 1000, 'the alarm is at the task due time');
  await until('d1 to run', () => runsOf('d1').length === 1);
  const ran = runsOf('d1')[0].at - t0;
  // (an alarm never set never runs it: 2 s of room for a loaded machine still tells that)
  assert.ok(ran >= 400 && ran < 2400, `d1 ran ${ran} ms after its enqueue (due after 400)`);
  const after = await alarmGone(mf, 'c');
  assert.ok(after.alarms - before.alarms <= 2, `${after.alarms - before.alarms} alarms for one delayed task`);
  assert.equal(after.started, false, "the object's queue is never started: it has no poll timer");
});

let bad;
test('records the queue skips (no seed, null, an unknown state, a string time, an index entry with no record): reported once, no alarm loop', {
  timeout: 30_000,
}, async () => {
  bad = fleet();
  const kinds = ['noseed', 'null', 'state', 'string', 'orphan'];
  for (const kind of kinds) await call(bad, 'a', `/plant?ids=${kind}1&kind=${kind}&ago=1000`, 'POST');
  await until('each reported', async () => (await call(bad, 'b', '/stats')).reported.length >= kinds.length);
  await sleep(100);
  const before = await call(bad, 'a', '/stats');
  const t0 = Date.now();
  await call(bad, 'a', '/enqueue?id=v1&inMs=300', 'POST');
  const armed = await call(bad, 'b', '/stats');
  assert.ok(
    armed.alarm >= t0 + 300 && armed.alarm < t0 + 1000,
    `the alarm is at the valid task's due time, not a skipped record's: ${armed.alarm - t0}`,
  );
  await until('v1 to run', () => runsOf('v1').length === 1);
  await sleep(300);
  const after = await alarmGone(bad, 'c');
  // (a loop ran 17-270 alarms a second: setting the alarm back to a skipped record's past time after each drain)
  assert.ok(after.alarms - before.alarms <= 2, `${after.alarms - before.alarms} alarms from the reports until after the delayed task ran`);
  assert.deepEqual(after.reported.sort(), kinds.map((k) => `${k}1`).sort(), 'each once');
  assert.equal(after.states.processed, 1);
});

test('concurrency + 1 malformed records ahead of a good one: the drain ends, the good one runs, the object answers', {
  timeout: 30_000,
}, async () => {
  // (concurrency 4: five records with no seed, due before the task)
  await call(bad, 'a', '/plant?ids=m1,m2,m3,m4,m5&kind=noseed&ago=500', 'POST');
  await call(bad, 'a', '/enqueue?id=v2', 'POST');
  await until('v2 to run', () => runsOf('v2').length === 1, 5000);
  const s = await alarmGone(bad, 'b', (r) => r.states.processed === 2);
  assert.deepEqual(
    s.reported.filter((id) => id.startsWith('m')),
    ['m1', 'm2', 'm3', 'm4', 'm5'],
  );
});

test('an id with a lone surrogate is refused (RangeError naming id) by enqueueTo and by the object; nothing is stored', {
  timeout: 30_000,
}, async () => {
  const r = await call(bad, 'a', '/lone', 'POST');
  for (const [name, message] of [r.client, r.rpc]) {
    assert.equal(name, 'RangeError');
    assert.match(message, /^id must be a well-formed string/);
  }
  assert.deepEqual(
    r.stored.filter(([k]) => k.startsWith('order-')),
    [],
  );
});

test('the whole process stops mid-task: the records persist; local workerd forgot the alarm, and the object re-arms it when the first request starts it', {
  timeout: 60_000,
}, async () => {
  const persisted = fleet(dir);
  hang.add('p1');
  await call(persisted, 'a', '/enqueue?id=p1', 'POST');
  await until('the object to start p1', () => runsOf('p1').length === 1);
  await persisted.dispose();
  fleets.splice(fleets.indexOf(persisted), 1);
  const again = fleet(dir);
  // Past the lease (and the alarm set for it), with no request: local workerd
  // forgot the alarm, so nothing runs yet (what docs/edge-fleets.md says).
  await sleep(LEASE_MS + 400);
  assert.equal(runsOf('p1').length, 1, 'no run before a request reaches the object');
  const left = await call(again, 'b', '/get?id=p1'); // the first request starts the object
  assert.equal(left.state, 'processing', 'the record survived, still leased');
  await until('the run after the restart', () => runsOf('p1').length === 2, 15_000);
  const rec = await until('p1 processed', async () => {
    const r = await call(again, 'c', '/get?id=p1');
    return r.state === 'processed' && r;
  });
  assert.deepEqual([rec.failureCount, rec.lastError], [1, LEASE_EXPIRED]);
});
