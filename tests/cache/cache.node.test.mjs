// The `fallback` option (the main entry) and wasm-backoff/cache's
// staleIfError in Node. Their invariants, attacked on virtual time (the js/
// sources, the kit's clock and scriptedFetch):
//   - a fallback never changes a successful outcome, nor an answer that is
//     not a failure (a 404): it is called only for a rejection (but the
//     caller's abort, and an error that is no network failure), or a final
//     answer of retryOn;
//   - what it throws is what the call rejects with; the caller's abort
//     still ends the call while it runs; onDone is told the real end;
//   - staleIfError serves the last good copy of a GET only within
//     maxStaleMs, marked with its Age; stores only what may be stored
//     (bounded: entries and body bytes), never an answer of one user's
//     credentials by default, never a Set-Cookie.
// Then the runtime smokes of cache-checks.mjs against the real scripted
// server (Node's fetch: the memory store), as Chromium runs them (the
// Cache API).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff, fetchWithBackoff } from '../../js/fetch/index.js';
import { staleIfError } from '../../js/cache/index.js';
import { quota } from '../../js/quota/index.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import * as pkg from 'wasm-backoff';
import * as pkgCache from 'wasm-backoff/cache';
import { install } from '../engine/clock.mjs';
import { startScripted } from '../server/scripted.mjs';
import { control } from '../fetch/fetch-checks.mjs';
import { SMOKES, cacheSmokes } from './cache-checks.mjs';

const A = 'https://a.test';
const FAST = { baseMs: 5, maxDelayMs: 20, jitter: 'none', maxAttempts: 2 };

function virtual(t) {
  const clock = install();
  t.after(() => clock.off());
  return clock;
}

/** A fallback that records what it was told and answers 'fallback'. */
function recording() {
  const told = [];
  const fb = (info) => {
    told.push(info);
    return new Response('fallback', { status: 200, headers: { 'x-fallback': '1' } });
  };
  return Object.assign(fb, { told });
}

// ---- the fallback option

test('a fallback is never called for a success, a 304 or a 404: the server answered', async (t) => {
  const clock = virtual(t);
  for (const status of [200, 204, 304, 400, 401, 404, 409, 422]) {
    const fb = recording();
    const res = await clock.run(withBackoff(scriptedFetch([status]), { ...FAST, fallback: fb })(`${A}/x`));
    assert.equal(res.status, status);
    assert.equal(fb.told.length, 0, `${status}`);
  }
});

test('a final answer of retryOn: the fallback gets onDone’s info and the answer; the caller its Response; the answer’s body let go', async (t) => {
  const clock = virtual(t);
  const fb = recording();
  let done;
  const f = scriptedFetch([503, { status: 503, body: 'still down' }]);
  const res = await clock.run(withBackoff(f, { ...FAST, fallback: fb, onDone: (d) => (done = d) })(`${A}/x`));
  assert.equal(await res.text(), 'fallback');
  assert.equal(fb.told.length, 1);
  const [info] = fb.told;
  assert.deepEqual({ ...info, response: undefined }, { ...done, response: undefined }, 'the same info as onDone');
  assert.deepEqual([done.reason, done.status, done.attempts], ['exhausted', 503, 2], 'onDone is told the real end');
  assert.equal(info.response.status, 503);
  assert.equal(info.response.bodyUsed || info.response.body.locked, true, 'its body let go (cancelled)');
});

test('returning info.response, or throwing info.error, keeps the call’s own end', async (t) => {
  const clock = virtual(t);
  const keep = withBackoff(scriptedFetch([{ status: 503, body: 'own' }]), { ...FAST, fallback: (i) => i.response });
  const res = await clock.run(keep(`${A}/x`));
  assert.equal(await res.text(), 'own', 'its body whole');
  const rethrow = withBackoff(scriptedFetch(['reset']), {
    ...FAST,
    fallback: (i) => {
      throw i.error;
    },
  });
  assert.match(String(await clock.run(rethrow(`${A}/x`).catch((e) => e))), /TypeError/);
});

