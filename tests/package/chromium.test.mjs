// The package in a real Chromium page served with a strict CSP
// (script-src 'self' 'wasm-unsafe-eval'): plain <script type="module">.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';

const ctx = serverAndBrowser();

test('a module script imports the package under a strict CSP and every check passes', async () => {
  const page = await watchedPage(ctx.browser);
  const res = await page.goto(`${ctx.url}/tests/browser/`);
  assert.match(res.headers()['content-security-policy'], /script-src 'self' 'wasm-unsafe-eval'/);
  await page.waitForSelector('body[data-done="1"]', { timeout: 20_000 });
  const results = await page.evaluate(() => window.results);
  assert.deepEqual(results.golden, [], 'Chromium schedules equal native Rust');
  assert.deepEqual(results.validation, []);
  assert.deepEqual(results.semantics, []);
  assert.deepEqual(page.problems, [], 'no console errors');
  await page.close();
});
