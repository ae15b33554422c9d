// EventSource's timing and policy on the js/ sources, in virtual time (the
// clock and the scripted fetch of wasm-backoff/testing): the server's
// `retry:` as the jittered base (each wait the calculator's own draw),
// server-named waits, 5xx backoff, 204, maxAttempts and maxElapsedMs, a
// gate hearing the stream's failures, close() and the signal leaving no
// timer, bad options; and the parser on awkward chunks. What differs by
// runtime (real sockets, CORS) is tests/sse/live-checks.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSource } from '../../js/entries/sse.js';
import { Backoff } from '../../js/backoff.js';
import { createGate } from '../../js/gate/index.js';
import { Parser } from '../../js/sse/parse.js';
import { scriptedFetch, virtualClock } from '../../js/entries/testing.js';

const TYPE = { 'content-type': 'text/event-stream' };
const URL_ = 'https://api.test/events';
/** A stream of `text` that then ends cleanly. */
const stream = (text) => ({ status: 200, headers: TYPE, body: text });

/** A clock for test `t`, uninstalled at its end (no timer may be left). */
function clockFor(t) {
  const clock = virtualClock();
  t.after(() => clock.uninstall());
  return clock;
}

/** An EventSource on `fetch`, recording its events (with the virtual time). */
function watch(clock, fetch, options) {
  const es = new EventSource(URL_, { fetch, seed: 7, ...options });
  const seen = [];
  es.onopen = () => seen.push(['open', clock.now()]);
  es.onmessage = (e) => seen.push([e.data, e.lastEventId]);
  es.onerror = (e) => seen.push(['error', es.readyState, e.status, e.delayMs]);
  return { es, seen };
}

test("the server's retry: is the base of jittered waits: each wait the calculator's draw on it", async (t) => {
  const clock = clockFor(t);
  const fetch = scriptedFetch([stream('retry: 10000\nid: 1\ndata: a\n\n'), 'reset', 503, stream('data: b\n\n'), 204]);
  const { es, seen } = watch(clock, fetch);
  await clock.runUntilIdle();
  // The same schedule by hand: the default options (full jitter, 30 s cap) on the server's base.
  const b = new Backoff({ baseMs: 10_000, maxDelayMs: 30_000, seed: 7 });
  const [w1, w2, w3] = [b.next(), b.next(), b.next()];
  const again = new Backoff({ baseMs: 10_000, maxDelayMs: 30_000, seed: 7 }).next(); // (a fresh schedule after a connection opened)
  assert.deepEqual(clock.asked, [w1, w2, w3, again]);
  assert.ok(w1 < 10_000 && w2 < 20_000 && w3 < 30_000);
  assert.deepEqual(
    fetch.calls.map((c) => [c.at, c.headers['last-event-id']]),
    [
      [0, undefined],
      [Math.floor(w1), '1'],
      [Math.floor(w1 + w2), '1'],
      [Math.floor(w1 + w2 + w3), '1'],
      [Math.floor(w1 + w2 + w3 + again), '1'],
    ],
  );
  assert.deepEqual(seen.at(-1), ['error', 2, 204, undefined]);
  assert.equal(es.readyState, 2);
  assert.equal(clock.pending(), 0);
});

test('without retry:, the base is baseMs (3 s by default); the headers are Accept and the last ID', async (t) => {
  const clock = clockFor(t);
  const fetch = scriptedFetch([stream('id: 9\ndata: x\n\n'), 204]);
  watch(clock, fetch);
  await clock.runUntilIdle();
  assert.deepEqual(clock.asked, [new Backoff({ baseMs: 3000, maxDelayMs: 30_000, seed: 7 }).next()]);
  assert.equal(fetch.calls[0].headers.accept, 'text/event-stream');
  assert.equal(fetch.calls[1].headers['last-event-id'], '9');
});

test('429 and 503 naming a wait are waited (Retry-After, retry-after-ms), with a little jitter above', async (t) => {
  const clock = clockFor(t);
  const fetch = scriptedFetch([
    { status: 503, headers: { 'retry-after': '5' } },
    { status: 429, headers: { 'retry-after-ms': '1500' } },
    stream('data: a\n\n'),
    204,
  ]);
  const { seen } = watch(clock, fetch, { baseMs: 10 });
  await clock.runUntilIdle();
  const [a, b] = clock.asked;
  assert.ok(a >= 5000 && a < 5500, `${a}`);
  assert.ok(b >= 1500 && b < 1650, `${b}`);
  assert.deepEqual(
    seen.slice(0, 3).map((s) => s.slice(0, 3)),
    [
      ['error', 0, 503],
      ['error', 0, 429],
      ['open', a + b],
    ],
  );
});

test('a wait over maxRetryAfterMs, or a 404, ends the stream at once with the status', async (t) => {
  const clock = clockFor(t);
  const long = watch(clock, scriptedFetch([{ status: 503, headers: { 'retry-after': '120' } }]));
  const missing = watch(clock, scriptedFetch([404]));
  await clock.runUntilIdle();
  assert.deepEqual(long.seen, [['error', 2, 503, undefined]]);
  assert.deepEqual(missing.seen, [['error', 2, 404, undefined]]);
  assert.equal(clock.now(), 0);
});