test('a rejection (network failure after the last attempt, the deadline): the fallback answers', async (t) => {
  const clock = virtual(t);
  const fb = recording();
  const res = await clock.run(withBackoff(scriptedFetch(['reset']), { ...FAST, fallback: fb })(`${A}/x`));
  assert.equal(res.headers.get('x-fallback'), '1');
  assert.equal(fb.told[0].reason, 'exhausted');
  assert.equal(fb.told[0].error.name, 'TypeError');
  assert.equal(fb.told[0].response, undefined);
  const from = clock.now();
  const hung = await clock.run(withBackoff(scriptedFetch([{ hang: true }]), { maxElapsedMs: 1000, fallback: fb })(`${A}/x`));
  assert.equal(await hung.text(), 'fallback');
  assert.deepEqual([fb.told[1].reason, fb.told[1].error.name, clock.now() - from], ['deadline', 'TimeoutError', 1000]);
});

test("the caller's abort is no failure: no fallback, the signal's reason; an abort while the fallback runs ends the call at once", async (t) => {
  const clock = virtual(t);
  const fb = recording();
  const ac = new AbortController();
  const p = withBackoff(scriptedFetch([{ hang: true }]), { fallback: fb })(`${A}/x`, { signal: ac.signal });
  await clock.tick(10);
  ac.abort(new Error('left'));
  assert.equal((await p.catch((e) => e)).message, 'left');
  assert.equal(fb.told.length, 0);
  const slow = () => new Promise(() => {});
  const ac2 = new AbortController();
  const p2 = withBackoff(scriptedFetch([503]), { ...FAST, fallback: slow })(`${A}/x`, { signal: ac2.signal });
  await clock.tick(100);
  ac2.abort(new Error('gone while the fallback ran'));
  assert.equal((await p2.catch((e) => e)).message, 'gone while the fallback ran');
});

test("an error that is no network failure is the caller's: a request fetch cannot build, a custom fetch's own error", async (t) => {
  const clock = virtual(t);
  const fb = recording();
  const bad = await clock.run(withBackoff(fetch, { fallback: fb })('http://[bad').catch((e) => e));
  assert.equal(bad.name, 'TypeError');
  const own = new RangeError('my fetch refused');
  const custom = () => Promise.reject(own);
  assert.equal(await clock.run(withBackoff(custom, { fallback: fb })(`${A}/x`).catch((e) => e)), own);
  const timedOut = withBackoff(scriptedFetch([{ hang: true }]), { timeoutMs: 100, retryOnTimeout: false, fallback: fb });
  assert.equal((await clock.run(timedOut(`${A}/x`).catch((e) => e))).name, 'TimeoutError');
  assert.equal(fb.told.length, 0);
});

test('a fallback that throws (or rejects) rejects the call with its error; onDone was told the real end', async (t) => {
  const clock = virtual(t);
  const boom = new Error('no default either');
  let done;
  for (const fallback of [
    () => {
      throw boom;
    },
    async () => {
      throw boom;
    },
  ]) {
    const e = await clock.run(
      withBackoff(scriptedFetch([503]), { ...FAST, fallback, onDone: (d) => (done = d) })(`${A}/x`).catch((x) => x),
    );
    assert.equal(e, boom);
    assert.deepEqual([done.reason, done.status], ['exhausted', 503]);
  }
});

test("a quota's refusal is a failure too: the fallback answers (nothing sent)", async (t) => {
  const clock = virtual(t);
  const f = scriptedFetch([200]);
  const q = quota({ rpm: 1 });
  const api = withBackoff(f, { limit: q, maxElapsedMs: 5000, fallback: () => new Response('later') });
  await clock.run(api(`${A}/q`));
  assert.equal(await (await clock.run(api(`${A}/q`))).text(), 'later');
  assert.equal(f.count, 1);
});

test('bad option: fallback must be a function', () => {
  assert.throws(() => withBackoff(fetch, { fallback: new Response('x') }), { name: 'TypeError', message: 'fallback must be a function' });
  return assert.rejects(fetchWithBackoff(`${A}/x`, undefined, { fallback: 'x' }), { message: 'fallback must be a function' });
});

// ---- staleIfError

