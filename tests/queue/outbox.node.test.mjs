// wasm-backoff/outbox in Node 20 (a MemoryStore in place of IndexedDB)
// against the scripted server on 127.0.0.1: what a stored request keeps,
// its replay (the body, one idempotency key on every try), which answers end
// it, the body bound, and fetch()'s 202 on a network failure. The browser
// half (IndexedDB, a Service Worker, Background Sync) is
// tests/queue/outbox.chromium.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Outbox, MemoryStore } from 'wasm-backoff/outbox';
import { startScripted } from '../server/scripted.mjs';
import { until } from '../support/wait.mjs';
import { install, T0 } from '../engine/clock.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

/** An outbox on a MemoryStore, quick retries, not started. */
const make = (options = {}) =>
  new Outbox({
    retry: { baseMs: 1, maxAttempts: 2 },
    ...options,
    queue: { store: new MemoryStore(), backoff: { baseMs: 5, jitter: 'none' }, pollMs: 10, ...options.queue },
  });

/** Resolves with the first `type` event of the outbox's queue. */
const once = (outbox, type) => new Promise((resolve) => outbox.queue.addEventListener(type, resolve, { once: true }));

const post = (path, body, headers = {}) =>
  new Request(srv.url + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

test('add() stores method, URL, headers, body and a key; the replay sends it, the key on every try', async () => {
  srv.script('/forms', [{ status: 503 }, { status: 201 }]);
  const outbox = make();
  const id = await outbox.add(post('/forms', '{"name":"Ada"}', { 'x-form': '1' }));
  assert.match(id, /^[0-9a-f-]{36}$/);
  const rec = await outbox.queue.get(id);
  assert.equal(rec.state, 'pending');
  assert.equal(rec.payload.method, 'POST');
  assert.equal(rec.payload.url, `${srv.url}/forms`);
  assert.equal(new TextDecoder().decode(rec.payload.body), '{"name":"Ada"}');
  assert.deepEqual(Object.fromEntries(rec.payload.headers), { 'content-type': 'application/json', 'idempotency-key': id, 'x-form': '1' });
  const done = once(outbox, 'processed');
  outbox.start();
  await done;
  await outbox.stop();
  const sent = srv.requests.filter((r) => r.path === '/forms');
  assert.deepEqual(
    sent.map((r) => [r.method, r.body, r.headers['idempotency-key'], r.headers['x-form']]),
    [
      ['POST', '{"name":"Ada"}', id, '1'],
      ['POST', '{"name":"Ada"}', id, '1'],
    ],
  );
});

test("a request's own Idempotency-Key is its id: adding it twice stores it once", async () => {
  const outbox = make();
  const a = await outbox.add(post('/x', '1', { 'idempotency-key': 'order-7' }));
  const b = await outbox.add(post('/x', '1', { 'idempotency-key': 'order-7' }));
  assert.deepEqual([a, b], ['order-7', 'order-7']);
  assert.equal((await outbox.queue.store.active()).length, 1);
});

test('a body over maxBodyBytes is refused with a RangeError naming the bound, nothing stored', async () => {
  const outbox = make({ maxBodyBytes: 10 });
  await assert.rejects(outbox.add(post('/x', 'x'.repeat(11))), {
    name: 'RangeError',
    message: /^maxBodyBytes: the request body \((?:at least )?11 bytes\) is over the outbox's bound \(10 bytes\)/,
  });
  assert.equal((await outbox.queue.store.active()).length, 0);
  assert.ok(await outbox.add(post('/x', 'x'.repeat(10))), 'at the bound: stored');
});

test('a 400 ends the task in error at once (PermanentError); a 429 leaves it for later', async () => {
  srv.script('/bad', { status: 400 });
  srv.script('/busy', [{ status: 429 }, { status: 429 }, { status: 200 }]);
  const outbox = make();
  const errored = once(outbox, 'error');
  const bad = await outbox.add(post('/bad', '{}'));
  const busy = await outbox.add(post('/busy', '{}'));
  const processed = once(outbox, 'processed');
  outbox.start();
  assert.equal((await errored).task.id, bad);
  assert.equal((await processed).task.id, busy);
  await outbox.stop();
  assert.equal(srv.count('/bad'), 1, 'a 400 is sent once: a retry would never succeed');
  assert.equal((await outbox.queue.get(bad)).state, 'error');
  assert.equal((await outbox.queue.get(busy)).failureCount, 1);
});

test("the replay's retry policy decides: a 501 ends the task unless retryOn has it; x-should-retry: false ends a 503's", async () => {
  srv.script('/nope', { status: 501 });
  srv.script('/never', { status: 503, headers: { 'x-should-retry': 'false' } });
  srv.script('/later', { status: 501 });
  const outbox = make();
  const ended = [];
  outbox.queue.addEventListener('error', (e) => ended.push(e.task.id));
  const nope = await outbox.add(post('/nope', '{}'));
  const never = await outbox.add(post('/never', '{}'));
  outbox.start();
  await until('both tasks ended', () => ended.length === 2);
  await outbox.stop();
  assert.deepEqual(ended.sort(), [nope, never].sort());
  assert.equal(srv.count('/nope') + srv.count('/never'), 2, 'each sent once');
  const told = [];
  const keeps = make({ retry: { maxAttempts: 2, baseMs: 1, retryOn: [501], onDone: (i) => told.push(i.reason) } });
  const later = await keeps.add(post('/later', '{}'));
  const failed = once(keeps, 'retry');
  keeps.start();
  assert.equal((await failed).task.id, later);
  await keeps.stop();
  assert.equal((await keeps.queue.get(later)).state, 'pending', 'left for a later replay');
  assert.equal(srv.count('/later'), 2);
  assert.deepEqual(told, ['exhausted'], "the caller's onDone is told too");
});

test('later, not never: a delay hook that gives up (a 500), a 429 outside a custom retryOn', async () => {
  for (const [path, retry, step] of [
    ['/gave-up', { maxAttempts: 3, baseMs: 1, delay: () => false }, { status: 500 }],
    ['/busy-429', { maxAttempts: 2, baseMs: 1, retryOn: [503] }, { status: 429 }],
  ]) {
    srv.script(path, step);
    const outbox = make({ retry });
    const seen = [];
    outbox.queue.addEventListener('error', () => seen.push('error'));
    outbox.queue.addEventListener('retry', () => seen.push('retry'));
    await outbox.add(post(path, '{}'));
    outbox.start();
    await until(path, () => seen.length > 0);
    await outbox.stop();
    assert.equal(seen[0], 'retry', `${path}: left for a later replay`);
  }
});

test('fetch(): the answer when there is one; on a network failure the request is stored and the answer is 202', async () => {
  srv.script('/up', { status: 201 });
  const outbox = make();
  assert.equal((await outbox.fetch(post('/up', '{}'))).status, 201);
  assert.equal((await outbox.queue.store.active()).length, 0);
  srv.script('/reset', [{ reset: true }, { status: 200 }]);
  const res = await outbox.fetch(post('/reset', '{"a":1}'));
  assert.equal(res.status, 202);
  const id = res.headers.get('outbox-id');
  assert.equal(new TextDecoder().decode((await outbox.queue.get(id)).payload.body), '{"a":1}');
});

test("a throttled replay's next try waits the server's Retry-After; a wait past the lease ends the replay, not the lease", async () => {
  // One try a replay: the 429's Retry-After (1 s) is the queue's next delay, not its own 5 ms.
  srv.script('/ra', [{ status: 429, headers: { 'retry-after': '1' } }, { status: 201 }]);
  const outbox = make({ retry: { baseMs: 1, maxAttempts: 1 } });
  const id = await outbox.add(post('/ra', '{}'));
  const retried = once(outbox, 'retry');
  const processed = once(outbox, 'processed');
  outbox.start();
  const r = await retried;
  assert.ok(r.delayMs >= 900, `the next replay in ${r.delayMs} ms`);
  assert.equal((await processed).task.id, id);
  await outbox.stop();
  const at = srv.requests.filter((q) => q.path === '/ra').map((q) => q.at);
  assert.ok(at.length === 2 && at[1] - at[0] >= 950, `requests at ${at}`);
  // A 2 s wait inside a 1 s lease: the replay ends on its deadline (its 429), the queue waits the 2 s.
  srv.script('/ra-lease', [{ status: 429, headers: { 'retry-after': '2' } }, { status: 201 }]);
  const leased = make({ retry: { baseMs: 1, maxAttempts: 3 }, queue: { leaseMs: 1000 } });
  await leased.add(post('/ra-lease', '{}'));
  const again = once(leased, 'retry');
  leased.start();
  const e = await again;
  await leased.stop();
  assert.match(String(e.error?.message), /^HTTP 429/, 'the answer, not the lease, ended the replay');
  assert.ok(e.delayMs >= 1900, `the next replay in ${e.delayMs} ms`);
  assert.equal(srv.count('/ra-lease'), 1);
});

test('fetch(): a POST is sent with the key it will be replayed under; what fetch refuses is not stored', async () => {
  srv.script('/once', [{ reset: true }, { status: 201 }]);
  const outbox = make();
  const res = await outbox.fetch(post('/once', '{"order":1}'));
  assert.equal(res.status, 202);
  const id = res.headers.get('outbox-id');
  const done = once(outbox, 'processed');
  outbox.start();
  await done;
  await outbox.stop();
  const keys = srv.requests.filter((q) => q.path === '/once').map((q) => q.headers['idempotency-key']);
  assert.deepEqual(keys, [id, id], 'the first send and the replay carry one key');
  // A request fetch refuses to send (not a network failure): its error, nothing stored.
  const refused = new Request(`${srv.url}/refused`, { method: 'POST', body: 'x', headers: { connection: 'upgrade' } });
  await assert.rejects(outbox.fetch(refused), TypeError);
  assert.equal((await outbox.queue.store.active()).length, 0);
  assert.equal(srv.count('/refused'), 0);
  await assert.rejects(outbox.fetch(`${srv.url}/x`), { name: 'TypeError', message: 'request must be a Request' });
  // An empty Idempotency-Key is none: the task gets a key of its own.
  assert.match(await outbox.add(post('/x', '{}', { 'idempotency-key': '' })), /^[0-9a-f-]{36}$/);
});

test('maxBodyBytes: a streamed body is cancelled once it passes the bound, not read to its end', async () => {
  const outbox = make({ maxBodyBytes: 1024 });
  let pulled = 0;
  const chunk = new Uint8Array(64 * 1024);
  let cancelled = false;
  const body = new ReadableStream({
    pull(c) {
      if (pulled >= 64 << 20) return c.close();
      pulled += chunk.length;
      c.enqueue(chunk);
    },
    cancel() {
      cancelled = true;
    },
  });
  await assert.rejects(outbox.add(new Request(`${srv.url}/big`, { method: 'POST', body, duplex: 'half' })), {
    name: 'RangeError',
    message: /^maxBodyBytes: the request body \(at least 65536 bytes\)/,
  });
  assert.ok(cancelled && pulled <= 256 * 1024, `read ${pulled} bytes of 64 MiB`);
});

test('options are checked by the constructor', () => {
  assert.throws(() => new Outbox(), { name: 'TypeError', message: /^queue\.store is needed where there is no IndexedDB/ });
  assert.throws(() => new Outbox({ maxBodyBytes: -1, queue: { store: new MemoryStore() } }), {
    name: 'RangeError',
    message: /^maxBodyBytes/,
  });
  assert.throws(() => new Outbox({ name: '', queue: { store: new MemoryStore() } }), { name: 'TypeError', message: /^name/ });
  assert.throws(() => new Outbox({ queue: { store: new MemoryStore(), syncTag: 'x' } }), { name: 'TypeError', message: /^queue\.syncTag/ });
  assert.throws(() => new Outbox({ retry: { baseMs: -1 }, queue: { store: new MemoryStore() } }), RangeError);
  assert.throws(() => new Outbox({ retry: 3, queue: { store: new MemoryStore() } }), {
    name: 'TypeError',
    message: 'retry must be an object',
  });
  assert.throws(() => new Outbox({ queue: 'idb' }), { name: 'TypeError', message: 'queue must be an object' });
});

/**
 * Fake time and a stand-in for the global fetch, for the test `t`: each
 * request is logged in `sent` ({ path, body, key }) and answered by
 * `answer(path, request)` (throw for a failure with no answer). Both undone
 * after the test.
 */
function offlineWorld(t, answer) {
  const clock = install();
  const real = globalThis.fetch;
  const sent = [];
  globalThis.fetch = async (input, init) => {
    const r = new Request(input, init);
    const path = new URL(r.url).pathname;
    sent.push({ path, body: await r.text(), key: r.headers.get('idempotency-key') });
    return answer(path, r);
  };
  t.after(() => {
    globalThis.fetch = real;
    clock.off();
  });
  return { clock, sent };
}

/** The outbox's queue events, as [type, id, failureCount, reason, delayMs]. */
function record(outbox) {
  const events = [];
  for (const type of ['retry', 'error', 'processed']) {
    outbox.queue.addEventListener(type, (e) =>
      events.push({ type, id: e.task.id, failureCount: e.task.failureCount, reason: e.reason, delayMs: e.delayMs }),
    );
  }
  return events;
}

const form = (path, body = '{"name":"Ada"}') => new Request(`https://api.example${path}`, { method: 'POST', body });

test('every default: no answer (the network) never spends a failure; HTTP answers do, and a permanent one ends the task', async (t) => {
  let network = false;
  const { clock, sent } = offlineWorld(t, (path) => {
    if (path === '/gone') return new Response(null, { status: 400 });
    if (path === '/busy') return new Response(null, { status: 503 });
    if (!network) throw new TypeError('fetch failed');
    return new Response(null, { status: 201 });
  });
  const outbox = new Outbox({ queue: { store: new MemoryStore() } }); // every other option its default
  const events = record(outbox);
  const forms = await outbox.add(form('/forms'));
  const gone = await outbox.add(form('/gone'));
  const busy = await outbox.add(form('/busy'));
  outbox.start();
  await clock.tick(10 * 60_000); // ten minutes with no network for /forms

  const rec = await outbox.queue.get(forms);
  assert.deepEqual([rec.state, rec.failureCount], ['pending', 0], 'no answer is no failure of the task');
  assert.ok(rec.networkWaits > 20, `replayed ${rec.networkWaits} times in ten minutes`);
  assert.match(rec.lastError, /^no answer \(the network failed\): fetch failed$/);
  const waits = events.filter((e) => e.id === forms);
  assert.ok(
    waits.every((e) => e.type === 'retry' && e.failureCount === 0 && e.delayMs <= 20_000),
    "each wait within the backoff's maxDelayMs",
  );
  // The HTTP failures spend the budget: a 400 (the policy never retries it) at once, 503s at the 5th.
  const ended = events.filter((e) => e.type === 'error').map((e) => [e.id, e.failureCount, e.reason]);
  assert.deepEqual(ended, [
    [gone, 1, 'permanent'],
    [busy, 5, 'maxFailures'],
  ]);
  assert.equal(sent.filter((r) => r.path === '/gone').length, 1);

  // The network is back: the next replay (within the 20 s cap) sends it, once.
  network = true;
  const from = sent.length;
  await clock.tick(20_000);
  assert.deepEqual([(await outbox.queue.get(forms)).state, (await outbox.queue.get(forms)).failureCount], ['processed', 0]);
  assert.deepEqual(sent.slice(from), [{ path: '/forms', body: '{"name":"Ada"}', key: forms }]);
  await clock.run(outbox.stop());
});

test('`online` (retryNow) brings a network wait forward, and one under way; while offline even a replay cut by its deadline is no failure', async (t) => {
  let ok = false;
  /** Fails the replay in flight as the network would (it was sent offline). */
  let fail = () => {};
  const { clock, sent } = offlineWorld(t, (_path, r) => {
    if (ok) return new Response(null, { status: 201 });
    // A connection that never answers: the replay's deadline (before its lease) ends it, unless fail() comes first.
    return new Promise((_, reject) => {
      fail = () => reject(new TypeError('fetch failed'));
      r.signal.addEventListener('abort', () => reject(r.signal.reason), { once: true });
    });
  });
  const nav = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  Object.defineProperty(globalThis, 'navigator', { value: { onLine: false }, configurable: true });
  t.after(() => (nav ? Object.defineProperty(globalThis, 'navigator', nav) : delete globalThis.navigator));
  const outbox = new Outbox({
    retry: { maxAttempts: 1 },
    queue: { store: new MemoryStore(), leaseMs: 2000, backoff: { baseMs: 60_000, maxDelayMs: 60_000, jitter: 'none' } },
  });
  const events = record(outbox);
  const id = await outbox.add(form('/forms'));
  outbox.start();
  await clock.tick(5 * 60_000);
  let rec = await outbox.queue.get(id);
  assert.deepEqual([rec.state, rec.failureCount, events.some((e) => e.type === 'error')], ['pending', 0, false], 'offline: no failure');
  assert.match(rec.lastError, /maxElapsedMs \(1900 ms\) passed$/);
  assert.ok(rec.networkWaits >= 4 && rec.nextAttemptAt > Date.now(), 'replayed about once a minute, waiting for the next');

  // The next replay is under way when the browser is back online: the queue's `online`
  // listener calls retryNow, which cannot bring a task in flight forward; the replay,
  // sent offline, fails on the network, and is due again at once, not in a minute.
  await clock.to(rec.nextAttemptAt - T0 + 1);
  assert.equal((await outbox.queue.get(id)).state, 'processing');
  globalThis.navigator.onLine = true;
  ok = true;
  const from = sent.length;
  assert.equal(await clock.run(outbox.queue.retryNow()), 0);
  fail();
  await clock.tick(100);
  rec = await outbox.queue.get(id);
  assert.deepEqual([rec.state, rec.failureCount], ['processed', 0]);
  assert.deepEqual(sent.slice(from), [{ path: '/forms', body: '{"name":"Ada"}', key: id }]);

  // A task waiting for the network (nothing under way) is due at once on retryNow.
  ok = false;
  globalThis.navigator.onLine = false;
  const later = await outbox.add(form('/later'));
  await clock.tick(2100);
  assert.deepEqual([(await outbox.queue.get(later)).state, (await outbox.queue.get(later)).networkWaits], ['pending', 1]);
  globalThis.navigator.onLine = true;
  ok = true;
  assert.equal(await clock.run(outbox.queue.retryNow()), 1);
  await clock.tick(100);
  assert.equal((await outbox.queue.get(later)).state, 'processed');

  // Online, the same hung replay is a failure (the server may have taken it: at least once, under one key).
  ok = false;
  const slow = await outbox.add(form('/slow'));
  await clock.tick(2100);
  rec = await outbox.queue.get(slow);
  assert.deepEqual([rec.state, rec.failureCount, rec.networkWaits], ['pending', 1, undefined]);
  await clock.run(outbox.stop());
});
