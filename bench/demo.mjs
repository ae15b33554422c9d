// The demo's speed in Chromium (Debian's, through playwright-core): a
// control change's redraw, and the first load against the same page with no
// script, module or wasm (the charts empty). Measured here, not in
// tests/demo/ (tests assert behaviour, never timing).
//
//   node bench/demo.mjs [rounds]     prints a markdown table (default 5 rounds)
//
// Redraw: every control change of the default views (presets, jitters,
// numbers typed, the view), timed by the page's own `redraw` measures.
// Loads: to the page's `ready` mark (every module, both wasm modules
// compiled, the charts drawn) in a fresh page, and the empty page to its
// load event; `rounds` of each, interleaved, medians.
import { fileURLToPath } from 'node:url';
import { launch, watchedPage } from '../tests/support/browser.mjs';
import { serve } from '../scripts/serve.mjs';
import { PRESETS } from '../js/gen/boundary.js';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))];
const VIEW = { viewport: { width: 1100, height: 900 } };

/** The control changes of the default views: [selector, value]. */
export function changes() {
  const c = [];
  for (const p of PRESETS) c.push(['select[name="preset"]', p], ['select[name="b.preset"]', p]);
  for (const j of ['none', 'full', 'equal', '']) c.push(['select[name="jitter"]', j], ['select[name="b.jitter"]', j]);
  for (const v of ['50', '200', '1000', '']) c.push(['input[name="baseMs"]', v], ['input[name="b.maxDelayMs"]', v ? String(+v * 20) : '']);
  for (const v of ['4', '8', '24', '']) c.push(['input[name="retries"]', v], ['input[name="hist"]', v ? String(+v / 4) : '']);
  return c;
}

/** The redraw durations (ms) of one pass over every control change. */
async function redraws(browser, url) {
  const page = await watchedPage(browser, VIEW);
  await page.goto(`${url}/www/`);
  await page.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
  // (the first load's simulations finished: what is measured is a control change)
  for (const id of ['storm', 'outage']) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded(); // (simulated once near the screen)
    await page.waitForSelector(`#${id}[data-done="1"]`, { state: 'attached', timeout: 180_000 });
  }
  await page.evaluate(() => performance.clearMeasures('redraw'));
  for (const [sel, v] of changes()) {
    if (sel.startsWith('select')) await page.selectOption(sel, v);
    else await page.fill(sel, v);
  }
  await page.click('input[name="log"]');
  const d = await page.evaluate(() => performance.getEntriesByName('redraw').map((e) => e.duration));
  if (page.problems.length) throw new Error(`the demo logged errors: ${page.problems.join('; ')}`);
  await page.close();
  return d;
}

/** One first load to `ready` and one empty load to its load event, in ms. */
async function loads(browser, url) {
  const p = await watchedPage(browser, VIEW);
  await p.goto(`${url}/www/`);
  await p.waitForSelector('body[data-ready="1"]', { timeout: 30_000 });
  const full = await p.evaluate(() => performance.getEntriesByName('ready')[0].startTime);
  await p.close();
  const e = await watchedPage(browser, VIEW);
  await e.route(/\.(js|wasm)$/, (r) => r.abort());
  await e.goto(`${url}/www/`, { waitUntil: 'load' });
  const empty = await e.evaluate(() => performance.getEntriesByType('navigation')[0].loadEventEnd);
  await e.close();
  return { full, empty };
}

/** Runs the measures; returns the markdown lines. */
export async function demoSection({ rounds = 5, log = () => {} } = {}) {
  const srv = await serve();
  const browser = await launch();
  try {
    const r = await redraws(browser, srv.url);
    const full = [];
    const empty = [];
    for (let i = 0; i < rounds; i++) {
      const l = await loads(browser, srv.url);
      full.push(l.full);
      empty.push(l.empty);
      log(`demo load ${i + 1}/${rounds}: ${l.full.toFixed(1)} ms, empty ${l.empty.toFixed(1)} ms`);
    }
    const f = (x) => x.toFixed(1);
    return [
      '| measure | median ms | p95 ms | max ms | ratio of medians | median of per-round ratios |',
      '|---|---:|---:|---:|---:|---:|',
      `| redraw per control change (${r.length} redraws) | ${f(median(r))} | ${f(p95(r))} | ${f(Math.max(...r))} | — | — |`,
      `| first load: every module, both wasm modules, the charts drawn | ${f(median(full))} | — | ${f(Math.max(...full))} | ${(median(full) / median(empty)).toFixed(2)} | ${median(full.map((x, i) => x / empty[i])).toFixed(2)} |`,
      `| the same page with no script, module or wasm (its load event) | ${f(median(empty))} | — | ${f(Math.max(...empty))} | 1.00 | 1.00 |`,
      '',
      `One pass over ${r.length} control changes of the default views in one page (after its simulations finished), then ${rounds} fresh pages of each load, interleaved, in one Chromium; files from scripts/serve.mjs on 127.0.0.1 (the demo's CSP). Ratios: the first load to the empty page's, of the medians and (steadier on a busy machine: each round's two loads run back to back) the median of each round's ratio. The target (issue 28): ≤ 1.5×.`,
    ];
  } finally {
    await browser.close();
    srv.server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lines = await demoSection({ rounds: Number(process.argv[2] ?? 5), log: (m) => console.error(m) });
  console.log(lines.join('\n'));
}
