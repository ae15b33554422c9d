// The durable task queue in Node with the default MemoryStore, in short real
// time (leases and delays of tens of ms): scripted failures, permanent
// failure and compensation, expired leases and the sweep, two instances on
// one store, option errors, and no timer left after stop().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TaskQueue, TaskEvent, PermanentError, MemoryStore } from 'wasm-backoff/queue';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Records every event of `q` as [type, id, state, failureCount, extra]. */
function record(q) {
  const log = [];
  for (const type of ['processed', 'retry', 'error', 'storeerror']) {
    q.addEventListener(type, (e) => {
      assert.ok(e instanceof TaskEvent);
      log.push({ type, id: e.task?.id, state: e.task?.state, failures: e.task?.failureCount, error: e.error, delayMs: e.delayMs, compensationError: e.compensationError });
    });
  }
  return log;
}

/** Resolves once every id in `ids` is final in `store` (processed or error); fails after `ms`. */
async function settled(store, ids, ms = 5000) {
  const until = Date.now() + ms;
  for (;;) {
    const recs = await Promise.all(ids.map((id) => store.get(id)));
    if (recs.every((r) => r && (r.state === 'processed' || r.state === 'error'))) return recs;
    if (Date.now() > until) assert.fail(`not settled after ${ms} ms: ${JSON.stringify(recs.filter((r) => r?.state !== 'processed' && r?.state !== 'error'))}`);
    await sleep(5);
  }
}

test('tasks are processed, events raised, nothing lost, no timer left after stop()', async () => {
  const before = timers();
  const seen = [];
  const q = new TaskQueue({ handler: async (task) => seen.push(task.payload), pollMs: 20, leaseMs: 1000 });
  const log = record(q);
  q.start();
  const ids = [];
  for (let i = 0; i < 20; i++) ids.push(await q.enqueue({ n: i }));
  const recs = await settled(q.store, ids);
  await q.stop();
  assert.equal(timers(), before, 'no timer left after stop()');
  assert.ok(recs.every((r) => r.state === 'processed' && r.failureCount === 0 && r.lockedBy === null));
  assert.deepEqual(seen.map((p) => p.n).sort((a, b) => a - b), [...Array(20).keys()], 'each handler ran once');
  assert.deepEqual(log.map((e) => e.type), Array(20).fill('processed'));
  assert.equal(q.running, false);
});

test('scripted failures: retried after the backoff delay, then processed', async () => {
  const calls = new Map();
  const starts = [];
  const q = new TaskQueue({
    handler: async (task) => {
      const n = (calls.get(task.id) ?? 0) + 1;
      calls.set(task.id, n);
      starts.push(Date.now());
      if (n <= 2) throw new Error(`attempt ${n} failed`);
    },
    backoff: { baseMs: 40, jitter: 'none' },
    maxFailures: 5,
    pollMs: 500, // the queue must wake for the retry itself, not wait for a poll
  });
  const log = record(q);
  q.start();
  const id = await q.enqueue('flaky', { id: 'flaky-1' });
  const [rec] = await settled(q.store, [id]);
  await q.stop();
  assert.equal(rec.state, 'processed');
  assert.equal(rec.failureCount, 2);
  assert.equal(calls.get(id), 3);
  assert.deepEqual(log.map((e) => [e.type, e.failures, e.delayMs]), [
    ['retry', 1, 40],
    ['retry', 2, 80],
    ['processed', 2, undefined],
  ]);
  assert.equal(log[0].error.message, 'attempt 1 failed');
  // The waits really happened (exponential, no jitter: 40 then 80 ms).
  assert.ok(starts[1] - starts[0] >= 39, `first retry after ${starts[1] - starts[0]} ms`);
  assert.ok(starts[2] - starts[1] >= 79, `second retry after ${starts[2] - starts[1]} ms`);
});

test('a handler that always fails ends in error after maxFailures, with the error event', async () => {
  let calls = 0;
  const compensated = [];
  const q = new TaskQueue({
    handler: async () => {
      calls++;
      throw new Error('always');
    },
    onCompensate: (task, error) => compensated.push([task.id, task.state, error.message]),
    maxFailures: 3,
    backoff: { baseMs: 5 },
    pollMs: 20,
  });
  const log = record(q);
  q.start();
  const id = await q.enqueue(null);
  const [rec] = await settled(q.store, [id]);
  await q.stop();
  assert.equal(rec.state, 'error');
  assert.equal(rec.failureCount, 3);
  assert.equal(rec.lastError, 'always');
  assert.equal(calls, 3);
  assert.deepEqual(log.map((e) => e.type), ['retry', 'retry', 'error']);
  assert.equal(log[2].failures, 3);
  assert.deepEqual(compensated, [[id, 'error', 'always']], 'compensation ran once, on the error');
});

