// wasm-backoff/dedupe in Node. Its invariants, attacked on virtual time (the
// js/ sources, the kit's clock and a fake fetch that logs every request):
//   - concurrent identical GETs send one request (its retries included);
//   - each caller's body is its own: one reading, cancelling or aborting
//     it leaves the others' whole;
//   - a caller's abort never aborts another's response; the shared call is
//     aborted only when every caller has gone;
//   - other methods are never merged; a call after the shared one settled
//     sends again; nothing is left behind (no entry, no listener).
// Then the runtime smokes of dedupe-checks.mjs against the real scripted
// server (Node's fetch), as Chromium runs them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { withBackoff } from '../../js/fetch/index.js';
import { dedupe } from '../../js/dedupe/index.js';
import * as pkg from 'wasm-backoff';
import * as pkgDedupe from 'wasm-backoff/dedupe';
import { install } from '../engine/clock.mjs';
import { startScripted } from '../server/scripted.mjs';
import { control } from '../fetch/fetch-checks.mjs';
import { SMOKES, dedupeSmokes } from './dedupe-checks.mjs';

const A = 'https://a.test';
const FAST = { baseMs: 5, maxDelayMs: 20, jitter: 'none' };

function virtual(t) {
  const clock = install();
  t.after(() => clock.off());
  return clock;
}

/**
 * A fetch answering after `latencyMs` (virtual) with what `answer(n)` gives
 * for its n-th request (a status, or a Response init with `body`), its body
 * a stream of two chunks; `sent` logs each request (method, URL, headers,
 * virtual ms, signal).
 */
function api(clock, { latencyMs = 50, answer = () => 200 } = {}) {
  const sent = [];
  const f = (input, init) => {
    const req = new Request(input, { ...init, signal: null });
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    const n = sent.length;
    sent.push({ method: req.method, url: req.url, headers: Object.fromEntries(req.headers), at: clock.now(), signal });
    return new Promise((resolve, reject) => {
      const onAbort = () => (clearTimeout(t), reject(signal.reason));
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        const a = answer(n);
        const { status = 200, body = `body ${n}`, headers } = typeof a === 'number' ? { status: a } : a;
        const bytes = new TextEncoder().encode(body);
        const stream = new ReadableStream({
          start(c) {
            c.enqueue(bytes.slice(0, 3));
            c.enqueue(bytes.slice(3));
            c.close();
          },
        });
        resolve(new Response(req.method === 'HEAD' ? null : stream, { status, headers }));
      }, latencyMs);
      signal?.addEventListener('abort', onAbort);
    });
  };
  return Object.assign(f, { sent });
}

test('100 concurrent identical GETs: one request; each caller gets its own readable Response', async (t) => {
  const clock = virtual(t);
  const f = api(clock, { answer: () => ({ status: 200, body: 'the answer', headers: { etag: '"v1"' } }) });
  const d = dedupe();
  const get = withBackoff(f, { dedupe: d });
  const calls = Array.from({ length: 100 }, () => get(`${A}/items?page=1`, { headers: { accept: 'application/json' } }));
  assert.equal(d.size, 1, 'one shared call in flight');
  const res = await clock.run(Promise.all(calls));
  assert.equal(f.sent.length, 1, 'one request for the hundred');
  assert.equal(new Set(res).size, 100, 'a Response each');
  assert.ok(res.every((r) => r.status === 200 && r.headers.get('etag') === '"v1"'));
  // One caller cancels its body, another reads half of it: the rest still read all of theirs.
  await res[0].body.cancel();
  const reader = res[1].body.getReader();
  await reader.read();
  const texts = await Promise.all(res.slice(2).map((r) => r.text()));
  assert.ok(texts.every((x) => x === 'the answer'));
  assert.equal(d.size, 0, 'nothing kept once settled');
  assert.equal(clock.timers(), 0);
});

test('the retries are shared too: a 503 then a 200, two requests for all', async (t) => {
  const clock = virtual(t);
  const f = api(clock, { answer: (n) => (n === 0 ? 503 : 200) });
  const get = withBackoff(f, { ...FAST, dedupe: dedupe() });
  const res = await clock.run(Promise.all(Array.from({ length: 10 }, () => get(`${A}/x`))));
  assert.deepEqual(
    f.sent.map((s) => s.at),
    [0, 70],
  );
  assert.ok(res.every((r) => r.status === 200));
});

test("a caller's abort rejects it at once and aborts no one else; the last one gone aborts the shared call", async (t) => {
  const clock = virtual(t);
  const f = api(clock, { latencyMs: 100 });
  const d = dedupe();
  const get = withBackoff(f, { dedupe: d });
  const acs = [0, 1, 2].map(() => new AbortController());
  const calls = acs.map((ac) => get(`${A}/a`, { signal: ac.signal }));
  await clock.tick(10);
  acs[0].abort(new Error('first gone'));
  assert.equal((await calls[0].catch((e) => e)).message, 'first gone');
  assert.equal(f.sent[0].signal.aborted, false, 'the shared call goes on');
  const res = await clock.run(calls[1]);
  assert.equal(await res.text(), 'body 0');
  assert.equal(await (await calls[2]).text(), 'body 0');
  for (const ac of acs) assert.equal(getEventListeners(ac.signal, 'abort').length, 0, 'no listener left');
  // Every caller gone: the shared call is aborted, its key freed, and the next call sends again.
  const bcs = [0, 1].map(() => new AbortController());
  const gone = bcs.map((ac) => get(`${A}/b`, { signal: ac.signal }).catch((e) => e.message));
  await clock.tick(10);
  bcs[0].abort(new Error('x'));
  bcs[1].abort(new Error('y'));
  assert.deepEqual(await Promise.all(gone), ['x', 'y']);
  assert.equal(f.sent[1].signal.aborted, true, 'aborted once every caller had gone');
  assert.equal(d.size, 0);
  const again = await clock.run(get(`${A}/b`));
  assert.equal(await again.text(), 'body 2');
  assert.equal(f.sent.length, 3);
});

