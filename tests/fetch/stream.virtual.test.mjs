// `wasm-backoff/stream` on the js/ sources in virtual time
// (tests/fetch/virtual.mjs): the idle and first-chunk timeouts to the
// millisecond, a consumer that pauses, resume's Range/If-Range and its
// refusals (a changed validator, a hostile Content-Range, a weak ETag, the
// attempts it spends), body functions, the replay buffer of a streamed
// upload, option checks; and no timer outliving a body that ends, is
// cancelled, errors or is dropped unread. The scripted fetch stands in for
// the scripted server, Range included (`ranged`). Real bodies in every
// runtime (a stall, a cut resumed, streamed uploads, a Request's body):
// stream-checks.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as main from '../../js/entries/main.js';
import { fetchWithBackoff } from '../../js/entries/stream.js';
import { drain, pattern, same } from './stream-checks.mjs';
import { T0, world } from './virtual.mjs';

const EXACT = { baseMs: 100, jitter: 'none' };
const SIZE = 200_000;

/**
 * A script answering Range as the scripted server does (`range: true`):
 * `Range: bytes=N-` with an If-Range equal to the validator (or none) gets
 * a 206 from N, anything else the whole body, each with the Date of the
 * (virtual) time it is sent; `steps[n]` (the last repeating) names the
 * validator headers, where the body is cut, and headers that override (a
 * hostile Content-Range).
 * @param {number} size
 * @param {{ headers?: Record<string, string>, cutAfter?: number }[]} steps
 */
function ranged(size, steps) {
  return (call, n) => {
    const s = steps[Math.min(n, steps.length - 1)];
    const tag = s.headers?.etag ?? s.headers?.['last-modified'];
    const m = /^bytes=(\d+)-$/.exec(call.headers.range ?? '');
    const ifRange = call.headers['if-range'];
    const partial = m && (ifRange === undefined || ifRange === tag) && +m[1] < size;
    const from = partial ? +m[1] : 0;
    // (a Date, as a real server sends: a Last-Modified is a strong validator only a second or more before it)
    const headers = { date: new Date().toUTCString(), 'accept-ranges': 'bytes', 'content-length': String(size - from) };
    if (partial) headers['content-range'] = `bytes ${from}-${size - 1}/${size}`;
    const out = { status: partial ? 206 : 200, headers: { ...headers, ...s.headers }, body: pattern(from, size) };
    if (s.cutAfter !== undefined) out.cutAfter = s.cutAfter;
    return out;
  };
}

/** A body of `chunks` chunks of `size` bytes each, made as they are read. */
const chunked = (chunks, size) => {
  let n = 0;
  return new ReadableStream({
    pull(c) {
      if (n++ === chunks) return c.close();
      c.enqueue(new Uint8Array(size).fill(n));
    },
  });
};

test('idleTimeoutMs: a body silent after its headers errors with a TimeoutError after exactly idleTimeoutMs', async (t) => {
  const w = world(t, { '/stall': { size: SIZE, stallAfter: 1000 } });
  const res = await w.run(fetchWithBackoff(w.url('/stall'), undefined, { idleTimeoutMs: 150 }));
  assert.equal(res.status, 200);
  const { error, n } = await w.run(drain(res));
  assert.equal(error?.name, 'TimeoutError');
  assert.match(error.message, /idleTimeoutMs/);
  assert.equal(n, 1000);
  assert.equal(w.at(), 150);
});

test('idleTimeoutMs: a steady body is whole; a consumer that pauses longer than it is not a stall', async (t) => {
  const w = world(t, { '/steady': { body: chunked(10, 1000) } });
  const res = await w.run(fetchWithBackoff(w.url('/steady'), undefined, { idleTimeoutMs: 400 }));
  const reader = res.body.getReader();
  const first = await w.run(reader.read());
  await w.tick(600); // (longer than the idle timeout, reading nothing)
  const parts = [first.value];
  for (let r = await w.run(reader.read()); !r.done; r = await w.run(reader.read())) parts.push(r.value);
  assert.equal(
    parts.reduce((s, v) => s + v.byteLength, 0),
    10_000,
  );
  assert.equal(w.at(), 600);
});