test('a permanent failure goes to error at once and runs the compensation hook', async () => {
  let calls = 0;
  const compensated = [];
  const q = new TaskQueue({
    handler: async (task) => {
      calls++;
      if (task.payload === 'perm') throw new PermanentError('card declined');
      if (task.payload === 'duck') throw Object.assign(new Error('from another realm'), { permanent: true });
    },
    onCompensate: async (task, error) => {
      compensated.push([task.payload, error.message]);
      if (task.payload === 'duck') throw new Error('compensation failed');
    },
    maxFailures: 5,
    pollMs: 20,
  });
  const log = record(q);
  q.start();
  const ids = [await q.enqueue('perm'), await q.enqueue('duck'), await q.enqueue('fine')];
  const recs = await settled(q.store, ids);
  await q.stop();
  assert.deepEqual(recs.map((r) => [r.state, r.failureCount]), [['error', 1], ['error', 1], ['processed', 0]]);
  assert.equal(calls, 3, 'no retry of a permanent failure');
  assert.deepEqual(compensated.sort(), [['duck', 'from another realm'], ['perm', 'card declined']]);
  const errors = log.filter((e) => e.type === 'error');
  assert.equal(errors.length, 2);
  assert.ok(errors.find((e) => e.id === ids[0]).error instanceof PermanentError);
  assert.equal(errors.find((e) => e.id === ids[1]).compensationError.message, 'compensation failed');
  assert.equal(errors.find((e) => e.id === ids[0]).compensationError, undefined);
  assert.equal(log.filter((e) => e.type === 'retry').length, 0);
});

test('a handler past completeBy: its signal aborts, the sweep takes the task back, a late result is ignored', async () => {
  const before = timers();
  const attempts = [];
  let late;
  const q = new TaskQueue({
    handler: (task, { signal, completeBy }) => {
      attempts.push({ signal, completeBy, at: Date.now() });
      if (attempts.length === 1) {
        // Hangs past the lease, ignoring the signal, then "succeeds" late.
        late = sleep(150);
        return late;
      }
      return undefined; // a plain value is a success too
    },
    leaseMs: 50,
    backoff: { baseMs: 10, jitter: 'none' },
    pollMs: 1000, // the sweep must come from the lease deadline, not from polling
  });
  const log = record(q);
  q.start();
  const id = await q.enqueue('slow');
  const [rec] = await settled(q.store, [id]);
  assert.equal(rec.state, 'processed');
  assert.equal(rec.failureCount, 1, 'the expired lease counted as one failure');
  assert.equal(attempts.length, 2);
  const [first] = attempts;
  assert.equal(first.signal.aborted, true);
  assert.equal(first.signal.reason.name, 'TimeoutError');
  const left = first.completeBy - first.at; // the lease started at the claim, just before the handler
  assert.ok(left > 0 && left <= 50, `completeBy was ${left} ms ahead of the handler's start`);
  assert.ok(attempts[1].at >= first.completeBy, 'retried only after the lease');
  assert.deepEqual(log.map((e) => e.type), ['retry', 'processed']);
  assert.equal(log[0].error.name, 'TimeoutError');
  await late; // the first handler resolves now: nothing changes
  await sleep(10);
  assert.equal((await q.get(id)).version, rec.version);
  await q.stop();
  assert.equal(timers(), before);
});

test('two instances on one store: every task handled exactly once, by both instances', async () => {
  const store = new MemoryStore();
  const handledBy = new Map();
  const make = (name) =>
    new TaskQueue({
      store,
      instanceId: name,
      concurrency: 3,
      pollMs: 10,
      handler: async (task) => {
        assert.equal(handledBy.has(task.id), false, `${task.id} handled twice`);
        handledBy.set(task.id, name);
        await sleep(Math.random() * 4);
      },
    });
  const a = make('A').start();
  const b = make('B').start();
  const ids = await Promise.all(Array.from({ length: 100 }, (_, i) => (i % 2 ? a : b).enqueue(i)));
  const recs = await settled(store, ids);
  await Promise.all([a.stop(), b.stop()]);
  assert.ok(recs.every((r) => r.state === 'processed' && r.failureCount === 0));
  assert.equal(handledBy.size, 100);
  const counts = [...handledBy.values()].reduce((m, n) => ({ ...m, [n]: (m[n] ?? 0) + 1 }), {});
  assert.ok(counts.A > 0 && counts.B > 0, `both instances worked: ${JSON.stringify(counts)}`);
});

