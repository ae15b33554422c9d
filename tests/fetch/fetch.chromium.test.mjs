// The fetch driver in headless Chromium, in a page and in a module Web
// Worker, against the scripted server on another localhost origin (CORS,
// preflights for Idempotency-Key included).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { startScripted } from '../server/scripted.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());
// The page may talk to the scripted server's origin, and to nothing else.
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*") });

test('every fetch scenario passes in a Chromium page and in a Web Worker', { timeout: 60_000 }, async () => {
  const page = await watchedPage(ctx.browser);
  await page.goto(`${ctx.url}/tests/browser/fetch.html?server=${encodeURIComponent(srv.url)}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
  const results = await page.evaluate(() => window.results);
  assert.deepEqual(results.page, []);
  assert.deepEqual(results.worker, []);
  // Failed fetches (resets, aborts) log network errors in the console by design; nothing else may.
  const unexpected = page.problems.filter((p) => !/Failed to load resource|net::ERR_|status of 5\d\d|status of 4\d\d/.test(p));
  assert.deepEqual(unexpected, []);
  await page.close();
});
