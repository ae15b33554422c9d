// `wasm-backoff/stream` in Node against a hostile scripted server: the
// invariants of what a retry carries (issue 34, high items 1–6).
//   - An upload's bytes, as the server stored them, are the caller's bytes
//     or nothing; the call succeeds only when they are the caller's.
//   - A download's bytes are a true prefix of one version of the resource,
//     and the body ends cleanly only when it is complete.
//   - Resumes are attempts of the call: cancelling the body ends the
//     resume in flight (no request after it, no timer, a cancel that
//     resolves). Their timing — onRetry told a resume's wait, the deadline
//     across resumes, a cancel during a resume's wait — is asserted to the
//     millisecond in virtual time: stream.virtual.test.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWithBackoff } from 'wasm-backoff/stream';
import { failover } from 'wasm-backoff/failover';
import { startScripted, patternByte } from '../server/scripted.mjs';
import { timers, until, sleep } from '../support/wait.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

let unique = 0;
const path = (name) => `/i-${name}-${unique++}`;
const FAST = { baseMs: 5, maxDelayMs: 20 };
/** A wait that a source's late chunk (150 ms) falls into. */
const WAIT = { baseMs: 300, throttleBaseMs: 300, jitter: 'none' };

/** `n` bytes of value `v`. */
const bytes = (n, v) => new Uint8Array(n).fill(v);

/** The scripted server's synthetic body, bytes [from, to). */
const pattern = (from, to) => Uint8Array.from({ length: to - from }, (_, i) => patternByte(from + i));

/** The bytes read from `res`'s body, and the error that ended it (if any). */
async function drain(res) {
  const parts = [];
  let n = 0;
  let error;
  try {
    for await (const v of res.body) parts.push(v), (n += v.byteLength);
  } catch (e) {
    error = e;
  }
  const all = new Uint8Array(n);
  let at = 0;
  for (const p of parts) all.set(p, at), (at += p.byteLength);
  return { bytes: all, error };
}

/** Whether `a` is a prefix of `b`. */
const prefix = (a, b) => a.byteLength <= b.byteLength && a.every((v, i) => v === b[i]);

