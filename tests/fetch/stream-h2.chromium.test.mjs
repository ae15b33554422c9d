// `wasm-backoff/stream` in headless Chromium: the two ReadableStream upload
// scenarios (replayed from the buffer; past replayBufferBytes, not sent
// again), in a page, against the scripted server over HTTP/2 with a
// self-signed certificate (tests/server/h2.mjs) — Chromium streams a request
// body only over HTTP/2 or later, so tests/fetch/stream.chromium.test.mjs,
// against the HTTP/1.1 server, leaves them out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { startScriptedH2 } from '../server/h2.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';

let srv;
before(async () => {
  srv = await startScriptedH2();
});
after(() => srv?.close());
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' https://127.0.0.1:*") });

test('stream uploads over HTTP/2 in a Chromium page', { timeout: 60_000 }, async (t) => {
  if (!srv) return t.skip('no openssl to make a certificate');
  const page = await watchedPage(ctx.browser, { ignoreHTTPSErrors: true });
  await page.goto(`${ctx.url}/tests/browser/stream-h2.html?server=${encodeURIComponent(srv.url)}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
  assert.deepEqual(await page.evaluate(() => window.results), []);
  // Both scenarios ran, over HTTP/2, their bodies streamed (no length known up front).
  const sent = srv.requests.filter((r) => r.method === 'PUT');
  const upload = sent.filter((r) => r.path.startsWith('/s-upload-') && !r.path.startsWith('/s-upload-over-'));
  const over = sent.filter((r) => r.path.startsWith('/s-upload-over-'));
  assert.deepEqual([upload.length, over.length], [2, 1]);
  for (const r of sent) {
    assert.equal(r.headers[':scheme'], 'https', 'an HTTP/2 request');
    assert.equal(r.headers['content-length'], undefined, 'a streamed body');
  }
  assert.deepEqual(
    upload.map((r) => r.body.length),
    [3000, 3000],
  );
  assert.equal(over[0].body.length, 8192);
  assert.deepEqual(
    page.problems.filter((p) => !/503/.test(p)),
    [],
  );
  await page.close();
});