test('the last good copy of a GET is served when a later call fails for good, with its Age, within maxStaleMs', async (t) => {
  const clock = virtual(t);
  const f = scriptedFetch({
    '/items': [{ status: 200, body: 'v1', headers: { etag: '"1"', age: '3' } }, { status: 200, body: 'v2' }, 503],
  });
  const stale = staleIfError({ maxStaleMs: 60_000 });
  assert.equal(stale.store, 'memory', 'Node has no Cache API');
  let done;
  const api = withBackoff(f, { ...FAST, fallback: stale, onDone: (d) => (done = d) });
  assert.equal(await (await clock.run(api(`${A}/items`))).text(), 'v1');
  await clock.tick(1000);
  assert.equal(await (await clock.run(api(`${A}/items`))).text(), 'v2', 'a success is the server’s answer, never the copy');
  await clock.tick(20_000);
  const res = await clock.run(api(`${A}/items`));
  assert.equal(await res.text(), 'v2', 'the last good copy');
  assert.equal(res.headers.get('age'), '20', 'stored 20 s ago (and its own Age: none)');
  assert.deepEqual([done.reason, done.status], ['exhausted', 503], 'onDone is told the real end');
  // Past maxStaleMs: the call's own end (its last answer).
  await clock.tick(40_000);
  const late = await clock.run(api(`${A}/items`));
  assert.equal(late.status, 503);
  assert.equal(clock.timers(), 0);
});

test("a copy's own Age is added; another URL's failure gets nothing; a network failure is served too", async (t) => {
  const clock = virtual(t);
  const f = scriptedFetch({ '/a': [{ status: 200, body: 'a', headers: { age: '100' } }, 'reset'], '/b': ['reset'] });
  const api = withBackoff(f, { ...FAST, fallback: staleIfError() });
  await clock.run(api(`${A}/a`));
  await clock.tick(5000);
  const res = await clock.run(api(`${A}/a`));
  assert.deepEqual([await res.text(), res.headers.get('age')], ['a', '105']);
  assert.equal((await clock.run(api(`${A}/b`).catch((e) => e))).name, 'TypeError');
});

test('stores only what may be stored: no-store, Vary: *, an event stream, a body over maxBodyBytes, a POST, a credentialed request', async (t) => {
  const clock = virtual(t);
  const cases = [
    [{ status: 200, body: 'x', headers: { 'cache-control': 'private, no-store' } }, {}],
    [{ status: 200, body: 'x', headers: { vary: '*' } }, {}],
    [{ status: 200, body: 'data: x\n\n', headers: { 'content-type': 'text/event-stream' } }, {}],
    [{ status: 200, size: 2000 }, {}],
    [
      { status: 200, body: 'x' },
      { method: 'POST', body: 'q' },
    ],
    [{ status: 200, body: 'x' }, { headers: { authorization: 'Bearer alice' } }],
    [{ status: 200, body: 'x' }, { headers: { cookie: 'sid=alice' } }],
    [{ status: 404, body: 'x' }, {}],
  ];
  for (const [answer, init] of cases) {
    const f = scriptedFetch([answer, 503]);
    const api = withBackoff(f, { ...FAST, maxAttempts: 1, retryNonIdempotent: true, fallback: staleIfError({ maxBodyBytes: 1000 }) });
    const first = await clock.run(api(`${A}/s`, init));
    await first.arrayBuffer();
    await clock.tick(10);
    const res = await clock.run(api(`${A}/s`, init));
    assert.equal(res.status, 503, JSON.stringify([answer, init]));
  }
});

test("the caller's bytes are the server's while a copy is kept; a body past maxBodyBytes without a length is not kept", async (t) => {
  const clock = virtual(t);
  const big = scriptedFetch([{ status: 200, size: 5000 }, 503]);
  const api = withBackoff(big, { ...FAST, maxAttempts: 1, fallback: staleIfError({ maxBodyBytes: 4096 }) });
  const res = await clock.run(api(`${A}/big`));
  const bytes = new Uint8Array(await res.arrayBuffer());
  assert.equal(bytes.length, 5000);
  assert.ok(bytes.every((b, i) => b === (i * 7) % 251));
  assert.equal((await clock.run(api(`${A}/big`))).status, 503);
  // (scriptedFetch's `size` sends a Content-Length: a stream with none is read up to the bound, then let go)
  const chunked = () =>
    Promise.resolve(
      new Response(
        new ReadableStream({
          pull(c) {
            c.enqueue(new Uint8Array(1024));
          },
        }),
      ),
    );
  let n = 0;
  const f = () => (n++ === 0 ? chunked() : Promise.resolve(new Response(null, { status: 503 })));
  const api2 = withBackoff(f, { ...FAST, maxAttempts: 1, fallback: staleIfError({ maxBodyBytes: 4096 }) });
  const endless = await clock.run(api2(`${A}/endless`));
  const reader = endless.body.getReader();
  await reader.read();
  await reader.cancel();
  await clock.tick(10);
  assert.equal((await clock.run(api2(`${A}/endless`))).status, 503, 'not kept');
});

