// The demo page loads under its strict CSP without console errors and shows
// each preset's seeded schedule, equal to what the package computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { Backoff } from 'wasm-backoff';
import { serverAndBrowser, watchedPage } from './browser.mjs';

const ctx = serverAndBrowser();

test('demo page: every preset drawn with the library\'s own numbers, no console error', async () => {
  const page = await watchedPage(ctx.browser, { viewport: { width: 1100, height: 900 } });
  await page.goto(`${ctx.url}/`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
  const shown = await page.$$eval('section[data-preset]', (s) => s.map((e) => [e.dataset.preset, JSON.parse(e.dataset.delays)]));
  assert.equal(shown.length, 9);
  for (const [preset, delays] of shown) {
    const b = new Backoff({ preset, seed: 42 });
    assert.deepEqual(delays, delays.map(() => b.next() ?? null), preset);
  }
  mkdirSync('test-output', { recursive: true });
  await page.screenshot({ path: 'test-output/demo.png', fullPage: true });
  assert.deepEqual(page.problems, []);
  await page.close();
});