test("after the answer, a caller's signal still reaches its own body only (as with fetch)", async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  const get = withBackoff(f, { dedupe: dedupe() });
  const ac = new AbortController();
  const [mine, theirs] = await clock.run(Promise.all([get(`${A}/s`, { signal: ac.signal }), get(`${A}/s`)]));
  assert.equal(mine.status, 200);
  ac.abort(new Error('stop'));
  await assert.rejects(mine.text(), /stop/);
  assert.equal(await theirs.text(), 'body 0');
});

test('other methods are never merged, even with a key that would; GET and HEAD apart; headers that differ apart', async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  const get = withBackoff(f, { dedupe: dedupe({ key: () => 'everything' }) });
  await clock.run(
    Promise.all([
      get(`${A}/p`, { method: 'POST', body: 'a' }),
      get(`${A}/p`, { method: 'POST', body: 'a' }),
      get(`${A}/p`, { method: 'PUT', body: 'a' }),
      get(`${A}/p`, { method: 'DELETE' }),
    ]),
  );
  assert.equal(f.sent.length, 4);
  f.sent.length = 0;
  const plain = withBackoff(f, { dedupe: dedupe() });
  await clock.run(
    Promise.all([
      plain(`${A}/g`),
      plain(`${A}/g`, { method: 'HEAD' }),
      plain(`${A}/g`, { headers: { 'x-user': '1' } }),
      plain(`${A}/g`, { headers: { 'X-User': '1' } }),
      plain(`${A}/g`, { headers: { 'x-user': '2' } }),
      plain(new Request(`${A}/g`)),
      plain(`${A}/g`, { cache: 'no-store' }),
    ]),
  );
  assert.deepEqual(
    f.sent.map((s) => `${s.method} ${s.headers['x-user'] ?? '-'}`),
    ['GET -', 'HEAD -', 'GET 1', 'GET 2', 'GET -'],
    'a Request for the same URL joins the plain GET; a header name in another case is the same header; cache: no-store apart',
  );
});

test('a call made after the shared one settled sends again', async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  const get = withBackoff(f, { dedupe: dedupe() });
  await clock.run(get(`${A}/z`));
  await clock.run(get(`${A}/z`));
  assert.equal(f.sent.length, 2);
});

test('a shared call that rejects rejects every caller with its error', async (t) => {
  const clock = virtual(t);
  const boom = new TypeError('fetch failed');
  let n = 0;
  const f = () => (n++, new Promise((_, reject) => setTimeout(() => reject(boom), 10)));
  const get = withBackoff(f, { ...FAST, maxAttempts: 2, dedupe: dedupe() });
  const errors = await clock.run(Promise.all([get(`${A}/e`).catch((e) => e), get(`${A}/e`).catch((e) => e)]));
  assert.deepEqual(errors, [boom, boom]);
  assert.equal(n, 2, 'one call, two attempts');
});

test('key: merges what it names the same; undefined sends on its own; a bad return or a throw rejects that call', async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  const byPath = withBackoff(f, { dedupe: dedupe({ key: (r) => new URL(r.url).pathname }) });
  await clock.run(Promise.all([byPath(`${A}/k?a=1`), byPath(`${A}/k?a=2`)]));
  assert.equal(f.sent.length, 1);
  const none = withBackoff(f, { dedupe: dedupe({ key: () => undefined }) });
  await clock.run(Promise.all([none(`${A}/k`), none(`${A}/k`)]));
  assert.equal(f.sent.length, 3);
  const bad = withBackoff(f, { dedupe: dedupe({ key: () => 42 }) });
  await assert.rejects(bad(`${A}/k`), { name: 'TypeError', message: 'dedupe: key(request) must return a string or undefined' });
  const boom = new Error('key failed');
  const throws = withBackoff(f, {
    dedupe: dedupe({
      key: () => {
        throw boom;
      },
    }),
  });
  assert.equal(await throws(`${A}/k`).catch((e) => e), boom);
  assert.equal(f.sent.length, 3, 'nothing sent for them');
});

test('bad options: a clear error naming the option', () => {
  assert.throws(() => dedupe({ key: 'url' }), {
    name: 'TypeError',
    message: 'dedupe: key must be a function (request) => string | undefined',
  });
  assert.throws(() => dedupe(3), { name: 'TypeError', message: 'dedupe options must be an object' });
  assert.throws(() => withBackoff(fetch, { dedupe: true }), { message: "dedupe must be made by dedupe() from 'wasm-backoff/dedupe'" });
  assert.ok(Object.isFrozen(dedupe()));
});

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

test('the package exports dedupe; the main entry takes it', () => {
  assert.equal(typeof pkgDedupe.dedupe, 'function');
  assert.equal(typeof pkg.withBackoff(fetch, { dedupe: pkgDedupe.dedupe() }), 'function');
});

for (const name of Object.keys(SMOKES)) {
  test(`smoke (Node's fetch): ${name}`, async () => {
    assert.deepEqual(await dedupeSmokes({ ...pkg, ...pkgDedupe }, control(srv.url), [name]), []);
  });
}
