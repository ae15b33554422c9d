// Hedging and failover in headless Chromium: the runtime smokes of
// hedge-checks.mjs in a page, against two scripted servers (two more
// origins: CORS and the Authorization preflight included). What only a
// browser shows: a hedge skips the HTTP cache (its lock would hold it until
// the first answered), a loser's connection closes, a retry built for
// another origin from a page's Request. Outcomes and order only; the timing
// logic is hedge.node.test.mjs's, on virtual time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { startScripted } from '../server/scripted.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';

let sa, sb;
before(async () => {
  [sa, sb] = await Promise.all([startScripted(), startScripted()]);
});
after(() => Promise.all([sa?.close(), sb?.close()]));
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*") });

test('the hedging and failover smokes pass in a Chromium page', { timeout: 60_000 }, async () => {
  const page = await watchedPage(ctx.browser);
  const q = new URLSearchParams({ a: sa.url, b: sb.url });
  await page.goto(`${ctx.url}/tests/browser/hedge.html?${q}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
  assert.deepEqual(await page.evaluate(() => window.results), []);
  // Failed and aborted fetches log network errors in the console by design; nothing else may.
  const unexpected = page.problems.filter((p) => !/Failed to load resource|net::ERR_|status of 5\d\d|status of 4\d\d/.test(p));
  assert.deepEqual(unexpected, []);
  await page.close();
});
