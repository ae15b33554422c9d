// What the demo's tests share (tests/demo/demo.test.mjs, the live calls,
// and demo-models.test.mjs and demo-polish.test.mjs, CPU-bound and timed by
// nothing, which run in the niced runner beside the rest: scripts/test.sh).
import { mkdirSync } from 'node:fs';
import { watchedPage } from '../support/browser.mjs';

/** Where the screenshots go (look at them). */
export const OUT = 'test-output';
mkdirSync(OUT, { recursive: true });

/** `open(query, viewport)`: the demo page of `ctx` (serverAndBrowser's), once it is ready. */
export const opener = (ctx) =>
  async function open(query = '', viewport = { width: 1100, height: 900 }) {
    const page = await watchedPage(ctx.browser, { viewport });
    await page.goto(`${ctx.url}/www/${query}`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
    return page;
  };

/** Starts a live call with `script` under policy `name`, steered by `steer` ('', 'hedge', 'failover'). */
export async function startCall(page, script, name = 'A', steer = '') {
  await page.selectOption('#live-script', script);
  await page.selectOption('#live-policy', name);
  await page.selectOption('#live-steer', steer);
  await page.click('#live-run');
}
export const allDone = (page) =>
  page.waitForFunction(() => [...document.querySelectorAll('#live-lanes li')].every((l) => l.dataset.done === '1'), null, {
    timeout: 20_000,
  });
