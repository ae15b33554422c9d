// wasm-backoff/outbox in Node 20, on the js/ sources (a MemoryStore in
// place of IndexedDB), in virtual time (tests/queue/virtual.mjs), the
// global fetch answered by the kit's scriptedFetch: what a stored request
// keeps, its replay (the body, one idempotency key on every try, the exact
// waits between tries and replays), which answers end it, a server's wait
// over the lease, no answer (the network) that spends no failure, `online`.
// Against the real scripted server on 127.0.0.1, what needs a real fetch
// and no timing: fetch()'s 202 on a real reset, a request fetch refuses.
// The browser half (IndexedDB, a Service Worker, Background Sync, offline)
// is tests/queue/outbox.chromium.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Outbox } from '../../js/queue/outbox.js';
import { MemoryStore } from '../../js/queue/memory-store.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import { startScripted } from '../server/scripted.mjs';
import { T0, next, world } from './virtual.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

const URL0 = 'https://api.example';

/**
 * An outbox on a MemoryStore (not started), quick retries with no jitter:
 * the replay's own tries 1 ms apart (10 ms after a 429 or 503), the queue's
 * replays 5 ms after a failure, then doubling. With `w` (a world), stopped
 * when the test ends.
 */
function make(w, options = {}) {
  const outbox = new Outbox({
    retry: { baseMs: 1, jitter: 'none', maxAttempts: 2 },
    ...options,
    queue: { store: new MemoryStore(), backoff: { baseMs: 5, jitter: 'none' }, pollMs: 10, ...options.queue },
  });
  w?.keep(outbox);
  return outbox;
}

/**
 * The global fetch answered by `script` (scriptedFetch: statuses, resets,
 * hangs on virtual time) for test `t`; each call is in its `calls`.
 */
function scripted(t, script) {
  const real = globalThis.fetch;
  const fetch = scriptedFetch(script);
  globalThis.fetch = fetch;
  t.after(() => {
    globalThis.fetch = real;
  });
  return fetch;
}

/** The outbox's queue events, as { type, id, failureCount, reason, delayMs, error, at }. */
function record(outbox) {
  const events = [];
  for (const type of ['retry', 'error', 'processed']) {
    outbox.queue.addEventListener(type, (e) =>
      events.push({
        type,
        id: e.task.id,
        failureCount: e.task.failureCount,
        reason: e.reason,
        delayMs: e.delayMs,
        error: e.error,
        at: Date.now() - T0,
      }),
    );
  }
  return events;
}

/** Starts `outbox` and resolves, through `w.run`, with its queue's first `type` event. */
const startUntil = (w, outbox, type) => {
  const event = next(outbox.queue, type);
  outbox.start();
  return w.run(event);
};

