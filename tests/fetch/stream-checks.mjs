// Scenarios of `wasm-backoff/stream` against the real scripted server
// (tests/server/scripted.mjs: stalls, cuts, Range with ETag and
// Last-Modified), shared by every runtime: Node, a Chromium page, workerd,
// Deno and Bun run `streamScenarios(lib, base)` with `lib` = the stream
// entry's exports and `main` = the main entry's. Each scenario returns
// nothing or throws.
import { fetchScenarios } from './fetch-checks.mjs';

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

const FAST = { baseMs: 5, maxDelayMs: 20 };
let unique = 0;
const path = (name) => `/s-${name}-${Date.now().toString(36)}-${unique++}`;

/** The scripted server's synthetic body (its `patternByte`). */
const pattern = (from, to) => Uint8Array.from({ length: to - from }, (_, i) => ((from + i) * 7) % 251);

/** The bytes of a body, or the error that ended it (and the bytes before it). */
async function drain(res) {
  const reader = res.body.getReader();
  const parts = [];
  let n = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      n += value.byteLength;
    }
  } catch (error) {
    return { error, n };
  }
  const bytes = new Uint8Array(n);
  let at = 0;
  for (const p of parts) bytes.set(p, at), (at += p.byteLength);
  return { bytes, n };
}

const same = (a, b) => a.byteLength === b.byteLength && a.every((v, i) => v === b[i]);

/** Whether `f` rejects (or throws) with an error of class `E` whose message has `text`. */
async function rejects(f, E, text) {
  try {
    await f();
  } catch (e) {
    check(e instanceof E && String(e.message).includes(text), `expected ${E.name} with '${text}', got ${e}`);
    return;
  }
  throw new Error(`expected ${E.name} with '${text}', got no error`);
}

const SIZE = 200_000;

