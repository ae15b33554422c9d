// The runtime smoke set of `wasm-backoff/stream`: real bodies against the
// real scripted server (tests/server/scripted.mjs), shared by every
// runtime: Node, a Chromium page, workerd, Deno and Bun run
// `streamScenarios(lib, base)` with `lib` = the stream entry's exports and
// `main` = the main entry's. What a runtime's streams do: a real body that
// stalls (the idle timeout errors it), one read ahead and let go, one cut
// mid-way and resumed with Range, streamed uploads replayed from the
// buffer (Chromium streams them over HTTP/2 only: stream-h2.js) and a
// Request's body. Outcomes and order, never a duration. The timeouts to the
// millisecond, resume's refusals, body functions and option checks run once
// in virtual time: stream.virtual.test.mjs. Each scenario returns nothing or
// throws.
import { fetchScenarios } from './fetch-checks.mjs';

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

const FAST = { baseMs: 5, maxDelayMs: 20 };
let unique = 0;
const path = (name) => `/s-${name}-${Date.now().toString(36)}-${unique++}`;

/** The scripted server's synthetic body (its `patternByte`). */
export const pattern = (from, to) => Uint8Array.from({ length: to - from }, (_, i) => ((from + i) * 7) % 251);

/** The bytes of a body, or the error that ended it (and the bytes before it). */
export async function drain(res) {
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

export const same = (a, b) => a.byteLength === b.byteLength && a.every((v, i) => v === b[i]);

const SIZE = 200_000;

/** name -> async (lib, ctl) => void */
export const STREAM_SCENARIOS = {
  async 'idleTimeoutMs: a body silent after its headers errors with a TimeoutError'({ fetchWithBackoff }, ctl) {
    const p = path('stall');
    await ctl.script(p, [{ size: SIZE, stallAfter: 1000 }]);
    const res = await fetchWithBackoff(ctl.base + p, undefined, { idleTimeoutMs: 150 });
    check(res.status === 200 && res.headers.get('content-length') === String(SIZE), `status ${res.status}`);
    const { error, n } = await drain(res);
    check(error?.name === 'TimeoutError' && /idleTimeoutMs/.test(error.message), `error ${error}`);
    check(n === 1000, `read ${n} bytes`);
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
};

/** Runs the stream scenarios (all, or those whose name passes `filter`); returns failures as strings. */
export const streamScenarios = (lib, base, filter) => fetchScenarios(lib, base, filter, STREAM_SCENARIOS);
