// wasm-backoff/sse and /ws in a Chromium page (the package's browser entries,
// under the strict CSP), against the live server on another 127.0.0.1 origin:
// the shared checks (tests/sse/live-checks.mjs) with Chromium's own fetch
// and WebSocket.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { startLive } from '../server/live.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';

let live;
before(async () => {
  live = await startLive();
});
after(() => live?.close());
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:* ws://127.0.0.1:*") });

test('the shared EventSource and WebSocket checks pass in a Chromium page', { timeout: 60_000 }, async () => {
  const page = await watchedPage(ctx.browser);
  await page.goto(`${ctx.url}/tests/browser/live.html?url=${encodeURIComponent(live.url)}&ws=${encodeURIComponent(live.wsUrl)}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
  assert.deepEqual(await page.evaluate(() => window.results), []);
  // Refused and failed requests log network errors in the console by design; nothing else may.
  const unexpected = page.problems.filter((p) => !/Failed to load resource|net::ERR_|status of [45]\d\d|WebSocket connection/.test(p));
  assert.deepEqual(unexpected, []);
  await page.close();
});
