// Chromium for the test files (tests/support/chromium.mjs: how it is
// launched), their static server, pages that record console errors, axe-core.
import { before, after } from 'node:test';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';
import { SHARED, launchOptions } from './chromium.mjs';
import { until } from './wait.mjs';

export { CHROMIUM } from './chromium.mjs';

/**
 * Chromium for a test file: the browser scripts/run-tests.mjs shares between the files it runs (each
 * file's pages in contexts of their own, closed when it disconnects), else (or should that browser be
 * gone) one of the file's own.
 */
export function launch() {
  const own = () => chromium.launch(launchOptions());
  return SHARED ? chromium.connect(SHARED).catch(own) : own();
}

/**
 * Registers before/after hooks that start the static server and Chromium for
 * the calling test file; the returned object is filled in before the tests run.
 */
export function serverAndBrowser(serveOptions) {
  const ctx = {};
  before(async () => {
    Object.assign(ctx, await serve(serveOptions));
    ctx.browser = await launch();
  });
  after(async () => {
    await ctx.browser?.close();
    ctx.server?.close();
  });
  return ctx;
}

/** A new page that records console errors and uncaught exceptions in `page.problems`. */
export async function watchedPage(browser, options) {
  const page = await browser.newPage(options);
  page.problems = [];
  page.on('console', (m) => m.type() === 'error' && page.problems.push(m.text()));
  page.on('pageerror', (e) => page.problems.push(String(e)));
  return page;
}

let axeSource;
/**
 * axe-core's serious and critical violations on `page`. `src`: a URL the
 * page can load axe from (a script Chromium caches, compiled once: a page
 * given the source to evaluate parses its 500 KB each time, 0.5-0.8 s);
 * `contrast: false` leaves out color-contrast, its costliest rule (most of
 * a run), for a page whose elements and classes another page checks.
 * @param {import('playwright-core').Page} page
 * @param {{ src?: string, contrast?: boolean }} [options]
 */
export async function axeViolations(page, { src, contrast = true } = {}) {
  if (src) await page.addScriptTag({ url: src });
  else await page.evaluate((axeSource ??= readFileSync(new URL(import.meta.resolve('axe-core')), 'utf8')));
  const rules = contrast ? {} : { 'color-contrast': { enabled: false } };
  const found = await page.evaluate((rules) => globalThis.axe.run(document, { resultTypes: ['violations'], rules }), rules);
  return found.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/**
 * Fires Background Sync's `sync` event with `tag` at the Service Worker
 * registered for `scope`, through the DevTools protocol (as the browser
 * would when connectivity returns); `page` is any page of the context, from
 * which the protocol is reached. Resolves once the event is dispatched.
 */
export async function dispatchSync(context, page, { origin, scope, tag }) {
  const cdp = await context.newCDPSession(page);
  const registrations = [];
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => registrations.push(...e.registrations));
  await cdp.send('ServiceWorker.enable');
  const reg = await until('the worker registration', () => registrations.find((r) => r.scopeURL === scope && !r.isDeleted));
  await cdp.send('ServiceWorker.dispatchSyncEvent', { origin, registrationId: reg.registrationId, tag, lastChance: false });
  await cdp.detach();
}