test('bounded: past max copies the least recently stored goes; Set-Cookie is never kept; clear() forgets all', async (t) => {
  const clock = virtual(t);
  const ok = (body) => ({ status: 200, body, headers: { 'set-cookie': 'sid=1', 'x-v': body } });
  const f = scriptedFetch({ '/1': [ok('1'), 503], '/2': [ok('2'), 503], '/3': [ok('3'), 503], '/4': [ok('4'), 503] });
  const stale = staleIfError({ max: 2 });
  const api = withBackoff(f, { ...FAST, maxAttempts: 1, fallback: stale });
  for (const p of ['/1', '/2', '/3']) await (await clock.run(api(A + p))).text();
  await clock.tick(10);
  const got = [];
  for (const p of ['/1', '/2', '/3']) {
    const r = await clock.run(api(A + p));
    got.push(r.status === 200 ? `${await r.text()}:${r.headers.get('set-cookie')}` : r.status);
  }
  assert.deepEqual(got, [503, '2:null', '3:null']);
  await (await clock.run(api(`${A}/4`))).text();
  await stale.clear();
  assert.equal((await clock.run(api(`${A}/4`))).status, 503);
});

test('a key that names the user keeps credentialed answers apart', async (t) => {
  const clock = virtual(t);
  const f = scriptedFetch((call) => (call.headers.authorization === 'Bearer bob' ? 503 : { status: 200, body: 'alice data' }));
  const stale = staleIfError({ key: (r) => `${r.headers.get('authorization')} ${r.url}` });
  const api = withBackoff(f, { ...FAST, maxAttempts: 1, fallback: stale });
  await (await clock.run(api(`${A}/me`, { headers: { authorization: 'Bearer alice' } }))).text();
  assert.equal((await clock.run(api(`${A}/me`, { headers: { authorization: 'Bearer bob' } }))).status, 503, "bob never gets alice's copy");
});

test('bad options: a clear error naming the option', () => {
  const cases = [
    [{ maxStaleMs: -1 }, RangeError, 'staleIfError: maxStaleMs must be a number of ms >= 0'],
    [{ maxStaleMs: '1' }, TypeError, 'staleIfError: maxStaleMs must be a number of ms >= 0'],
    [{ max: 0 }, RangeError, 'staleIfError: max must be an integer in [1, 100000]'],
    [{ maxBodyBytes: 1.5 }, RangeError, 'staleIfError: maxBodyBytes must be an integer >= 0'],
    [{ store: 'disk' }, RangeError, "staleIfError: store must be 'auto', 'cache' or 'memory'"],
    [{ store: 'cache' }, RangeError, "staleIfError: store 'cache' needs the Cache API, which this runtime lacks"],
    [{ cacheName: '' }, TypeError, 'staleIfError: cacheName must be a non-empty string'],
    [{ key: 'url' }, TypeError, 'staleIfError: key must be a function (request) => string | undefined'],
    [7, TypeError, 'staleIfError options must be an object'],
  ];
  for (const [o, E, message] of cases) assert.throws(() => staleIfError(o), { name: E.name, message });
  const s = staleIfError();
  assert.deepEqual([s.maxStaleMs, s.max, s.maxBodyBytes, s.store], [86_400_000, 100, 1_048_576, 'memory']);
  assert.ok(Object.isFrozen(s));
});

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

test('the package exports staleIfError; the main entry takes it as its fallback', () => {
  assert.equal(typeof pkgCache.staleIfError, 'function');
  assert.equal(typeof pkg.withBackoff(fetch, { fallback: pkgCache.staleIfError() }), 'function');
});

for (const name of Object.keys(SMOKES)) {
  test(`smoke (Node's fetch): ${name}`, async () => {
    assert.deepEqual(await cacheSmokes({ ...pkg, ...pkgCache }, control(srv.url), [name]), []);
  });
}
