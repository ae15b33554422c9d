// Hedging and failover in headless Chromium: the shared scenarios in a page,
// against three scripted servers (three more origins: CORS, preflights for
// the Idempotency-Key and Authorization included).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { startScripted } from '../server/scripted.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';

let sa, sb, sc;
before(async () => {
  [sa, sb, sc] = await Promise.all([startScripted(), startScripted(), startScripted()]);
});
after(() => Promise.all([sa?.close(), sb?.close(), sc?.close()]));
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*") });

test('every hedging and failover scenario passes in a Chromium page', { timeout: 60_000 }, async () => {
  const page = await watchedPage(ctx.browser);
  const q = new URLSearchParams({ a: sa.url, b: sb.url, c: sc.url });
  await page.goto(`${ctx.url}/tests/browser/hedge.html?${q}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
  assert.deepEqual(await page.evaluate(() => window.results), []);
  // Failed and aborted fetches log network errors in the console by design; nothing else may.
  const unexpected = page.problems.filter((p) => !/Failed to load resource|net::ERR_|status of 5\d\d|status of 4\d\d/.test(p));
  assert.deepEqual(unexpected, []);
  await page.close();
});
