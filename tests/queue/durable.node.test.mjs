// TaskQueueObject and DurableObjectStore (the js/ sources) on a stand-in of
// a Durable Object's storage and alarm (storage.mjs), in virtual time: the
// alarm is always at the next due time, exactly; a delayed task runs when it
// fires, and nothing polls; a lease a dead Worker held is swept by the
// alarm 1 ms after it ended; after a restart that forgot the alarm, the new
// object re-arms it; records the queue skips never set the alarm (no alarm
// loop). The real runtime's smoke is queue.durable.test.mjs (workerd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { register } from 'node:module';
import { Storage } from './storage.mjs';
import { T0, taskRecord, world } from './virtual.mjs';

// queue-object.js extends workerd's DurableObject ('cloudflare:workers'): a stand-in here.
const base = 'export class DurableObject { constructor(ctx, env) { this.ctx = ctx; this.env = env; } }';
const hooks = `export async function resolve(specifier, context, next) {
  if (specifier === 'cloudflare:workers') return { shortCircuit: true, url: ${JSON.stringify(`data:text/javascript,${encodeURIComponent(base)}`)} };
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
const { TaskQueueObject } = await import('../../js/queue/queue-object.js');
const { LEASE_EXPIRED } = await import('../../js/queue/errors.js');

const LEASE_MS = 600;

/** The object of the tests: each run logged in `env.runs` as [id, ms since T0]; ids in `env.hang` hang. */
class Jobs extends TaskQueueObject {
  get options() {
    return { leaseMs: LEASE_MS, backoff: { baseMs: 20, jitter: 'none' } };
  }

  handler(task) {
    this.env.runs.push([task.id, Date.now() - T0]);
    if (this.env.hang.has(task.id)) return new Promise(() => {});
  }
}

/**
 * A Jobs object on `storage` (its alarm calls the object's alarm()), in the
 * world `w`; resolves once its constructor's work (the alarm set afresh) is done.
 */
async function object(w, storage, env) {
  let ready;
  const ctx = { storage, blockConcurrencyWhile: (f) => (ready = f()) };
  const o = new Jobs(ctx, env);
  storage.onAlarm = () => o.alarm();
  await w.run(ready);
  return o;
}

/**
 * For test `t`: its world `w`, a storage, the object on it (`o`), the
 * runs' log and the ids to hang (`env`), and the ids the objects reported
 * as malformed in their log (console.error).
 */
async function setup(t) {
  const w = world(t);
  const reported = logged(t);
  const storage = new Storage();
  const env = { runs: [], hang: new Set() };
  return { w, reported, storage, env, o: await object(w, storage, env) };
}

/** The log of the objects of test `t` (console.error): the ids of the records reported. */
function logged(t) {
  const ids = [];
  t.mock.method(console, 'error', (_what, error) => ids.push(/^malformed task record (.*)@/.exec(error?.message)?.[1] ?? String(error)));
  return ids;
}

const since = (times) => times.map((at) => at - T0);

test('a delayed task: the alarm is at its due time, it runs when the alarm fires; then no alarm, and nothing polls', async (t) => {
  const { w, storage, env, o } = await setup(t);
  assert.equal(await storage.getAlarm(), null, 'nothing pending: no alarm');
  await o.enqueue({}, { id: 'd1', notBefore: T0 + 400 });
  assert.equal(await storage.getAlarm(), T0 + 400);
  await w.tick(60_000);
  assert.deepEqual(env.runs, [['d1', 400]]);
  assert.deepEqual(since(storage.fired), [400], 'one alarm in a minute');
  assert.equal(await storage.getAlarm(), null);
  assert.equal((await o.get('d1')).state, 'processed');
  assert.equal(o.queue.running, false, "the object's queue is never started: it has no poll timer");
  assert.equal(w.clock.pending(), 0);
});

test('a Worker died holding a task: the alarm sweeps its lease 1 ms after its end, and the object runs it after the backoff', async (t) => {
  const { w, storage, env, o } = await setup(t);
  // What Worker a leaves behind when its request ends mid-task (it claimed the task through the object's store).
  await o.store.add(taskRecord({ id: 'k1', state: 'processing', lockedBy: 'a', completeBy: T0 + LEASE_MS }));
  assert.equal(await storage.getAlarm(), T0 + LEASE_MS + 1, 'the alarm is at the sweep');
  await w.tick(60_000);
  assert.deepEqual(env.runs, [['k1', 621]]);
  assert.deepEqual(since(storage.fired), [601, 621]);
  const rec = await o.get('k1');
  assert.deepEqual([rec.state, rec.failureCount, rec.lastError, rec.lockedBy], ['processed', 1, LEASE_EXPIRED, null]);
  assert.equal(await storage.getAlarm(), null);
});

test('a restart that forgot the alarm (local workerd): the new object sets it afresh, and the task held at the restart is swept and run', async (t) => {
  const { w, storage, env, o: before } = await setup(t);
  await before.store.add(taskRecord({ id: 'p1', state: 'processing', lockedBy: before.queue.instanceId, completeBy: T0 + LEASE_MS }));
  storage.forget(); // the process stops: the alarm's time stays stored, nothing is scheduled
  await w.tick(1000);
  assert.deepEqual([env.runs, storage.fired], [[], []], 'nothing runs while no object is there');
  assert.equal(await storage.getAlarm(), T0 + LEASE_MS + 1, 'the stored time (setting it again would schedule nothing)');
  await object(w, storage, env); // the first request after the restart starts the object
  await w.tick(60_000);
  assert.deepEqual(since(storage.fired), [1000, 1020], 'at once (its time has passed), then the retry');
  assert.deepEqual(env.runs, [['p1', 1020]]);
  const rec = await storage.get('t:p1');
  assert.deepEqual([rec.state, rec.failureCount, rec.lastError], ['processed', 1, LEASE_EXPIRED]);
});

/**
 * Writes records the queue must skip, due `ago` ms ago: each through the
 * store (its index entry, its alarm), then spoiled in storage. `kind`:
 * noseed, null (the record is null), state (an unknown one), string (a
 * string time), orphan (an index entry with no record).
 */
async function plant(o, storage, ids, kind, ago) {
  for (const id of ids) {
    const at = Date.now() - ago;
    const r = taskRecord({ id, nextAttemptAt: at, createdAt: at });
    if (kind === 'noseed') delete r.seed;
    if (kind === 'string') r.nextAttemptAt = r.createdAt = 'soon';
    await o.store.add(r);
    if (kind === 'null') await storage.put(`t:${id}`, null);
    if (kind === 'state') await storage.put(`t:${id}`, { ...r, state: 'sleeping' });
    if (kind === 'orphan') await storage.delete(`t:${id}`);
  }
}

test('records the queue skips (no seed, null, an unknown state, a string time, an index entry with no record): reported once, they never set the alarm', async (t) => {
  const { w, reported, storage, env, o } = await setup(t);
  const kinds = ['noseed', 'null', 'state', 'string', 'orphan'];
  for (const kind of kinds) await plant(o, storage, [`${kind}1`], kind, 1000);
  await w.tick(0); // their alarm (due 1 s ago) fires: the drain reports them, and sets no alarm for them
  assert.deepEqual(reported.sort(), kinds.map((k) => `${k}1`).sort(), 'each once');
  assert.equal(await storage.getAlarm(), null);
  await o.enqueue({}, { id: 'v1', notBefore: T0 + 300 });
  assert.equal(await storage.getAlarm(), T0 + 300, "the alarm is at the valid task's due time, not a skipped record's");
  await w.tick(60_000);
  assert.deepEqual(env.runs, [['v1', 300]]);
  // (a loop ran 17-270 alarms a second: setting the alarm back to a skipped record's past time after each drain)
  assert.deepEqual(since(storage.fired), [0, 300], 'two alarms in a minute');
  assert.equal(reported.length, kinds.length, 'reported once (per object and record version)');
  assert.equal(await storage.getAlarm(), null);
});

test('concurrency + 1 malformed records ahead of a good one: the drain ends, the good one runs at once, no alarm is left', async (t) => {
  const { w, reported, storage, env, o } = await setup(t);
  // (concurrency 4: five records with no seed, due before the task)
  await plant(o, storage, ['m1', 'm2', 'm3', 'm4', 'm5'], 'noseed', 500);
  await o.enqueue({}, { id: 'v2' });
  await w.tick(60_000);
  assert.deepEqual(env.runs, [['v2', 0]]);
  assert.deepEqual(reported, ['m1', 'm2', 'm3', 'm4', 'm5']);
  assert.deepEqual(since(storage.fired), [0]);
  assert.equal(await storage.getAlarm(), null);
});