test('a crashed instance: its processing record is swept after completeBy and finished by another', async () => {
  const store = new MemoryStore();
  const now = Date.now();
  // What a crashed instance leaves behind: processing, locked, lease running out.
  await store.add({ id: 'orphan', payload: 1, state: 'processing', lockedBy: 'dead', completeBy: now + 40, failureCount: 0, nextAttemptAt: now, createdAt: now, seed: 1, version: 3, lastError: null });
  const ran = [];
  const q = new TaskQueue({ store, handler: (t) => ran.push([t.id, Date.now()]), backoff: { baseMs: 1 }, pollMs: 1000 });
  const log = record(q);
  q.start();
  const [rec] = await settled(store, ['orphan']);
  await q.stop();
  assert.equal(rec.state, 'processed');
  assert.equal(rec.failureCount, 1);
  assert.ok(ran[0][1] > now + 40, 'not before the lease expired');
  assert.deepEqual(log.map((e) => e.type), ['retry', 'processed']);
});

test('enqueue with an existing id changes nothing; stop() waits for handlers in flight', async () => {
  let finished = false;
  const q = new TaskQueue({
    handler: async () => {
      await sleep(30);
      finished = true;
    },
    pollMs: 10,
  });
  assert.equal(await q.enqueue('first', { id: 'x' }), 'x');
  assert.equal(await q.enqueue('second', { id: 'x' }), 'x');
  assert.equal((await q.get('x')).payload, 'first');
  q.start();
  await sleep(10);
  await q.stop();
  assert.equal(finished, true, 'stop() resolved after the handler in flight');
  assert.equal((await q.get('x')).state, 'processed');
});

test('with a backoff seed, a task seed is a function of it and the task id', async () => {
  const make = () => new TaskQueue({ handler() {}, backoff: { seed: 12345 } });
  const [a, b] = [make(), make()];
  await a.enqueue(0, { id: 'same' });
  await b.enqueue(0, { id: 'same' });
  await b.enqueue(0, { id: 'other' });
  assert.equal((await a.get('same')).seed, (await b.get('same')).seed);
  assert.notEqual((await b.get('same')).seed, (await b.get('other')).seed);
});

test('bad options: TypeError / RangeError naming the option', () => {
  const h = () => {};
  const cases = [
    [undefined, TypeError, 'options must be an object'],
    [{}, TypeError, 'handler must be a function'],
    [{ handler: h, leaseMs: '1' }, TypeError, 'leaseMs must be a number > 0 and <= 2147483647'],
    [{ handler: h, leaseMs: 0 }, RangeError, 'leaseMs must be a number > 0 and <= 2147483647'],
    [{ handler: h, leaseMs: NaN }, RangeError, 'leaseMs must be a number > 0 and <= 2147483647'],
    [{ handler: h, leaseMs: 2 ** 31 }, RangeError, 'leaseMs must be a number > 0 and <= 2147483647'],
    [{ handler: h, maxFailures: 0 }, RangeError, 'maxFailures must be an integer >= 1'],
    [{ handler: h, maxFailures: 1.5 }, RangeError, 'maxFailures must be an integer >= 1'],
    [{ handler: h, maxFailures: null }, TypeError, 'maxFailures must be an integer >= 1'],
    [{ handler: h, concurrency: 0 }, RangeError, 'concurrency must be an integer >= 1'],
    [{ handler: h, pollMs: 'often' }, TypeError, 'pollMs must be a number in [1, 2147483647]'],
    [{ handler: h, pollMs: 2 ** 31 }, RangeError, 'pollMs must be a number in [1, 2147483647]'],
    [{ handler: h, concurrency: 1.5 }, RangeError, 'concurrency must be an integer >= 1'],
    [{ handler: h, onCompensate: 1 }, TypeError, 'onCompensate must be a function'],
    [{ handler: h, instanceId: '' }, TypeError, 'instanceId must be a non-empty string'],
    [{ handler: h, store: {} }, TypeError, 'store must have an add() method (see the TaskStore interface)'],
    [{ handler: h, backoff: 3 }, TypeError, 'backoff must be an object'],
    [{ handler: h, backoff: { baseMs: -1 } }, RangeError, 'baseMs must be a finite number >= 0'],
    [{ handler: h, backoff: { seed: 0.5 } }, RangeError, 'seed must be a safe integer'],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(() => new TaskQueue(options), (e) => e.constructor === type && e.message === message, JSON.stringify(options));
  }
  assert.ok(new TaskQueue({ handler: h, maxFailures: Infinity, leaseMs: 2 ** 31 - 1 }));
});
