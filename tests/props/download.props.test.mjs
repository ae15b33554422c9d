// Property (issue 34): a download's bytes are a true prefix of exactly one
// version of the resource, and the body ends without error only when it is
// complete. wasm-backoff/stream (resume, idle and first-chunk timeouts, hedges)
// against a scripted server that breaks and lies: statuses, resets at any
// byte, stalls, hangs, Range ignored (a 200), lied about (rangeLie: a wrong
// start or total, a partial 206, a 206 from another version, a short one),
// validators that change between versions (ETag, Last-Modified, weak, none).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWithBackoff } from 'wasm-backoff/stream';
import { hedge } from 'wasm-backoff/hedge';
import { startScripted, patternByte } from '../server/scripted.mjs';
import { property } from './props.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

let unique = 0;

/** The bytes of `body`, and the error that ended it (if any). */
async function drain(body) {
  const parts = [];
  let error;
  try {
    for await (const chunk of body) parts.push(chunk);
  } catch (e) {
    error = e;
  }
  return { bytes: new Uint8Array(Buffer.concat(parts)), error };
}

/** The validator headers of version `v` (0 or 1) under `kind`. */
function validator(kind, v, now) {
  if (kind === 'etag') return { etag: `"v${v + 1}"` };
  if (kind === 'weak') return { etag: `W/"v${v + 1}"` };
  // (a strong Last-Modified: at least a second before Date; one per version)
  if (kind === 'date') return { 'last-modified': new Date(now - (2 - v) * 60_000).toUTCString(), date: new Date(now).toUTCString() };
  return {};
}

const LIES = ['ifRange', 'start', 'total', 'end', 'short'];

/** A server's behaviour for one request. */
function step(g, c, v) {
  const size = c.sizes[v];
  const body = () => {
    const s = { size, range: true, chunk: c.chunk, version: v };
    if (g.chance(0.5)) s.cutAfter = g.int(0, Math.max(0, size - 1));
    else if (g.chance(0.3)) s[c.options.idleTimeoutMs === undefined ? 'cutAfter' : 'stallAfter'] = g.int(0, Math.max(0, size - 1));
    if (g.chance(0.1)) s.noLength = true;
    return s;
  };
  return g.weighted([
    [8, () => body()],
    [2, () => ({ ...body(), rangeLie: g.pick(LIES) })],
    // (Range ignored: the whole body again, a 200)
    [1, () => ({ ...body(), range: false })],
    [
      2,
      () => ({
        status: g.pick([503, 500, 429, 502, 404]),
        body: 'an error page',
        ...(g.chance(0.3) && { headers: { 'retry-after-ms': '3' } }),
      }),
    ],
    [1, () => ({ reset: true, ...(g.chance(0.5) && { delayMs: g.int(0, 5) }) })],
    [0.5, () => ({ hang: true })],
  ])();
}