test('firstChunkTimeoutMs: a stall before the first chunk is a failed attempt at exactly the timeout, retried; the answer replays it', async (t) => {
  const w = world(t, {
    '/first': [
      { size: SIZE, stallAfter: 0 },
      { size: SIZE, headers: { 'x-second': 'yes' } },
    ],
  });
  const infos = [];
  const res = await w.run(
    fetchWithBackoff(w.url('/first'), undefined, { ...EXACT, firstChunkTimeoutMs: 1000, onRetry: (i) => infos.push(i) }),
  );
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('x-second'), 'yes');
  assert.equal(res.url, w.url('/first'));
  assert.deepEqual(
    infos.map((i) => [i.error?.name, i.delayMs]),
    [['TimeoutError', 100]],
  );
  assert.deepEqual(w.times('/first'), [0, 1100]);
  const { bytes } = await w.run(drain(res));
  assert.ok(bytes && same(bytes, pattern(0, SIZE)), 'the body is whole, its first chunk replayed');
});

test('firstChunkTimeoutMs: an answer read ahead that shouldRetry retries is let go', async (t) => {
  const w = world(t, {
    '/first-retried': [
      { size: 1000, headers: { 'x-n': '1' } },
      { size: 1000, headers: { 'x-n': '2' } },
    ],
  });
  const res = await w.run(
    fetchWithBackoff(w.url('/first-retried'), undefined, {
      ...EXACT,
      firstChunkTimeoutMs: 1000,
      shouldRetry: ({ attempt }) => attempt === 1 || undefined,
    }),
  );
  assert.equal(res.headers.get('x-n'), '2');
  assert.deepEqual(w.times('/first-retried'), [0, 100]);
  const { bytes } = await w.run(drain(res));
  assert.ok(bytes && same(bytes, pattern(0, 1000)), 'the second body, whole');
});

test('resume: a cut body is resumed with Range and If-Range (ETag) from exactly where it broke, byte-identical', async (t) => {
  const headers = { etag: '"v1"' };
  const w = world(t, { '/resume': ranged(SIZE, [{ headers, cutAfter: 50_000 }, { headers, cutAfter: 60_000 }, { headers }]) });
  const res = await w.run(fetchWithBackoff(w.url('/resume'), undefined, { ...EXACT, resume: true }));
  const { bytes, error } = await w.run(drain(res));
  assert.ok(!error && same(bytes, pattern(0, SIZE)), `body ${error ?? bytes.byteLength}`);
  assert.deepEqual(
    w.sent('/resume').map((r) => [r.headers.range, r.headers['if-range'], r.at]),
    [
      [undefined, undefined, w.sent('/resume')[0].at],
      ['bytes=50000-', '"v1"', w.sent('/resume')[0].at + 100],
      ['bytes=110000-', '"v1"', w.sent('/resume')[0].at + 300],
    ],
    'a resume waits as a retry (a cut is a network failure: baseMs)',
  );
});

test('resume: with Last-Modified alone, If-Range is the date', async (t) => {
  const headers = { 'last-modified': 'Sun, 01 Nov 2026 10:00:00 GMT' };
  const w = world(t, { '/resume-lm': ranged(SIZE, [{ headers, cutAfter: 70_000 }, { headers }]) });
  const { bytes, error } = await w.run(drain(await w.run(fetchWithBackoff(w.url('/resume-lm'), undefined, { ...EXACT, resume: true }))));
  assert.ok(!error && same(bytes, pattern(0, SIZE)), `body ${error}`);
  assert.deepEqual(
    w.sent('/resume-lm').map((r) => [r.headers.range, r.headers['if-range']]),
    [
      [undefined, undefined],
      ['bytes=70000-', headers['last-modified']],
    ],
  );
});

test('resume: a changed validator (200) errors the body, never splices', async (t) => {
  const w = world(t, { '/changed': ranged(SIZE, [{ headers: { etag: '"v1"' }, cutAfter: 50_000 }, { headers: { etag: '"v2"' } }]) });
  const { error, n } = await w.run(drain(await w.run(fetchWithBackoff(w.url('/changed'), undefined, { ...EXACT, resume: true }))));
  assert.equal(error?.name, 'ResumeError');
  assert.match(error.message, /200, not 206/);
  assert.equal(n, 50_000);
  assert.equal(w.count('/changed'), 2);
});