test('maxAttempts counts the lost connection and the failed tries after it; then the stream is closed', async (t) => {
  const clock = clockFor(t);
  const fetch = scriptedFetch([stream('data: a\n\n'), 'reset', 502, 200]);
  const { es, seen } = watch(clock, fetch, { maxAttempts: 3 });
  await clock.runUntilIdle();
  assert.equal(fetch.count, 3, 'the first connection, then two tries');
  assert.equal(es.readyState, 2);
  assert.deepEqual(seen.at(-1), ['error', 2, 502, undefined], 'closed on the last answer');
  assert.equal(clock.asked.length, 2);
});

test('maxElapsedMs bounds one reconnect: a hung attempt is aborted at it', async (t) => {
  const clock = clockFor(t);
  const fetch = scriptedFetch([503, { hang: true }]);
  const { es } = watch(clock, fetch, { maxElapsedMs: 10_000, baseMs: 100 });
  await clock.tick(9_999);
  assert.equal(es.readyState, 0);
  await clock.tick(1);
  await clock.runUntilIdle();
  assert.equal(es.readyState, 2);
  assert.equal(clock.pending(), 0);
});

test('a gate shared with the page hears the stream’s failures (its circuit opens)', async (t) => {
  const clock = clockFor(t);
  const gate = createGate({ consecutive: 2, baseMs: 1000, maxQueued: Infinity });
  t.after(() => gate.free());
  const fetch = scriptedFetch([503, 503, 503, stream('data: a\n\n'), 204]);
  const { es } = watch(clock, fetch, { gate, baseMs: 10 });
  await clock.tick(1);
  assert.equal(gate.state('https://api.test').state, 'open', 'two failed connects opened the circuit');
  es.close();
  await clock.runUntilIdle();
  assert.equal(clock.pending(), 0);
});

test('close() and the signal end it during a wait, an attempt or a stream: no timer, no request after', async (t) => {
  const clock = clockFor(t);
  const waiting = watch(clock, scriptedFetch([503]), { baseMs: 5000 });
  const hung = watch(clock, scriptedFetch([{ hang: true }]));
  const ac = new AbortController();
  const reading = watch(clock, scriptedFetch([{ status: 200, headers: TYPE, body: 'data: a\n\n', stallAfter: 9 }]), { signal: ac.signal });
  await clock.tick(10);
  waiting.es.close();
  hung.es.close();
  ac.abort();
  await clock.runUntilIdle();
  assert.equal(clock.pending(), 0);
  for (const w of [waiting, hung, reading]) assert.equal(w.es.readyState, 2);
  assert.deepEqual(reading.seen, [
    ['open', 0],
    ['a', ''],
  ]);
  assert.equal(new EventSource(URL_, { signal: AbortSignal.abort(), fetch: () => assert.fail('sent') }).readyState, 2);
});

test('bad options throw TypeError or RangeError naming the option; a bad URL a SyntaxError', () => {
  const cases = [
    [{ baseMs: -1 }, RangeError, /baseMs/],
    [{ maxDelayMs: 'x' }, TypeError, /maxDelayMs/],
    [{ jitter: 'lots' }, RangeError, /jitter/],
    [{ preset: 'nope' }, RangeError, /preset/],
    [{ maxAttempts: 0 }, RangeError, /maxAttempts/],
    [{ maxElapsedMs: -5 }, RangeError, /maxElapsedMs/],
    [{ maxRetryAfterMs: '1' }, TypeError, /maxRetryAfterMs/],
    [{ retryOn: [42] }, RangeError, /retryOn/],
    [{ method: 'GET POST' }, TypeError, /method/],
    [{ headers: { 'bad header': 'x' } }, TypeError, /headers/],
    [{ body: new ReadableStream() }, TypeError, /body/],
    [{ fetch: 'fetch' }, TypeError, /fetch/],
    [{ signal: {} }, TypeError, /signal/],
    [{ gate: {} }, TypeError, /gate/],
    [{ withCredentials: 1 }, TypeError, /withCredentials/],
    [{ shared: 'yes' }, TypeError, /shared/],
  ];
  for (const [o, type, msg] of cases)
    assert.throws(
      () => new EventSource(URL_, o),
      (e) => e instanceof type && msg.test(e.message),
      JSON.stringify(o),
    );
  assert.throws(() => new EventSource(URL_, 5), { name: 'TypeError', message: /options/ });
  assert.throws(() => new EventSource('http://[', {}), { name: 'SyntaxError' });
});

test('the parser: CR, LF and CRLF across chunks, comments, a BOM, ids with NUL, retry digits only, the unfinished event dropped', () => {
  const out = [];
  const p = new Parser({ event: (...a) => out.push(a), id: (id) => out.push(['id', id]), retry: (ms) => out.push(['retry', ms]) });
  const bytes = new TextEncoder().encode('\uFEFFdata: a\r');
  p.feed(bytes);
  p.text('\ndata:b\r\r: comment\nevent: tick\ndata\ndata:  two\n\nid: 5\x00\nid: 6\nretry: 12x\nretry: 250\n\n');
  p.text('id\ndata: c\n\nevent: lost\ndata: gone');
  assert.deepEqual(out, [
    ['message', 'a\nb', ''],
    ['tick', '\n two', ''],
    ['retry', 250],
    ['id', '6'],
    ['message', 'c', ''],
  ]);
});
