// The demo page end to end in Chromium, under its strict CSP: every preset
// redraws the schedule with the library's own statistics, the full-jitter
// histogram is flat, the storm simulation shows full jitter beating no
// jitter, the live timeline shows the scripted attempts. Screenshots of each
// view go to test-output/ (look at them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { backoffStats } from 'wasm-backoff/stats';
import { serverAndBrowser, watchedPage } from './browser.mjs';

const ctx = serverAndBrowser();
const OUT = 'test-output';
mkdirSync(OUT, { recursive: true });

async function open(query = '') {
  const page = await watchedPage(ctx.browser, { viewport: { width: 1100, height: 900 } });
  await page.goto(`${ctx.url}/www/${query}`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
  return page;
}

const PRESETS = ['gcs', 'aws', 'decorrelated', 'equal', 'grpc', 'ethernet', 'akka', 'flume', 'hadoop'];

test('each preset redraws the schedule with backoffStats values, and the URL keeps the state', { timeout: 60_000 }, async () => {
  const page = await open();
  for (const preset of PRESETS) {
    await page.selectOption('select[name=preset]', preset);
    const stats = JSON.parse(await page.$eval('#schedule', (e) => e.dataset.stats));
    assert.ok(stats.length >= 1, preset);
    for (const s of stats) {
      const want = backoffStats({ preset, seed: 42 }, s.n);
      for (const k of ['min', 'max', 'p50', 'p90', 'mean']) {
        // Exact laws agree to the bit; sampled ones (decorrelated) come from the same seeded draws.
        assert.ok(Math.abs(s[k] - want[k]) <= 1e-9 * Math.max(1, want.max), `${preset} retry ${s.n} ${k}: ${s[k]} vs ${want[k]}`);
      }
    }
    assert.match(page.url(), new RegExp(`preset=${preset}`));
    if (preset === 'gcs') await page.screenshot({ path: `${OUT}/demo-schedule-gcs.png`, fullPage: false });
  }
  // A shared URL restores the view.
  const shared = await open('?preset=grpc&retries=8&log=1');
  assert.equal(await shared.$eval('select[name=preset]', (e) => e.value), 'grpc');
  assert.equal(JSON.parse(await shared.$eval('#schedule', (e) => e.dataset.stats)).length, 8);
  // A bad value shows the library's own message instead of breaking the page.
  await shared.fill('input[name=baseMs]', '-5');
  assert.equal(await shared.$eval('#error', (e) => e.textContent), 'RangeError: baseMs must be a finite number >= 0');
  assert.deepEqual([...page.problems, ...shared.problems], []);
  await page.close();
  await shared.close();
});

test('the full-jitter histogram is flat within tolerance; equal jitter too', { timeout: 30_000 }, async () => {
  const page = await open('?jitter=full&hist=4');
  const counts = JSON.parse(await page.$eval('#distribution', (e) => e.dataset.counts));
  const mean = counts.reduce((a, b) => a + b, 0) / counts.length;
  assert.equal(
    counts.reduce((a, b) => a + b, 0),
    100_000,
  );
  // 2000 per bin expected; 5 standard deviations is ~225.
  assert.ok(
    counts.every((c) => Math.abs(c - mean) < 250),
    `not flat: ${counts}`,
  );
  assert.equal(await page.$eval('#distribution', (e) => e.dataset.uniform), 'true', 'exact density drawn');
  await page.locator('#distribution').screenshot({ path: `${OUT}/demo-histogram-full.png` });
  await page.close();
});

test('the retry storm for N = 50: full jitter makes fewer calls than no jitter', { timeout: 120_000 }, async () => {
  const page = await open();
  await page.click('#storm-run');
  await page.waitForSelector('#storm[data-done="1"]', { timeout: 110_000 });
  const r = JSON.parse(await page.$eval('#storm', (e) => e.dataset.results));
  const at50 = (name) => r[name].find((p) => p.n === 50);
  assert.ok(at50('full jitter').calls < at50('exponential').calls, 'full jitter < exponential without jitter');
  assert.ok(at50('full jitter').calls < at50('no backoff').calls, 'full jitter < no backoff');
  await page.locator('#storm').screenshot({ path: `${OUT}/demo-storm.png` });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the live timeline shows the scripted attempts, and abort works', { timeout: 60_000 }, async () => {
  const page = await open('?baseMs=50&maxDelayMs=100');
  await page.selectOption('#live-script', '503,503,200');
  await page.click('#live-run');
  await page.waitForSelector('#live[data-done="1"]', { timeout: 30_000 });
  assert.equal(await page.$eval('#live', (e) => e.dataset.attempts), '3');
  assert.match(await page.$eval('#live-log', (e) => e.textContent), /resolved: 200 after 3 attempts/);
  await page.locator('#live').screenshot({ path: `${OUT}/demo-live.png` });
  await page.selectOption('#live-script', '503');
  await page.click('#live-run');
  await page.waitForFunction(() => document.querySelectorAll('#live-log li').length >= 1, null, { timeout: 10_000 });
  await page.click('#live-abort');
  await page.waitForSelector('#live[data-done="1"]', { timeout: 10_000 });
  assert.match(await page.$eval('#live-log', (e) => e.textContent), /rejected: AbortError/);
  // Failed attempts log their HTTP errors in the console by design; nothing else may.
  assert.deepEqual(
    page.problems.filter((p) => !/status of 503|Failed to load resource/.test(p)),
    [],
  );
  await page.screenshot({ path: `${OUT}/demo-full.png`, fullPage: true });
  await page.close();
});