test('resume: a hostile Content-Range errors the body', async (t) => {
  const headers = { etag: '"v1"' };
  const w = world(t, {
    '/hostile': ranged(SIZE, [{ headers, cutAfter: 50_000 }, { headers: { ...headers, 'content-range': `bytes 1-${SIZE - 1}/${SIZE}` } }]),
  });
  const { error, n } = await w.run(drain(await w.run(fetchWithBackoff(w.url('/hostile'), undefined, { ...EXACT, resume: true }))));
  assert.equal(error?.name, 'ResumeError');
  assert.match(error.message, /Content-Range/);
  assert.equal(n, 50_000);
});

test('resume: a weak ETag, a Last-Modified within the second of the Date, or no resume option, lets the failure through', async (t) => {
  const w = world(t, {
    '/weak': ranged(SIZE, [{ headers: { etag: 'W/"v1"' }, cutAfter: 50_000 }, {}]),
    '/weak-date': ranged(SIZE, [{ headers: { 'last-modified': new Date(T0).toUTCString() }, cutAfter: 50_000 }, {}]),
    '/off': ranged(SIZE, [{ headers: { etag: '"v1"' }, cutAfter: 50_000 }, {}]),
  });
  for (const p of ['/weak', '/weak-date']) {
    const weak = await w.run(drain(await w.run(fetchWithBackoff(w.url(p), undefined, { ...EXACT, resume: true }))));
    assert.ok(weak.error && weak.error.name !== 'ResumeError', `${p}: ${weak.error}`);
    assert.equal(w.count(p), 1, p);
  }
  const off = await w.run(drain(await w.run(fetchWithBackoff(w.url('/off'), undefined, EXACT))));
  assert.ok(off.error, 'off: the cut');
  assert.equal(w.count('/off'), 1);
});

test('resume: the attempts count against maxAttempts', async (t) => {
  const w = world(t, { '/spent': ranged(SIZE, [{ headers: { etag: '"v1"' }, cutAfter: 20_000 }]) });
  const { error, n } = await w.run(
    drain(await w.run(fetchWithBackoff(w.url('/spent'), undefined, { ...EXACT, resume: true, maxAttempts: 3 }))),
  );
  assert.equal(error?.name, 'ResumeError');
  assert.match(error.message, /exhausted/);
  assert.equal(n, 60_000, 'three cuts of 20 000 bytes, spliced');
  assert.deepEqual(
    w.sent('/spent').map((r) => r.headers.range),
    [undefined, 'bytes=20000-', 'bytes=40000-'],
  );
});

// ---- moved from stream-integrity.node.test.mjs (issue 34): a resume is an attempt of the call ----

test('a resume is an attempt of the call: onRetry is told its wait, onDone once', async (t) => {
  const headers = { etag: '"v1"' };
  const w = world(t, { '/told': ranged(SIZE, [{ headers, cutAfter: 30_000 }, { headers }]) });
  const retries = [];
  const dones = [];
  const opts = { baseMs: 7, jitter: 'none', resume: true, onRetry: (i) => retries.push(i), onDone: (d) => dones.push(d) };
  const { bytes, error } = await w.run(drain(await w.run(fetchWithBackoff(w.url('/told'), undefined, opts))));
  assert.equal(error, undefined);
  assert.ok(same(bytes, pattern(0, SIZE)));
  assert.deepEqual(
    retries.map((i) => [i.attempt, i.delayMs, i.error instanceof Error]),
    [[1, 7, true]],
    'the break is told, with the schedule’s first wait',
  );
  assert.equal(dones.length, 1, 'onDone once, when the call answered');
  assert.deepEqual(w.times('/told'), [0, 7]);
});

test('the call’s maxElapsedMs holds across resumes: the last one at 900, whose break ends the body (a wait to 1000 would end at the deadline)', async (t) => {
  const headers = { etag: '"v1"' };
  // the first answer breaks after 1,000 bytes; every resume breaks at once
  const w = world(t, {
    '/deadline': ranged(SIZE, [
      { headers, cutAfter: 1_000 },
      { headers, cutAfter: 0 },
    ]),
  });
  const opts = { baseMs: 100, factor: 1, jitter: 'none', maxAttempts: Infinity, maxElapsedMs: 1_000, resume: true };
  const { error, n } = await w.run(drain(await w.run(fetchWithBackoff(w.url('/deadline'), undefined, opts))));
  assert.equal(error?.name, 'ResumeError');
  assert.match(error.message, /deadline/);
  assert.equal(n, 1_000);
  assert.deepEqual(w.times('/deadline'), [0, 100, 200, 300, 400, 500, 600, 700, 800, 900], 'a resume every 100 ms');
  assert.equal(w.at(), 900, 'no wait starts that ends at the deadline');
});