property('a download is a true prefix of one version, and ends cleanly only when complete', {
  cases: 200,
  generate(g) {
    const c = {
      sizes: [
        g.weighted([
          [1, 0],
          [9, g.int(1, 120_000)],
        ]),
        g.int(1, 120_000),
      ],
      validator: g.weighted([
        [6, 'etag'],
        [2, 'date'],
        [1, 'weak'],
        [1, 'none'],
      ]),
      chunk: g.pick([1000, 4096, 16384, g.int(1, 20_000)]),
      options: {
        resume: g.chance(0.8),
        maxAttempts: g.int(1, 6),
        baseMs: g.int(1, 5),
        ...(g.chance(0.4) && { idleTimeoutMs: g.int(40, 120) }),
        ...(g.chance(0.1) && { firstChunkTimeoutMs: g.int(60, 150) }),
      },
      /** @type {any[]} */
      steps: [],
    };
    // The version answered: 0, until a step changes it to 1 for the rest.
    let v = 0;
    for (let n = g.int(1, 6), i = 0; i < n; i++) {
      if (i > 0 && v === 0 && g.chance(0.15)) v = 1;
      c.steps.push(step(g, c, v));
    }
    // (a hung request ends only by a timeout)
    if (c.steps.some((s) => s.hang)) c.options.timeoutMs = g.int(80, 200);
    // (racers, each answered by the next step: the winner's bytes alone reach the reader)
    if (!c.options.resume && c.options.firstChunkTimeoutMs === undefined && g.chance(0.3)) c.hedge = g.int(1, 20);
    return c;
  },
  async check(c) {
    const p = `/download-${unique++}`;
    const now = Date.now();
    srv.script(
      p,
      c.steps.map((s) =>
        s.version === undefined ? s : { ...s, headers: { ...validator(c.validator, s.version, now), 'x-version': String(s.version) } },
      ),
    );
    /** @type {Response | undefined} */
    let res;
    try {
      res = await fetchWithBackoff(
        srv.url + p,
        undefined,
        c.hedge === undefined ? c.options : { ...c.options, hedge: hedge({ delayMs: c.hedge }) },
      );
    } catch (e) {
      return `rejected ${e?.name}`; // (no body: nothing delivered)
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      return `answered ${res.status}`;
    }
    const v = Number(res.headers.get('x-version'));
    const want = Uint8Array.from({ length: c.sizes[v] }, (_, i) => patternByte(i, v));
    const { bytes: got, error } = await drain(/** @type {ReadableStream<Uint8Array>} */ (res.body));
    const n = got.length;
    assert.ok(n <= want.length, `${n} bytes read of a version of ${want.length}`);
    const at = got.findIndex((b, i) => b !== want[i]);
    assert.equal(at, -1, `byte ${at} is ${got[at]}, not version ${v}'s ${want[at]} (of ${n} read): not a prefix of the version answered`);
    if (!error) assert.equal(n, want.length, `the body ended without error after ${n} of ${want.length} bytes`);
    const resumed = srv.requests.filter((r) => r.path === p && r.headers.range).length;
    return `${error ? `body ${error.name}` : 'complete'}${resumed ? ' (resumed)' : ''}`;
  },
});

test('the scripted server lies as it is told (the generator relies on it)', async () => {
  const p = `/download-lies-${unique++}`;
  const etag = { etag: '"v1"' };
  const ask = async (step, headers) => {
    srv.script(p, step);
    const res = await fetch(srv.url + p, { headers });
    const body = new Uint8Array(await res.arrayBuffer());
    return [res.status, res.headers.get('content-range'), res.headers.get('content-length'), body.length, body[0]];
  };
  const range = { range: 'bytes=10-', 'if-range': '"v1"' };
  const step = { size: 100, range: true, headers: etag };
  assert.deepEqual(await ask(step, range), [206, 'bytes 10-99/100', '90', 90, patternByte(10)]);
  assert.deepEqual(await ask({ ...step, version: 1 }, {}), [200, null, '100', 100, patternByte(0, 1)]);
  assert.deepEqual(await ask({ ...step, rangeLie: 'start' }, range), [206, 'bytes 11-99/100', '90', 90, patternByte(10)]);
  assert.deepEqual(await ask({ ...step, rangeLie: 'total' }, range), [206, 'bytes 10-99/101', '90', 90, patternByte(10)]);
  assert.deepEqual(await ask({ ...step, rangeLie: 'end' }, range), [206, 'bytes 10-54/100', '45', 45, patternByte(10)]);
  assert.deepEqual(await ask({ ...step, rangeLie: 'short' }, range), [206, 'bytes 10-99/100', '45', 45, patternByte(10)]);
  const v2 = { ...step, version: 1, headers: { etag: '"v2"' } };
  assert.deepEqual(await ask(v2, range), [200, null, '100', 100, patternByte(0, 1)], 'If-Range differs: the whole new version');
  assert.deepEqual(await ask({ ...v2, rangeLie: 'ifRange' }, range), [206, 'bytes 10-99/100', '90', 90, patternByte(10, 1)]);
  assert.deepEqual(await ask({ ...step, noLength: true }, {}), [200, null, null, 100, 0]);
});
