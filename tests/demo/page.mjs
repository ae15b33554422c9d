// What the demo's tests share (tests/demo/demo.test.mjs, the live calls,
// and demo-models.test.mjs and demo-polish.test.mjs, CPU-bound and timed by
// nothing, which start first in scripts/test.sh's queue, the longest files).
import { mkdirSync } from 'node:fs';
import { watchedPage } from '../support/browser.mjs';
import { WAITING } from '../../www/near.js';

/** Where the screenshots go (look at them), when asked for: SCREENSHOTS=1. */
const OUT = 'test-output';

/**
 * Saves a screenshot of `target` (a page or a locator) as test-output/`name`.png, when SCREENSHOTS is
 * set (`SCREENSHOTS=1 bash scripts/test.sh js tests/demo/`): they are for a person to look at and assert
 * nothing, and each costs CPU (software rendering, PNG encoding): the 30 of the demo's tests took
 * ~20 s of CPU of every `npm test`.
 * @param {{ screenshot(o: object): Promise<unknown> }} target
 * @param {string} name
 * @param {object} [options] Playwright's screenshot options (fullPage…)
 */
export async function shot(target, name, options = {}) {
  if (!process.env.SCREENSHOTS) return;
  mkdirSync(OUT, { recursive: true });
  await target.screenshot({ ...options, path: `${OUT}/${name}.png` });
}

/**
 * `query` (a URL query, '' or '?…') with the outage view at its smallest (1
 * call, a 100 ms outage, 1 run) unless it names a point: every load of the
 * page starts the outage simulation, and its default view (the benchmark's
 * first point, 10 runs of 2 000 calls per policy) costs over a minute of CPU
 * on a loaded machine: no test waits for it (demo-models.test.mjs checks one
 * run of that point in the page, and the ten against bench/OUTAGE.md in
 * Node); the other pages would run it beside their checks.
 */
export function smallOutage(query = '') {
  const q = new URLSearchParams(query);
  const small = { C: '1', K: '1', T: '0.1', runs: '1' };
  if (!Object.keys(small).some((k) => q.has(k))) for (const [k, v] of Object.entries(small)) q.set(k, v);
  return `?${q}`;
}

/**
 * `open(query, viewport)`: the demo page of `ctx` (serverAndBrowser's), once
 * it is ready; its outage view the smallest (smallOutage) unless `query`
 * names a point.
 */
export const opener = (ctx) =>
  async function open(query = '', viewport = { width: 1100, height: 900 }) {
    const page = await watchedPage(ctx.browser, { viewport });
    await page.goto(`${ctx.url}/www/${smallOutage(query)}`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
    return page;
  };

/**
 * The demo's views simulated once their section comes near the screen (www/near.js): the section, its
 * status (WAITING until then), and its data attribute set once drawn.
 */
const LAZY = [
  ['storm', 'verdict', 'done'],
  ['lanes', 'lane-status', 'ready'],
  ['outage', 'outage-status', 'done'],
  ['overload', 'overload-status', 'done'],
  ['reconnect', 'reconnect-status', 'done'],
];

/**
 * Brings the live section into view, then waits until every view this brought near the screen has been
 * drawn. They grow as they draw: the reconnect view just above it by ~390 px, of which ~75 moved the
 * live controls on screen 0.4-0.7 s after the scroll, under a click: the steered test once found the
 * failover call in the second call's lane (1 failure in ~25 full runs since that view became lazy).
 */
export async function liveInView(page) {
  await page.locator('#live').scrollIntoViewIfNeeded();
  // (an IntersectionObserver reports a frame after the scroll: two frames, and its callback has run)
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))));
  await page.waitForFunction(
    ([lazy, waiting]) =>
      lazy.every(([id, status, key]) => {
        const said = document.getElementById(status)?.textContent;
        return document.getElementById(id)?.dataset[key] === '1' || said === waiting;
      }),
    [LAZY, WAITING],
    { timeout: 60_000 },
  );
}

/**
 * Sets up the next live call (`script`, policy `name`, `steer`: '', 'hedge', 'failover') without
 * starting it: the live section reads them at the click, so a call whose start must fall in a window
 * (an outage) has only that click in it. The live section is brought into view first, and the page
 * left to settle (liveInView).
 */
export async function setCall(page, script, name = 'A', steer = '') {
  await liveInView(page);
  await page.selectOption('#live-script', script);
  await page.selectOption('#live-policy', name);
  await page.selectOption('#live-steer', steer);
}

/** Starts a live call (setCall, then the click). */
export async function startCall(page, script, name = 'A', steer = '') {
  await setCall(page, script, name, steer);
  await page.click('#live-run');
}
export const allDone = (page) =>
  page.waitForFunction(() => [...document.querySelectorAll('#live-lanes li')].every((l) => l.dataset.done === '1'), null, {
    timeout: 20_000,
  });