const post = (path, body, headers = {}, origin = URL0) =>
  new Request(origin + path, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

/** A scripted call as [method, path, body, idempotency key, ms since T0]. */
const sent = (c) => [c.method, new URL(c.url).pathname, c.body, c.headers['idempotency-key'], c.at - T0];

test('add() stores method, URL, headers, body and a key; the replay sends it, the key on every try', async (t) => {
  const w = world(t);
  const fetch = scripted(t, { '/forms': [503, 201] });
  const outbox = make(w);
  const id = await outbox.add(post('/forms', '{"name":"Ada"}', { 'x-form': '1' }));
  assert.match(id, /^[0-9a-f-]{36}$/);
  const rec = await outbox.queue.get(id);
  assert.equal(rec.state, 'pending');
  assert.equal(rec.payload.method, 'POST');
  assert.equal(rec.payload.url, `${URL0}/forms`);
  assert.equal(new TextDecoder().decode(rec.payload.body), '{"name":"Ada"}');
  assert.deepEqual(Object.fromEntries(rec.payload.headers), { 'content-type': 'application/json', 'idempotency-key': id, 'x-form': '1' });
  await startUntil(w, outbox, 'processed');
  assert.deepEqual(
    fetch.calls.map(sent),
    [
      ['POST', '/forms', '{"name":"Ada"}', id, 0],
      ['POST', '/forms', '{"name":"Ada"}', id, 10],
    ],
    "one replay: the 503's retry 10 ms later (throttleBaseMs, 10 × baseMs)",
  );
  assert.ok(fetch.calls.every((c) => c.headers['x-form'] === '1'));
});

test("a request's own Idempotency-Key is its id: adding it twice stores it once", async () => {
  const outbox = make();
  const a = await outbox.add(post('/x', '1', { 'idempotency-key': 'order-7' }));
  const b = await outbox.add(post('/x', '1', { 'idempotency-key': 'order-7' }));
  assert.deepEqual([a, b], ['order-7', 'order-7']);
  assert.equal((await outbox.queue.store.active()).length, 1);
});

test('a body over maxBodyBytes is refused with a RangeError naming the bound, nothing stored', async () => {
  const outbox = make(undefined, { maxBodyBytes: 10 });
  await assert.rejects(outbox.add(post('/x', 'x'.repeat(11))), {
    name: 'RangeError',
    message: /^maxBodyBytes: the request body \((?:at least )?11 bytes\) is over the outbox's bound \(10 bytes\)/,
  });
  assert.equal((await outbox.queue.store.active()).length, 0);
  assert.ok(await outbox.add(post('/x', 'x'.repeat(10))), 'at the bound: stored');
});

test('a 400 ends the task in error at once (PermanentError); a 429 leaves it for the next replay, 5 ms later', async (t) => {
  const w = world(t);
  const fetch = scripted(t, { '/bad': 400, '/busy': [429, 429, 200] });
  const outbox = make(w);
  const events = record(outbox);
  const bad = await outbox.add(post('/bad', '{}'));
  const busy = await outbox.add(post('/busy', '{}'));
  assert.equal((await startUntil(w, outbox, 'processed')).task.id, busy);
  assert.deepEqual(
    fetch.calls.map(sent).map(([, path, , , at]) => [path, at]),
    [
      ['/bad', 0],
      ['/busy', 0],
      ['/busy', 10],
      ['/busy', 15],
    ],
    "a 400 is sent once (a retry would never succeed); the 429's replay tries twice, and the queue replays it 5 ms after",
  );
  assert.deepEqual(
    events.map((e) => [e.type, e.id, e.failureCount, e.reason, e.at]),
    [
      ['error', bad, 1, 'permanent', 0],
      ['retry', busy, 1, undefined, 10],
      ['processed', busy, 1, undefined, 15],
    ],
  );
  assert.equal(events[0].error.name, 'PermanentError');
});

test("the replay's retry policy decides: a 501 ends the task unless retryOn has it; x-should-retry: false ends a 503's", async (t) => {
  const w = world(t);
  const fetch = scripted(t, { '/nope': 501, '/never': { status: 503, headers: { 'x-should-retry': 'false' } }, '/later': 501 });
  const outbox = make(w);
  const ended = [];
  outbox.queue.addEventListener('error', (e) => ended.push(e.task.id));
  const nope = await outbox.add(post('/nope', '{}'));
  const never = await outbox.add(post('/never', '{}'));
  const both = new Promise((resolve) => outbox.queue.addEventListener('error', () => ended.length === 2 && resolve()));
  outbox.start();
  await w.run(both);
  assert.deepEqual(ended.sort(), [nope, never].sort());
  assert.equal(fetch.count, 2, 'each sent once');
  const told = [];
  const keeps = make(w, { retry: { maxAttempts: 2, baseMs: 1, jitter: 'none', retryOn: [501], onDone: (i) => told.push(i.reason) } });
  const later = await keeps.add(post('/later', '{}'));
  const e = await startUntil(w, keeps, 'retry');
  assert.deepEqual([e.task.id, e.delayMs], [later, 5]);
  assert.equal((await keeps.queue.get(later)).state, 'pending', 'left for a later replay');
  assert.deepEqual(
    fetch.calls.filter((c) => c.url.endsWith('/later')).map((c) => c.at - T0),
    [0, 1],
    'tried twice, 1 ms apart',
  );
  assert.deepEqual(told, ['exhausted'], "the caller's onDone is told too");
});

test('later, not never: a delay hook that gives up (a 500), a 429 outside a custom retryOn', async (t) => {
  const w = world(t);
  scripted(t, { '/gave-up': 500, '/busy-429': 429 });
  for (const [path, retry] of [
    ['/gave-up', { maxAttempts: 3, baseMs: 1, delay: () => false }],
    ['/busy-429', { maxAttempts: 2, baseMs: 1, retryOn: [503] }],
  ]) {
    const outbox = make(w, { retry });
    const events = record(outbox);
    const first = new Promise((resolve) => {
      for (const type of ['retry', 'error']) outbox.queue.addEventListener(type, resolve);
    });
    await outbox.add(post(path, '{}'));
    outbox.start();
    await w.run(first);
    await outbox.stop();
    assert.deepEqual(
      events.map((e) => [e.type, e.failureCount]),
      [['retry', 1]],
      `${path}: left for a later replay`,
    );
  }
});

test('fetch(): the answer when there is one; on a real network failure (a reset) the request is stored and the answer is 202', async () => {
  srv.script('/up', { status: 201 });
  const outbox = make();
  assert.equal((await outbox.fetch(post('/up', '{}', {}, srv.url))).status, 201);
  assert.equal((await outbox.queue.store.active()).length, 0);
  srv.script('/reset', [{ reset: true }, { status: 200 }]);
  const res = await outbox.fetch(post('/reset', '{"a":1}', {}, srv.url));
  assert.equal(res.status, 202);
  const id = res.headers.get('outbox-id');
  assert.equal(new TextDecoder().decode((await outbox.queue.get(id)).payload.body), '{"a":1}');
  // A request fetch refuses to send (not a network failure): its error, nothing stored.
  const refused = new Request(`${srv.url}/refused`, { method: 'POST', body: 'x', headers: { connection: 'upgrade' } });
  await assert.rejects(outbox.fetch(refused), TypeError);
  assert.equal((await outbox.queue.store.active()).length, 1);
  assert.equal(srv.count('/refused'), 0);
});

test("a throttled replay's next one waits the server's Retry-After; a wait past the lease ends the replay, not the lease", async (t) => {
  const w = world(t);
  const fetch = scripted(t, {
    '/ra': [{ status: 429, headers: { 'retry-after': '1' } }, 201],
    '/ra-lease': [{ status: 429, headers: { 'retry-after': '2' } }, 201],
  });
  // One try a replay: the 429's Retry-After (1 s) is the queue's next delay, not its own 5 ms.
  const outbox = make(w, { retry: { baseMs: 1, maxAttempts: 1 } });
  const id = await outbox.add(post('/ra', '{}'));
  const retried = next(outbox.queue, 'retry');
  const processed = next(outbox.queue, 'processed');
  outbox.start();
  assert.equal((await w.run(retried)).delayMs, 1000);
  assert.equal((await w.run(processed)).task.id, id);
  assert.deepEqual(
    fetch.calls.map((c) => c.at - T0),
    [0, 1000],
  );
  // A 2 s wait inside a 1 s lease: the replay ends on its deadline (its 429), the queue waits the 2 s.
  const leased = make(w, { retry: { baseMs: 1, maxAttempts: 3 }, queue: { leaseMs: 1000 } });
  await leased.add(post('/ra-lease', '{}'));
  const e = await startUntil(w, leased, 'retry');
  assert.match(String(e.error?.message), /^HTTP 429/, 'the answer, not the lease, ended the replay');
  assert.equal(e.delayMs, 2000);
  assert.equal(fetch.calls.filter((c) => c.url.endsWith('/ra-lease')).length, 1);
});

test('fetch(): a POST is sent with the key it will be replayed under; one with a key of its own or an idempotent method gets none', async (t) => {
  const w = world(t);
  const fetch = scripted(t, { '/once': ['reset', 201], '/keyed': 201, '/put': 201 });
  const outbox = make(w);
  const res = await outbox.fetch(post('/once', '{"order":1}'));
  assert.equal(res.status, 202);
  const id = res.headers.get('outbox-id');
  await startUntil(w, outbox, 'processed');
  assert.deepEqual(
    fetch.calls.map(sent),
    [
      ['POST', '/once', '{"order":1}', id, 0],
      ['POST', '/once', '{"order":1}', id, 0],
    ],
    'the first send and the replay carry one key',
  );
  // The core's rule (policy wantsKey): no key for a request with its own, nor for a method retried by itself.
  await outbox.fetch(post('/keyed', '{}', { 'idempotency-key': 'mine' }));
  await outbox.fetch(new Request(`${URL0}/put`, { method: 'PUT', body: '{}' }));
  assert.deepEqual(
    fetch.calls.slice(2).map((c) => c.headers['idempotency-key']),
    ['mine', undefined],
  );
  await assert.rejects(outbox.fetch(`${URL0}/x`), { name: 'TypeError', message: 'request must be a Request' });
  // An empty Idempotency-Key is none: the task gets a key of its own.
  assert.match(await outbox.add(post('/x', '{}', { 'idempotency-key': '' })), /^[0-9a-f-]{36}$/);
});

test('maxBodyBytes: a streamed body is cancelled once it passes the bound, not read to its end', async () => {
  const outbox = make(undefined, { maxBodyBytes: 1024 });
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
  await assert.rejects(outbox.add(new Request(`${URL0}/big`, { method: 'POST', body, duplex: 'half' })), {
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
 * The global fetch for test `t`: each request is logged in `sent` ({ path,
 * body, key }) and answered by `answer(path, request)` (throw for a
 * failure with no answer).
 */
function answered(t, answer) {
  const real = globalThis.fetch;
  const log = [];
  globalThis.fetch = async (input, init) => {
    const r = new Request(input, init);
    const path = new URL(r.url).pathname;
    log.push({ path, body: await r.text(), key: r.headers.get('idempotency-key') });
    return answer(path, r);
  };
  t.after(() => {
    globalThis.fetch = real;
  });
  return log;
}

const form = (path, body = '{"name":"Ada"}') => new Request(`${URL0}${path}`, { method: 'POST', body });

test('every default: no answer (the network) never spends a failure; HTTP answers do, and a permanent one ends the task', async (t) => {
  const w = world(t);
  let network = false;
  const sent = answered(t, (path) => {
    if (path === '/gone') return new Response(null, { status: 400 });
    if (path === '/busy') return new Response(null, { status: 503 });
    if (!network) throw new TypeError('fetch failed');
    return new Response(null, { status: 201 });
  });
  const outbox = w.keep(new Outbox({ queue: { store: new MemoryStore() } })); // every other option its default
  const events = record(outbox);
  const forms = await outbox.add(form('/forms'));
  const gone = await outbox.add(form('/gone'));
  const busy = await outbox.add(form('/busy'));
  outbox.start();
  await w.tick(10 * 60_000); // ten minutes with no network for /forms
  // The jitter is random (every default): the tenth minute may end in a
  // replay's tries (1 in ~80 runs); that replay ends (in a retry) first.
  if ((await outbox.queue.get(forms)).state === 'processing') await w.run(next(outbox.queue, 'retry', (e) => e.task.id === forms));

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
  await w.tick(20_000);
  assert.deepEqual([(await outbox.queue.get(forms)).state, (await outbox.queue.get(forms)).failureCount], ['processed', 0]);
  assert.deepEqual(sent.slice(from), [{ path: '/forms', body: '{"name":"Ada"}', key: forms }]);
});

test('`online` (retryNow) brings a network wait forward, and one under way; while offline even a replay cut by its deadline is no failure', async (t) => {
  const w = world(t);
  let ok = false;
  /** Fails the replay in flight as the network would (it was sent offline). */
  let fail = () => {};
  const sent = answered(t, (_path, r) => {
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
  const outbox = w.keep(
    new Outbox({
      retry: { maxAttempts: 1 },
      queue: { store: new MemoryStore(), leaseMs: 2000, backoff: { baseMs: 60_000, maxDelayMs: 60_000, jitter: 'none' } },
    }),
  );
  const events = record(outbox);
  const id = await outbox.add(form('/forms'));
  outbox.start();
  await w.tick(5 * 60_000);
  let rec = await outbox.queue.get(id);
  assert.deepEqual([rec.state, rec.failureCount, events.some((e) => e.type === 'error')], ['pending', 0, false], 'offline: no failure');
  assert.match(rec.lastError, /maxElapsedMs \(1900 ms\) passed$/);
  // Each replay is cut at 1 900 ms (its deadline, 100 ms before the lease), and the next is a minute after.
  assert.deepEqual(
    events.map((e) => [e.type, e.at, e.delayMs]),
    [0, 1, 2, 3, 4].map((i) => ['retry', i * 61_900 + 1900, 60_000]),
  );
  assert.equal(rec.networkWaits, 5);

  // The next replay is under way when the browser is back online: the queue's `online`
  // listener calls retryNow, which cannot bring a task in flight forward; the replay,
  // sent offline, fails on the network, and is due again at once, not in a minute.
  await w.tick(rec.nextAttemptAt - Date.now() + 1);
  assert.equal((await outbox.queue.get(id)).state, 'processing');
  globalThis.navigator.onLine = true;
  ok = true;
  const from = sent.length;
  assert.equal(await w.run(outbox.queue.retryNow()), 0);
  fail();
  await w.tick(100);
  rec = await outbox.queue.get(id);
  assert.deepEqual([rec.state, rec.failureCount], ['processed', 0]);
  assert.deepEqual(sent.slice(from), [{ path: '/forms', body: '{"name":"Ada"}', key: id }]);

  // A task waiting for the network (nothing under way) is due at once on retryNow.
  ok = false;
  globalThis.navigator.onLine = false;
  const later = await outbox.add(form('/later'));
  await w.tick(2100);
  assert.deepEqual([(await outbox.queue.get(later)).state, (await outbox.queue.get(later)).networkWaits], ['pending', 1]);
  globalThis.navigator.onLine = true;
  ok = true;
  assert.equal(await w.run(outbox.queue.retryNow()), 1);
  await w.tick(100);
  assert.equal((await outbox.queue.get(later)).state, 'processed');

  // Online, the same hung replay is a failure (the server may have taken it: at least once, under one key).
  ok = false;
  const slow = await outbox.add(form('/slow'));
  await w.tick(2100);
  rec = await outbox.queue.get(slow);
  assert.deepEqual([rec.state, rec.failureCount, rec.networkWaits], ['pending', 1, undefined]);
});
