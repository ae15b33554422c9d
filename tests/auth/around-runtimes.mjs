// The runtime tests of a feature around the retry: its smokes
// (tests/<feature>/<feature>-checks.mjs) in a Chromium page
// (tests/browser/around.html: the package as a page imports it, the
// scripted server on another origin: CORS, Authorization's preflight) and
// in workerd (tests/workerd/around.mjs: workerd's fetch and Cache API).
// Outcomes only: the timing logic is each feature's Node test's, on
// virtual time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { CSP } from '../../scripts/serve.mjs';
import { startScripted } from '../server/scripted.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';
import { workerOptions } from '../support/workerd.mjs';

/** Registers the page test of `feature` ('auth', 'dedupe', 'cache', 'quota') in the calling test file. */
export function pageTest(feature) {
  let srv;
  before(async () => {
    srv = await startScripted();
  });
  after(() => srv?.close());
  const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*") });

  test(`the ${feature} smokes pass in a Chromium page`, { timeout: 60_000 }, async () => {
    const page = await watchedPage(ctx.browser);
    const q = new URLSearchParams({ feature, a: srv.url });
    await page.goto(`${ctx.url}/tests/browser/around.html?${q}`);
    await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
    assert.deepEqual(await page.evaluate(() => window.results), []);
    // Failed and aborted fetches log network errors in the console by design; nothing else may.
    const unexpected = page.problems.filter((p) => !/Failed to load resource|net::ERR_|status of [45]\d\d/.test(p));
    assert.deepEqual(unexpected, []);
    await page.close();
  });
}

/** Registers the workerd test of `feature` in the calling test file. */
export function workerTest(feature) {
  let mf, srv;
  before(async () => {
    srv = await startScripted();
    mf = new Miniflare(workerOptions('around.mjs', { A: srv.url }));
  });
  after(async () => {
    await mf?.dispose();
    await srv?.close();
  });

  test(`the ${feature} smokes pass inside workerd`, { timeout: 60_000 }, async () => {
    const res = await mf.dispatchFetch(`http://worker.test/?feature=${feature}`);
    assert.deepEqual(await res.json(), []);
  });
}