/** A ReadableStream of `chunks`, each given after `delays[i]` ms (0: at once). */
function source(chunks, delays = []) {
  let i = 0;
  return new ReadableStream(
    {
      async pull(c) {
        if (i >= chunks.length) return c.close();
        if (delays[i]) await sleep(delays[i]);
        c.enqueue(chunks[i++]);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Reads `reader` on until `cond()` holds while a read is pending (the body
 * broke and its resume is under way); returns that pending read (in an
 * array: awaited, a promise would be waited for).
 * @param {ReadableStreamDefaultReader<Uint8Array>} reader
 * @param {string} what
 * @param {() => boolean} cond
 */
async function readUntil(reader, what, cond) {
  let pending = reader.read();
  await until(what, async () => {
    const r = await Promise.race([pending, sleep(5)]);
    if (r?.done) assert.fail(`the body ended before ${what}`);
    if (r) pending = reader.read();
    return !r && cond();
  });
  return [pending];
}

/** The requests of `p` whose body the server read to its end. */
const stored = (p) => srv.requests.filter((r) => r.path === p && r.body !== undefined && r.complete !== false);

for (const [name, first] of [
  ['a 503', { status: 503, early: true, delayMs: 50 }],
  ['a reset', { reset: true, early: true, delayMs: 50 }],
]) {
  test(`upload (item 1): a source that grows past replayBufferBytes during the wait after ${name} is not sent again`, async () => {
    const p = path('late-over');
    // (the first attempt ends 50 ms after its headers: the upload's second read is pending)
    srv.script(p, [first, { echo: true }]);
    let done;
    // 60,000 bytes at once, 10,000 more after 150 ms (during the 300 ms
    // wait): 70,000 > the 64 KiB kept
    const body = source([bytes(60_000, 1), bytes(10_000, 2)], [0, 150]);
    const call = fetchWithBackoff(srv.url + p, { method: 'PUT', body, duplex: 'half' }, { ...WAIT, onDone: (d) => (done = d) });
    const res = await call.catch((e) => e);
    if (first.reset) assert.ok(res instanceof TypeError, `the reset's own error: ${res}`);
    else assert.equal(res.status, 503, 'the answer to the one attempt that could be sent');
    assert.equal(done?.reason, 'not-replayable');
    assert.equal(srv.count(p), 1, 'never sent again');
    await res.body?.cancel();
  });
}

test('upload (item 1): a source that ends within replayBufferBytes during the wait is sent whole', async () => {
  const p = path('late-within');
  srv.script(p, [{ status: 503, early: true, delayMs: 50 }, { echo: true }]);
  const body = source([bytes(60_000, 1), bytes(1_000, 2)], [0, 150]);
  const res = await fetchWithBackoff(srv.url + p, { method: 'PUT', body, duplex: 'half' }, WAIT);
  assert.equal(res.status, 200);
  const echo = await res.json();
  const want = Buffer.concat([bytes(60_000, 1), bytes(1_000, 2)]).toString('utf8');
  assert.equal(echo.body.length, 61_000, 'the retry sent every byte');
  assert.equal(echo.body, want, 'the caller’s bytes, in order');
});

test('upload (item 2): a chunk that is not a Uint8Array rejects the call with the source’s error; nothing else is sent', async () => {
  const p = path('bad-chunk');
  srv.script(p, [{ echo: true }]);
  const enc = (s) => new TextEncoder().encode(s);
  const body = source([enc('part1|'), enc('part2|').buffer, enc('part3')]);
  const e = await fetchWithBackoff(srv.url + p, { method: 'PUT', body, duplex: 'half' }, FAST).catch((x) => x);
  assert.ok(e instanceof TypeError && /Uint8Array/.test(e.message), `rejected with ${e}`);
  assert.deepEqual(
    stored(p).map((r) => r.body),
    [],
    'no body reached the server whole (not part1|part3)',
  );
});

test('upload (item 2): a source that errors rejects the call with its error, not retried as a network failure', async () => {
  const p = path('source-error');
  srv.script(p, [{ echo: true }]);
  const boom = new Error('the source broke');
  let i = 0;
  const body = new ReadableStream({
    pull(c) {
      if (i++ === 0) c.enqueue(bytes(1000, 3));
      else c.error(boom);
    },
  });
  let done;
  const e = await fetchWithBackoff(srv.url + p, { method: 'PUT', body, duplex: 'half' }, { ...FAST, onDone: (d) => (done = d) }).catch(
    (x) => x,
  );
  assert.equal(e, boom, `rejected with ${e}`);
  assert.equal(done?.attempts, 1, 'one attempt');
  assert.deepEqual(stored(p), [], 'nothing stored');
});

const SIZE = 100_000;
const ETAG = { etag: '"v1"' };

for (const [name, answer] of [
  ['503', { status: 503, body: '<html>Service busy</html>' }],
  ['500', { status: 500, body: '<html>oops</html>' }],
  ['429', { status: 429, body: 'slow down' }],
  ['502', { status: 502, body: 'bad gateway' }],
  ['503 with Retry-After over maxRetryAfterMs', { status: 503, body: 'later', headers: { 'retry-after': '3600' } }],
]) {
  test(`download (item 3): a ${name} to every Range request errors the body with ResumeError, never splices it`, async () => {
    const p = path('range-error');
    srv.script(p, [{ size: SIZE, range: true, headers: ETAG, cutAfter: 30_000 }, answer]);
    const res = await fetchWithBackoff(srv.url + p, undefined, { ...FAST, resume: true, maxAttempts: 3 });
    const { bytes: got, error } = await drain(res);
    assert.equal(error?.name, 'ResumeError', `the body ended with ${error} after ${got.byteLength} bytes`);
    assert.ok(prefix(got, pattern(0, SIZE)), 'what was read is a true prefix of the resource');
    assert.ok(got.byteLength <= 30_000, `${got.byteLength} bytes: nothing after the break`);
  });
}

test('download: a 206 that ends cleanly short of its Content-Range errors the body (the props’ known defect)', async () => {
  const p = path('short-206');
  srv.script(p, [
    { size: SIZE, range: true, headers: ETAG, cutAfter: 30_000 },
    { size: SIZE, range: true, rangeLie: 'short', headers: ETAG },
  ]);
  const { bytes: got, error } = await drain(await fetchWithBackoff(srv.url + p, undefined, { ...FAST, resume: true }));
  assert.equal(error?.name, 'ResumeError', `the body ended with ${error} after ${got.byteLength} of ${SIZE} bytes`);
  assert.ok(prefix(got, pattern(0, SIZE)));
});

test('upload: a body function’s stream whose source errors rejects with its error, not retried', async () => {
  const p = path('factory-stream-error');
  srv.script(p, [{ echo: true }]);
  const boom = new Error('the source broke');
  let made = 0;
  const body = () => {
    made++;
    let i = 0;
    return new ReadableStream({
      pull(c) {
        if (i++ === 0) c.enqueue(bytes(1000, 4));
        else c.error(boom);
      },
    });
  };
  const e = await fetchWithBackoff(srv.url + p, { method: 'PUT', body }, FAST).catch((x) => x);
  assert.equal(e, boom, `rejected with ${e}`);
  assert.equal(made, 1, 'one body made: not retried');
  assert.deepEqual(stored(p), []);
});

test('download (item 4): a weak ETag with a Last-Modified equal to Date is not resumed (no If-Range with a weak date)', async () => {
  const p = path('weak-date');
  const date = new Date().toUTCString();
  const headers = { etag: 'W/"v1"', 'last-modified': date, date };
  srv.script(p, [
    { size: SIZE, range: true, headers, cutAfter: 30_000 },
    { size: SIZE, range: true, headers },
  ]);
  const { bytes: got, error } = await drain(await fetchWithBackoff(srv.url + p, undefined, { ...FAST, resume: true }));
  assert.ok(error && error.name !== 'ResumeError', `the break itself: ${error}`);
  assert.ok(prefix(got, pattern(0, SIZE)));
  assert.equal(srv.count(p), 1, 'no Range request');
});

test('download (item 4): a Last-Modified within a second of Date is weak: not resumed', async () => {
  const p = path('lm-weak');
  const date = new Date().toUTCString();
  const headers = { 'last-modified': date, date };
  srv.script(p, [
    { size: SIZE, range: true, headers, cutAfter: 30_000 },
    { size: SIZE, range: true, headers },
  ]);
  const { error } = await drain(await fetchWithBackoff(srv.url + p, undefined, { ...FAST, resume: true }));
  assert.ok(error && error.name !== 'ResumeError', `${error}`);
  assert.equal(srv.count(p), 1, 'no Range request');
});

test('download (item 4): a Last-Modified a second or more before Date is strong: resumed with it', async () => {
  const p = path('lm-strong');
  const now = Date.now();
  const headers = { 'last-modified': new Date(now - 60_000).toUTCString(), date: new Date(now).toUTCString() };
  srv.script(p, [
    { size: SIZE, range: true, headers, cutAfter: 30_000 },
    { size: SIZE, range: true, headers },
  ]);
  const { bytes: got, error } = await drain(await fetchWithBackoff(srv.url + p, undefined, { ...FAST, resume: true }));
  assert.equal(error, undefined);
  assert.deepEqual(got, pattern(0, SIZE));
  assert.equal(srv.requests.filter((r) => r.path === p)[1]?.headers['if-range'], headers['last-modified']);
});

test('download (item 5): cancelling the body while a resume is in flight resolves, and aborts the Range request', async () => {
  const p = path('cancel-inflight');
  srv.script(p, [{ size: SIZE, range: true, headers: ETAG, cutAfter: 30_000 }, { hang: true }]);
  const before = timers();
  const res = await fetchWithBackoff(srv.url + p, undefined, { ...FAST, resume: true, maxAttempts: 50 });
  const reader = res.body.getReader();
  const [pending] = await readUntil(reader, 'the Range request', () => srv.count(p) === 2);
  await reader.cancel(); // (rejects on the old code: the break's own error)
  assert.deepEqual(await pending, { done: true, value: undefined });
  await until('the hung Range request closed by the client', () => srv.requests.filter((r) => r.path === p)[1].closed);
  assert.equal(srv.count(p), 2, 'no request after the cancel');
  assert.equal(timers(), before, 'no timer left');
});

// Where features meet: the stream entry with failover (issue 34, medium).
test('failover × stream: a Request with a body moves to the next endpoint with its bytes', async () => {
  const b = await startScripted();
  try {
    const p = path('moved-body');
    srv.script(p, [{ status: 503 }]);
    b.script(p, [{ echo: true }]);
    const req = new Request(srv.url + p, { method: 'PUT', body: 'the caller’s bytes' });
    const res = await fetchWithBackoff(req, undefined, { ...FAST, endpoints: failover([srv.url, b.url]) });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).body, 'the caller’s bytes');
    assert.equal(srv.count(p), 1);
  } finally {
    await b.close();
  }
});

test('failover × resume: the Range request goes to the endpoint that served the body', async () => {
  const b = await startScripted();
  try {
    const p = path('moved-resume');
    srv.script(p, [{ status: 503 }, { size: SIZE, range: true, headers: ETAG }]);
    b.script(p, [
      { size: SIZE, range: true, headers: ETAG, cutAfter: 30_000 },
      { size: SIZE, range: true, headers: ETAG },
    ]);
    const res = await fetchWithBackoff(srv.url + p, undefined, { ...FAST, resume: true, endpoints: failover([srv.url, b.url]) });
    const { bytes: got, error } = await drain(res);
    assert.equal(error, undefined);
    assert.deepEqual(got, pattern(0, SIZE));
    assert.equal(srv.count(p), 1, 'the down origin was asked once');
    assert.equal(b.count(p), 2, 'the body and its Range request');
    assert.match(b.requests.filter((r) => r.path === p)[1].headers.range, /^bytes=\d+-$/);
  } finally {
    await b.close();
  }
});
