// The waits the outcome chooses (tests/fetch/waits-checks.mjs) in a headless
// Chromium page, against the scripted server on another localhost origin.
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

test('every wait scenario passes in a Chromium page', { timeout: 60_000 }, async () => {
  const page = await watchedPage(ctx.browser);
  await page.goto(`${ctx.url}/tests/browser/waits.html?server=${encodeURIComponent(srv.url)}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
  assert.deepEqual(await page.evaluate(() => window.results), []);
  // Failed fetches (a hung attempt's timeout, 4xx/5xx answers) log in the console by design; nothing else may.
  const unexpected = page.problems.filter((p) => !/Failed to load resource|net::ERR_|status of 5\d\d|status of 4\d\d/.test(p));
  assert.deepEqual(unexpected, []);
  await page.close();
});
