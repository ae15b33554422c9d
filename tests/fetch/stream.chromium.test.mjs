// `wasm-backoff/stream` in headless Chromium: the shared stream scenarios
// in a page, against the scripted server on another localhost origin.
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
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*") });

test('every stream scenario passes in a Chromium page', { timeout: 60_000 }, async () => {
  const page = await watchedPage(ctx.browser);
  await page.goto(`${ctx.url}/tests/browser/stream.html?server=${encodeURIComponent(srv.url)}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
  assert.deepEqual(await page.evaluate(() => window.results), []);
  await page.close();
});
