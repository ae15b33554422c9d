// The demo page in Chromium: what costs CPU and is timed by nothing, in a
// file of its own (one of the longest, started first by scripts/test.sh):
// axe-core, every section on screen in light and dark mode and on a phone,
// the keyboard, and every control change redrawing without an error. The
// views' values are checked in tests/demo/demo.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { axeViolations, serverAndBrowser, watchedPage } from '../support/browser.mjs';
import { changes as controlChanges } from '../../bench/demo.mjs';
import { opener, shot, startCall, allDone } from './page.mjs';

const ctx = serverAndBrowser();
const open = opener(ctx);

const SECTIONS = ['controls', 'schedule', 'distribution', 'storm', 'lanes', 'outage', 'overload', 'live', 'code'];
/** The sections of `page` that are not on screen: hidden, of no size, or reaching past the page's width. */
const offScreen = (page) =>
  page.evaluate(
    (ids) =>
      ids.filter((id) => {
        const e = document.getElementById(id);
        const r = e?.getBoundingClientRect();
        return !e || !r || !e.checkVisibility() || r.width === 0 || r.height === 0 || r.left < 0 || r.right > innerWidth + 0.5;
      }),
    SECTIONS,
  );
/** A page with every section drawn: a small outage, the swimlanes mid-run, one live call done. */
async function everything(viewport) {
  const page = await watchedPage(ctx.browser, { viewport, colorScheme: 'light' });
  await page.goto(`${ctx.url}/www/?preset=decorrelated&C=20&K=5&T=2&runs=2`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 60_000 });
  // (each view simulated once its section comes near the screen)
  await page.locator('#storm').scrollIntoViewIfNeeded();
  await page.waitForSelector('#storm[data-done="1"]', { timeout: 60_000 });
  await page.waitForSelector('#lanes[data-ready="1"]', { timeout: 60_000 });
  await page.locator('#outage').scrollIntoViewIfNeeded();
  await page.waitForSelector('#outage[data-done="1"]', { timeout: 60_000 });
  await page.locator('#overload').scrollIntoViewIfNeeded();
  await page.waitForSelector('#overload[data-done="1"]', { timeout: 60_000 });
  await page.$eval('#lane-scrub', (e) => {
    e.value = '700';
    e.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await startCall(page, '429ra1,200');
  await allDone(page);
  return page;
}

test('polish: axe-core finds no serious or critical violation, light and dark; every section on screen; readable log ticks; phone width; keyboard', {
  timeout: 240_000,
}, async () => {
  // Light, then dark on the same page: the charts are coloured by the stylesheet's scheme, and the
  // swimlanes' canvas redraws when the scheme changes (as when a user switches the system's mode).
  const page = await everything({ width: 1100, height: 900 });
  for (const scheme of ['light', 'dark']) {
    if (scheme === 'dark') await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), scheme === 'dark');
    assert.deepEqual(await axeViolations(page), [], `${scheme} mode`);
    const suffix = scheme === 'dark' ? '-dark' : '';
    assert.deepEqual(await offScreen(page), [], `${scheme} mode: sections not on screen`);
    for (const id of SECTIONS) await shot(page.locator(`#${id}`), `demo-section-${id}${suffix}`);
    await shot(page, `demo-full${suffix}`, { fullPage: true });
  }
  assert.deepEqual(
    page.problems.filter((p) => !/status of (503|429)|Failed to load resource/.test(p)),
    [],
  );
  await page.close();
  // A phone: nothing wider than the screen.
  const phone = await everything({ width: 390, height: 844 });
  assert.deepEqual(await phone.evaluate(() => [document.documentElement.scrollWidth, innerWidth]), [390, 390]);
  assert.deepEqual(await offScreen(phone), [], 'phone: sections not on screen');
  await shot(phone, 'demo-phone', { fullPage: true });
  for (const id of SECTIONS) await shot(phone.locator(`#${id}`), `demo-phone-${id}`);
  await phone.close();
  // Log-scale ticks are round values with units: 1 ms, 10 ms, 100 ms, 1 s, 10 s (and 2, 5 between on a short span).
  const logs = await open('?log=1&retries=12&b.preset=ethernet');
  const ticks = await logs.$$eval('#schedule-chart .axis text[text-anchor="end"]', (ts) => ts.map((t) => t.textContent));
  assert.ok(ticks.length >= 4, String(ticks));
  for (const t of ticks) assert.match(t, /^(1|2|5|10|20|50|100|200|500) (µs|ms|s)$/, `log tick ${t}`);
  assert.ok(ticks.includes('1 ms') && ticks.includes('1 s'), String(ticks));
  await shot(logs.locator('#schedule'), 'demo-schedule-log');
  // The keyboard alone: a preset by arrow key, the swimlanes stepped and scrubbed.
  await logs.focus('select[name="preset"]');
  await logs.keyboard.press('ArrowDown');
  assert.equal(await logs.$eval('select[name="preset"]', (e) => e.value), 'gcs');
  assert.match(logs.url(), /preset=gcs/);
  await logs.locator('#lanes').scrollIntoViewIfNeeded();
  await logs.waitForSelector('#lanes[data-ready="1"]');
  await logs.focus('#lane-step');
  await logs.keyboard.press('Enter');
  assert.ok(Number(await logs.$eval('#lanes', (e) => e.dataset.now)) > 0);
  await logs.focus('#lane-scrub');
  await logs.keyboard.press('End');
  assert.equal(await logs.$eval('#lane-scrub', (e) => e.value), '1000');
  assert.match(await logs.$eval('#lane-scrub', (e) => e.getAttribute('aria-valuetext')), /^(.+) of \1$/);
  await logs.close();
});

test('every control change redraws the charts, without an error (how fast: bench/demo.mjs)', {
  timeout: 240_000,
}, async () => {
  const page = await open();
  // (the simulations of the first load done: what is measured is a control change)
  await page.locator('#storm').scrollIntoViewIfNeeded();
  await page.waitForSelector('#storm[data-done="1"]', { timeout: 60_000 });
  await page.locator('#outage').scrollIntoViewIfNeeded();
  await page.waitForSelector('#outage[data-done="1"]', { timeout: 60_000 });
  await page.evaluate(() => performance.clearMeasures('redraw'));
  // Control changes of the default views: presets of A and B, numbers typed, jitter, the view.
  const changes = controlChanges();
  for (const [sel, v] of changes) {
    if (sel.startsWith('select')) await page.selectOption(sel, v);
    else await page.fill(sel, v);
  }
  await page.click('input[name="log"]');
  const redraws = await page.evaluate(() => performance.getEntriesByName('redraw').map((e) => e.duration));
  assert.ok(redraws.length >= changes.length, `${redraws.length} redraws for ${changes.length} changes`);
  assert.deepEqual(page.problems, []);
  await page.close();
});