/** name -> async (lib, ctl) => void */
export const STREAM_SCENARIOS = {
  async 'idleTimeoutMs: a body silent after its headers errors with a TimeoutError'({ fetchWithBackoff }, ctl) {
    const p = path('stall');
    await ctl.script(p, [{ size: SIZE, stallAfter: 1000 }]);
    const t0 = Date.now();
    const res = await fetchWithBackoff(ctl.base + p, undefined, { idleTimeoutMs: 150 });
    check(res.status === 200 && res.headers.get('content-length') === String(SIZE), `status ${res.status}`);
    const { error, n } = await drain(res);
    check(error?.name === 'TimeoutError' && /idleTimeoutMs/.test(error.message), `error ${error}`);
    check(n === 1000 && Date.now() - t0 < 5000, `read ${n} bytes in ${Date.now() - t0} ms`);
  },

  async 'idleTimeoutMs: a steady body is whole; a slow consumer is not a stall'({ fetchWithBackoff }, ctl) {
    const p = path('steady');
    await ctl.script(p, [{ size: SIZE }]);
    // (400 ms: a loaded machine can pause a steady body's chunks 100 ms)
    const res = await fetchWithBackoff(ctl.base + p, undefined, { idleTimeoutMs: 400 });
    const reader = res.body.getReader();
    const first = await reader.read();
    // (longer than the idle timeout, reading nothing)
    await new Promise((r) => setTimeout(r, 600));
    const parts = [first.value];
    for (let r = await reader.read(); !r.done; r = await reader.read()) parts.push(r.value);
    const n = parts.reduce((s, v) => s + v.byteLength, 0);
    check(n === SIZE, `read ${n} of ${SIZE}`);
  },

  async 'firstChunkTimeoutMs: a stall before the first chunk is retried; the answer replays it'({ fetchWithBackoff }, ctl) {
    const p = path('first');
    await ctl.script(p, [
      { size: SIZE, stallAfter: 0 },
      { size: SIZE, headers: { 'x-second': 'yes' } },
    ]);
    const infos = [];
    // (1 s: the second attempt's first chunk must beat it on a loaded machine, or a third goes)
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, firstChunkTimeoutMs: 1000, onRetry: (i) => infos.push(i) });
    check(res.status === 200 && res.headers.get('x-second') === 'yes', `status ${res.status}`);
    check(res.url === ctl.base + p, `url ${res.url}`);
    check((await ctl.count(p)) === 2, 'two attempts');
    check(infos.length === 1 && infos[0].error?.name === 'TimeoutError', `onRetry ${infos.map((i) => i.error)}`);
    const { bytes } = await drain(res);
    check(bytes && same(bytes, pattern(0, SIZE)), 'the body is whole, its first chunk replayed');
  },

  async 'firstChunkTimeoutMs: an answer read ahead that shouldRetry retries is let go'({ fetchWithBackoff }, ctl) {
    const p = path('first-retried');
    await ctl.script(p, [
      { size: 1000, headers: { 'x-n': '1' } },
      { size: 1000, headers: { 'x-n': '2' } },
    ]);
    const res = await fetchWithBackoff(ctl.base + p, undefined, {
      ...FAST,
      firstChunkTimeoutMs: 1000,
      shouldRetry: ({ attempt }) => attempt === 1 || undefined,
    });
    check(res.headers.get('x-n') === '2' && (await ctl.count(p)) === 2, `x-n ${res.headers.get('x-n')}`);
    const { bytes } = await drain(res);
    check(bytes && same(bytes, pattern(0, 1000)), 'the second body, whole');
  },

  async 'resume: a cut body is resumed with Range and If-Range (ETag), byte-identical'({ fetchWithBackoff }, ctl) {
    const p = path('resume');
    const headers = { etag: '"v1"' };
    await ctl.script(p, [
      { size: SIZE, range: true, headers, cutAfter: 50_000 },
      { size: SIZE, range: true, headers, cutAfter: 60_000 },
      { size: SIZE, range: true, headers },
    ]);
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, resume: true });
    const { bytes, error } = await drain(res);
    check(!error && same(bytes, pattern(0, SIZE)), `body ${error ?? bytes.byteLength}`);
    const reqs = await ctl.requests(p);
    check(reqs.length === 3, `${reqs.length} requests`);
    const starts = reqs.slice(1).map((r) => +/^bytes=(\d+)-$/.exec(r.headers.range)[1]);
    // (Bun drops what it had buffered when a body breaks: it may resume from 0)
    check(starts[1] >= starts[0] && reqs.slice(1).every((r) => r.headers['if-range'] === '"v1"'), JSON.stringify(starts));
  },

  async 'resume: with Last-Modified alone'({ fetchWithBackoff }, ctl) {
    const p = path('resume-lm');
    const headers = { 'last-modified': 'Tue, 03 Nov 2026 10:00:00 GMT' };
    await ctl.script(p, [
      { size: SIZE, range: true, headers, cutAfter: 70_000 },
      { size: SIZE, range: true, headers },
    ]);
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, resume: true });
    const { bytes, error } = await drain(res);
    check(!error && same(bytes, pattern(0, SIZE)), `body ${error}`);
    const reqs = await ctl.requests(p);
    check(reqs[1]?.headers['if-range'] === headers['last-modified'], 'If-Range is the date');
  },

  async 'resume: a changed validator (200) errors the body, never splices'({ fetchWithBackoff }, ctl) {
    const p = path('changed');
    await ctl.script(p, [
      { size: SIZE, range: true, headers: { etag: '"v1"' }, cutAfter: 50_000 },
      { size: SIZE, range: true, headers: { etag: '"v2"' } },
    ]);
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, resume: true });
    const { error, n } = await drain(res);
    check(error?.name === 'ResumeError' && /200, not 206/.test(error.message), `error ${error}`);
    check(n < SIZE && (await ctl.count(p)) === 2, `read ${n}`);
  },

  async 'resume: a hostile Content-Range errors the body'({ fetchWithBackoff }, ctl) {
    const p = path('hostile');
    const headers = { etag: '"v1"' };
    await ctl.script(p, [
      { size: SIZE, range: true, headers, cutAfter: 50_000 },
      { size: SIZE, range: true, headers: { ...headers, 'content-range': `bytes 1-${SIZE - 1}/${SIZE}` } },
    ]);
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, resume: true });
    const { error } = await drain(res);
    check(error?.name === 'ResumeError' && /Content-Range/.test(error.message), `error ${error}`);
  },

  async 'resume: a weak ETag, or no resume option, lets the failure through'({ fetchWithBackoff }, ctl) {
    const p = path('weak');
    await ctl.script(p, [
      { size: SIZE, range: true, headers: { etag: 'W/"v1"' }, cutAfter: 50_000 },
      { size: SIZE, range: true },
    ]);
    const { error } = await drain(await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, resume: true }));
    check(error && error.name !== 'ResumeError' && (await ctl.count(p)) === 1, `weak: ${error}`);
    const q = path('off');
    await ctl.script(q, [
      { size: SIZE, range: true, headers: { etag: '"v1"' }, cutAfter: 50_000 },
      { size: SIZE, range: true },
    ]);
    const r2 = await drain(await fetchWithBackoff(ctl.base + q, undefined, FAST));
    check(r2.error && (await ctl.count(q)) === 1, `off: ${r2.error}`);
  },

  async 'resume: the attempts count against maxAttempts'({ fetchWithBackoff }, ctl) {
    const p = path('spent');
    const step = { size: SIZE, range: true, headers: { etag: '"v1"' }, cutAfter: 20_000 };
    await ctl.script(p, [step]);
    const { error } = await drain(await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, resume: true, maxAttempts: 3 }));
    check(error?.name === 'ResumeError' && /exhausted/.test(error.message), `error ${error}`);
    check((await ctl.count(p)) === 3, `${await ctl.count(p)} requests`);
  },

  async 'body factory: a fresh body per attempt'({ fetchWithBackoff }, ctl) {
    const p = path('factory');
    await ctl.script(p, [{ status: 503 }, { echo: true }]);
    let n = 0;
    const res = await fetchWithBackoff(ctl.base + p, { method: 'PUT', body: () => `body ${++n}` }, FAST);
    const echo = await res.json();
    check(echo.body === 'body 2' && n === 2, `echo ${echo.body}, ${n} calls`);
  },

  async 'body factory: what it throws, or junk, rejects the call; nothing more is sent'({ fetchWithBackoff }, ctl) {
    const p = path('factory-throws');
    await ctl.script(p, [{ status: 503 }, { echo: true }]);
    const boom = new Error('no body');
    let n = 0;
    const body = () => {
      if (++n === 2) throw boom;
      return 'first';
    };
    try {
      await fetchWithBackoff(ctl.base + p, { method: 'PUT', body }, FAST);
      throw new Error('resolved');
    } catch (e) {
      check(e === boom, `rejected with ${e}`);
    }
    check((await ctl.count(p)) === 1, 'one request sent');
    const q = path('factory-junk');
    await ctl.script(q, [{ echo: true }]);
    await rejects(() => fetchWithBackoff(ctl.base + q, { method: 'PUT', body: () => 42 }, FAST), TypeError, 'body()');
    check((await ctl.count(q)) === 0, 'nothing sent');
  },

  async 'stream upload: a ReadableStream body is sent again from the buffer'({ fetchWithBackoff }, ctl) {
    const p = path('upload');
    await ctl.script(p, [{ status: 503 }, { echo: true }]);
    const text = 'x'.repeat(3000);
    const body = new Blob([text]).stream();
    const res = await fetchWithBackoff(ctl.base + p, { method: 'PUT', body }, FAST);
    const echo = await res.json();
    check(res.status === 200 && echo.body === text, `status ${res.status}, ${echo.body?.length} bytes echoed`);
  },

  async 'stream upload: a ReadableStream body past replayBufferBytes is not sent again (not-replayable)'({ fetchWithBackoff }, ctl) {
    const p = path('upload-over');
    await ctl.script(p, [{ status: 503 }, { echo: true }]);
    let done;
    const body = new Blob(['y'.repeat(8192)]).stream();
    const res = await fetchWithBackoff(
      ctl.base + p,
      { method: 'PUT', body },
      { ...FAST, replayBufferBytes: 1024, onDone: (d) => (done = d) },
    );
    check(res.status === 503 && done?.reason === 'not-replayable', `status ${res.status}, ${done?.reason}`);
    check((await ctl.count(p)) === 1, 'one request');
  },

  async 'stream upload: a Request with a body is sent again, within the buffer'({ fetchWithBackoff }, ctl) {
    const p = path('request');
    await ctl.script(p, [{ status: 503 }, { echo: true }]);
    const req = new Request(ctl.base + p, { method: 'PUT', body: 'from a Request' });
    const res = await fetchWithBackoff(req, undefined, FAST);
    const echo = await res.json();
    check(echo.body === 'from a Request' && (await ctl.count(p)) === 2, `echo ${echo.body}`);
  },

  async 'every stream option is checked, naming it; the main entry names this entry'({ fetchWithBackoff, main }, ctl) {
    const url = `${ctl.base}${path('never')}`;
    await rejects(() => fetchWithBackoff(url, undefined, { idleTimeoutMs: 0 }), RangeError, 'idleTimeoutMs');
    await rejects(() => fetchWithBackoff(url, undefined, { idleTimeoutMs: '5' }), TypeError, 'idleTimeoutMs');
    await rejects(() => fetchWithBackoff(url, undefined, { firstChunkTimeoutMs: -1 }), RangeError, 'firstChunkTimeoutMs');
    await rejects(() => fetchWithBackoff(url, undefined, { resume: 1 }), TypeError, 'resume');
    await rejects(() => fetchWithBackoff(url, undefined, { replayBufferBytes: 1.5 }), RangeError, 'replayBufferBytes');
    await rejects(() => fetchWithBackoff(url, undefined, { replayBufferBytes: '1' }), TypeError, 'replayBufferBytes');
    await rejects(() => main.fetchWithBackoff(url, undefined, { idleTimeoutMs: 5 }), TypeError, "'wasm-backoff/stream'");
    await rejects(() => main.fetchWithBackoff(url, undefined, { resume: true }), TypeError, 'resume');
    await rejects(() => main.fetchWithBackoff(url, { method: 'PUT', body: () => 'x' }), TypeError, "'wasm-backoff/stream'");
    // (Infinity: no timeout, not a timer that fires at once)
    const res = await fetchWithBackoff(url, undefined, { idleTimeoutMs: Infinity, firstChunkTimeoutMs: Infinity });
    check(res.status === 404 && (await res.text()).startsWith('no script'), `Infinity: ${res.status}`);
  },
};

/** Runs the stream scenarios (all, or those whose name passes `filter`); returns failures as strings. */
export const streamScenarios = (lib, base, filter) => fetchScenarios(lib, base, filter, STREAM_SCENARIOS);