test('cancelling the body during a resume’s wait resolves the pending read at once and leaves no timer', async (t) => {
  const headers = { etag: '"v1"' };
  const w = world(t, { '/cancel-wait': ranged(SIZE, [{ headers, cutAfter: 30_000 }, { headers }]) });
  const res = await w.run(fetchWithBackoff(w.url('/cancel-wait'), undefined, { baseMs: 60_000, jitter: 'none', resume: true }));
  const reader = res.body.getReader();
  assert.equal((await w.run(reader.read())).value.byteLength, 30_000);
  const pending = reader.read();
  await w.tick(1_000); // (the break is seen, and the resume waits: 60 s capped by maxDelayMs, 20 s)
  assert.deepEqual(w.clock.asked, [20_000]);
  assert.equal(await w.settled(pending), false);
  await w.run(reader.cancel());
  assert.deepEqual(await pending, { done: true, value: undefined });
  assert.equal(w.clock.pending(), 0, 'the wait’s timer is gone');
  assert.deepEqual(w.times('/cancel-wait'), [0], 'no Range request');
  assert.equal(w.at(), 1_000);
});

test('body function: a fresh body per attempt', async (t) => {
  const w = world(t, { '/factory': [503, 200] });
  let n = 0;
  const res = await w.run(fetchWithBackoff(w.url('/factory'), { method: 'PUT', body: () => `body ${++n}` }, EXACT));
  assert.equal(res.status, 200);
  assert.deepEqual(
    w.sent('/factory').map((r) => r.body),
    ['body 1', 'body 2'],
  );
  assert.equal(n, 2);
});

test('body function: what it throws, or junk, rejects the call; nothing more is sent', async (t) => {
  const w = world(t, { '/factory-throws': [503, 200], '/factory-junk': 200 });
  const boom = new Error('no body');
  let n = 0;
  const body = () => {
    if (++n === 2) throw boom;
    return 'first';
  };
  assert.equal(await w.run(fetchWithBackoff(w.url('/factory-throws'), { method: 'PUT', body }, EXACT).catch((e) => e)), boom);
  assert.equal(w.count('/factory-throws'), 1);
  await assert.rejects(w.run(fetchWithBackoff(w.url('/factory-junk'), { method: 'PUT', body: () => 42 }, EXACT)), {
    name: 'TypeError',
    message: /body\(\)/,
  });
  assert.equal(w.count('/factory-junk'), 0);
});

test('stream upload: a ReadableStream body is sent again from the buffer; past replayBufferBytes, it is not (not-replayable)', async (t) => {
  const w = world(t, { '/upload': [503, 200], '/upload-over': [503, 200], '/request': [503, 200] });
  const text = 'x'.repeat(3000);
  const res = await w.run(fetchWithBackoff(w.url('/upload'), { method: 'PUT', body: new Blob([text]).stream() }, EXACT));
  assert.equal(res.status, 200);
  assert.deepEqual(
    w.sent('/upload').map((r) => r.body),
    [text, text],
  );
  let done;
  const over = await w.run(
    fetchWithBackoff(
      w.url('/upload-over'),
      { method: 'PUT', body: new Blob(['y'.repeat(8192)]).stream() },
      { ...EXACT, replayBufferBytes: 1024, onDone: (d) => (done = d) },
    ),
  );
  assert.equal(over.status, 503);
  assert.equal(done?.reason, 'not-replayable');
  assert.deepEqual(
    w.sent('/upload-over').map((r) => r.body.length),
    [8192],
  );
  // A Request with a body, within the buffer.
  const req = new Request(w.url('/request'), { method: 'PUT', body: 'from a Request' });
  assert.equal((await w.run(fetchWithBackoff(req, undefined, EXACT))).status, 200);
  assert.deepEqual(
    w.sent('/request').map((r) => r.body),
    ['from a Request', 'from a Request'],
  );
});

