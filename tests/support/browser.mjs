// Launching Debian's Chromium through playwright-core (never a downloaded
// browser), with the flags this sandbox needs.
import { before, after } from 'node:test';
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { serve } from '../../scripts/serve.mjs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
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
/** axe-core's serious and critical violations on the page (axe-core from npm, evaluated in the page). */
export async function axeViolations(page) {
  axeSource ??= readFileSync(new URL(import.meta.resolve('axe-core')), 'utf8');
  await page.evaluate(axeSource);
  const found = await page.evaluate(() => globalThis.axe.run(document, { resultTypes: ['violations'] }));
  return found.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