test('every stream option is checked, naming it; the main entry names this entry', async (t) => {
  const w = world(t, { '/never': 200, '/infinity': { status: 200, body: 'no timeout' } });
  const url = w.url('/never');
  const refused = [
    [() => fetchWithBackoff(url, undefined, { idleTimeoutMs: 0 }), RangeError, 'idleTimeoutMs'],
    [() => fetchWithBackoff(url, undefined, { idleTimeoutMs: '5' }), TypeError, 'idleTimeoutMs'],
    [() => fetchWithBackoff(url, undefined, { firstChunkTimeoutMs: -1 }), RangeError, 'firstChunkTimeoutMs'],
    [() => fetchWithBackoff(url, undefined, { resume: 1 }), TypeError, 'resume'],
    [() => fetchWithBackoff(url, undefined, { replayBufferBytes: 1.5 }), RangeError, 'replayBufferBytes'],
    [() => fetchWithBackoff(url, undefined, { replayBufferBytes: '1' }), TypeError, 'replayBufferBytes'],
    [() => main.fetchWithBackoff(url, undefined, { idleTimeoutMs: 5 }), TypeError, "'wasm-backoff/stream'"],
    [() => main.fetchWithBackoff(url, undefined, { resume: true }), TypeError, 'resume'],
    [() => main.fetchWithBackoff(url, { method: 'PUT', body: () => 'x' }), TypeError, "'wasm-backoff/stream'"],
  ];
  for (const [f, E, text] of refused) {
    const e = await f().catch((x) => x);
    assert.ok(e instanceof E && e.message.includes(text), `expected ${E.name} with '${text}', got ${e}`);
  }
  assert.equal(w.count('/never'), 0);
  // (Infinity: no timeout, not a timer that fires at once)
  const res = await w.run(fetchWithBackoff(w.url('/infinity'), undefined, { idleTimeoutMs: Infinity, firstChunkTimeoutMs: Infinity }));
  assert.equal(await w.run(res.text()), 'no timeout');
  assert.deepEqual(w.clock.asked, []);
});

// ---- moved from stream.node.test.mjs: the body's timers, on virtual time ----

test('no idle timer outlives a body that ends, is cancelled or errors', async (t) => {
  const w = world(t, {
    '/whole': { size: 100_000 },
    '/chunks': { body: chunked(10, 1000) },
    '/stall': { size: 100_000, stallAfter: 20_000 },
  });
  const whole = await w.run(fetchWithBackoff(w.url('/whole'), undefined, { idleTimeoutMs: 60_000 }));
  assert.equal((await w.run(whole.arrayBuffer())).byteLength, 100_000);
  assert.equal(w.clock.pending(), 0, 'ended: no timer');
  const cancelled = await w.run(fetchWithBackoff(w.url('/chunks'), undefined, { idleTimeoutMs: 60_000 }));
  const reader = cancelled.body.getReader();
  await w.run(reader.read());
  await w.run(reader.cancel());
  assert.equal(w.clock.pending(), 0, 'cancelled: no timer');
  const stalled = await w.run(fetchWithBackoff(w.url('/stall'), undefined, { idleTimeoutMs: 50 }));
  await assert.rejects(w.run(stalled.arrayBuffer()), { name: 'TimeoutError' });
  assert.equal(w.clock.pending(), 0, 'errored: no timer');
  assert.equal(w.at(), 50);
});

test('a body dropped unread keeps its idle timer no longer than one idleTimeoutMs, and goes on when read again', async (t) => {
  const w = world(t, { '/dropped': { body: chunked(100, 10_000) } });
  const res = await w.run(fetchWithBackoff(w.url('/dropped'), undefined, { idleTimeoutMs: 80 }));
  const reader = res.body.getReader();
  await w.run(reader.read());
  // (the consumer stops reading: no read pending, so no stall either)
  await w.tick(80);
  assert.equal(w.clock.pending(), 0, 'no timer once the consumer stopped reading');
  await w.tick(1000);
  const more = await w.run(reader.read());
  assert.ok(!more.done && more.value.byteLength > 0, 'the body goes on when read again');
  await w.run(reader.cancel());
});
