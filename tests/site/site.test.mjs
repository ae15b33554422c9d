// The docs site (scripts/site.mjs, what `bash scripts/site.sh` publishes),
// built from the pkg/ already built into a temporary folder and served by a
// plain static server (no routes, no CSP): every page opens in Chromium with
// no console error, every internal link (and #anchor of a rendered page)
// resolves, and axe-core finds no serious or critical violation on the
// rendered pages in light mode, and in dark (and, for the API reference's
// pages, TypeDoc's templates, in light too) on the few pages that together
// use every element and class of their set (a
// page's dark check switches the scheme of the same page: no second load;
// colour contrast, a matter of the stylesheet and axe's costliest rule, is
// checked on those few pages, in both schemes);
// every file is stored by the Service Workers on the first visit, every
// internal URL a page links to is a stored file, and with the server gone a
// page of each kind loads again from their cache (offline after the first
// visit). The pages open one after another in one tab (a profile of its own
// for each installed the workers again, every file fetched: 88 s against 36).
// Run: bash scripts/test.sh js tests/site/ (needs a built pkg/).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { axeViolations, launch, watchedPage } from '../support/browser.mjs';
import { serve } from '../../scripts/serve.mjs';
import { buildSite, MODULES, RENDERED } from '../../scripts/site.mjs';

// The reference's index and each entry's module, named as the entry (`@module wasm-backoff/gate` → wasm-backoff_gate.html).
const API = ['api/index.html', ...MODULES.map((m) => `api/modules/${m.replace('/', '_')}.html`)];

// (built as the file loads: which pages get a dark check follows from what was built)
const ctx = { out: mkdtempSync(path.join(tmpdir(), 'wasm-backoff-site-')) };
try {
  buildSite(ctx.out);
} catch (e) {
  rmSync(ctx.out, { recursive: true, force: true });
  throw e;
}
/** Every internal URL a page links to (without its #anchor) -> its status, fetched once. */
const statuses = new Map();
/** The ids of each rendered page opened, and the #anchors the pages link to: [from, page, id]. */
const ids = new Map();
const anchors = [];

/**
 * The fewest of `pages` (a greedy cover) that together use every element
 * and every class any of them uses: the pages of a set share their
 * stylesheets (docs/site.css; TypeDoc's theme), so a colour that fails in
 * dark mode fails on one of these. (Each scheme of a page costs 1-5 s of
 * axe-core in Chromium.)
 */
function cover(pages) {
  const uses = new Map();
  for (const page of pages) {
    const html = readFileSync(path.join(ctx.out, page), 'utf8');
    const used = new Set([...html.matchAll(/<([a-z][a-z0-9-]*)/g)].map((m) => `<${m[1]}>`));
    for (const [, names] of html.matchAll(/\sclass="([^"]*)"/g)) for (const c of names.split(/\s+/)) if (c) used.add(c);
    uses.set(page, used);
  }
  const left = new Set([...uses.values()].flatMap((u) => [...u]));
  const picked = new Set();
  while (left.size) {
    const gain = (p) => [...uses.get(p)].filter((x) => left.has(x)).length;
    const best = pages.reduce((a, b) => (gain(b) > gain(a) ? b : a));
    picked.add(best);
    for (const x of uses.get(best)) left.delete(x);
  }
  return picked;
}

before(async () => {
  // (axe-core from the server, beside the site: Chromium compiles it once, not once per page)
  const axe = path.dirname(fileURLToPath(import.meta.resolve('axe-core')));
  Object.assign(
    ctx,
    await serve({
      mounts: [
        ['/__axe/', axe],
        ['/', ctx.out],
      ],
      routes: {},
      csp: null,
      // Cacheable, as a static host serves a site: the pages, read one after another in one tab, share
      // their stylesheets and scripts (TypeDoc's, 150 KB), each parsed anew under no-store (the whole
      // file: 60 s of CPU against 50). The offline test's server stays no-store: a page it loads with
      // the server gone comes from the Service Workers, not from the HTTP cache.
      cacheControl: 'max-age=3600',
    }),
  );
  ctx.browser = await launch();
});
after(async () => {
  await ctx.browser?.close();
  await ctx.close?.();
  rmSync(ctx.out, { recursive: true, force: true });
});

/**
 * The one tab the pages open in, one after another, in light mode (a tab of its own for each cost 0.2 s
 * and, each in a new profile, installed the site's Service Workers again: every file fetched anew).
 */
let tab;
/** Opens `page` (a site path) in the tab, checks its links; returns the tab (its `problems`: console errors, page errors, of this page). */
async function open(page) {
  tab ??= await watchedPage(ctx.browser, { viewport: { width: 1100, height: 900 }, colorScheme: 'light' });
  const p = tab;
  p.problems.length = 0;
  await p.emulateMedia({ colorScheme: 'light' });
  const res = await p.goto(`${ctx.url}/${page}`);
  assert.equal(res.status(), 200, page);
  const urls = await p.$$eval('a[href], link[href], script[src], img[src]', (es) => es.map((e) => e.href || e.src));
  const broken = [];
  for (const u of urls) {
    const url = new URL(u);
    if (url.origin !== ctx.url || url.protocol === 'data:') continue;
    const [bare] = u.split('#');
    if (!statuses.has(bare)) statuses.set(bare, (await fetch(bare)).status);
    if (statuses.get(bare) !== 200) broken.push(`${u}: ${statuses.get(bare)}`);
    if (url.hash.length > 1 && url.pathname.endsWith('.html') && !url.pathname.startsWith('/api/'))
      anchors.push([page, url.pathname.slice(1), decodeURIComponent(url.hash.slice(1))]);
  }
  assert.deepEqual(broken, [], `${page}: broken internal links`);
  if (RENDERED.includes(page)) ids.set(page, new Set(await p.$$eval('[id]', (es) => es.map((e) => e.id))));
  return p;
}

/** A call of the demo's scripted endpoint from the page: [status, who answered]. */
const flaky = (page) =>
  page.evaluate(async () => {
    const r = await fetch(`./flaky?id=${crypto.randomUUID()}&script=200`);
    return [r.status, r.headers.get('x-demo-flaky')];
  });

test('the home page is the demo: it loads from the static files with no console error, and links to the docs', {
  timeout: 60_000,
}, async () => {
  const root = await watchedPage(ctx.browser);
  await root.goto(`${ctx.url}/`);
  await root.waitForURL(/\/www\/$/);
  await root.close();
  const page = await open('www/');
  await page.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
  assert.equal(await page.getAttribute('nav[aria-label="Site"] a[href="../docs/index.html"]', 'href'), '../docs/index.html');
  // The live section's endpoint is still the demo's Service Worker (which also stores the site's files here).
  await page.waitForSelector('[data-endpoint="service worker"]');
  assert.deepEqual(await flaky(page), [200, 'service worker']);
  assert.deepEqual(page.problems, []);
});

/**
 * axe-core's serious and critical violations on `p` in light mode, then (`cover`: one of the pages that
 * together use every element and class of the set) in dark mode. Colour contrast is the stylesheet's (the
 * colour of an element or a class): checked on the cover, in both schemes; every other rule on every page.
 */
async function axeSchemes(p, page, cover) {
  const axe = { src: `${ctx.url}/__axe/axe.min.js`, contrast: cover };
  assert.deepEqual(await axeViolations(p, axe), [], `${page} (light)`);
  if (!cover) return;
  await p.emulateMedia({ colorScheme: 'dark' });
  assert.equal(await p.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches), true);
  assert.deepEqual(await axeViolations(p, axe), [], `${page} (dark)`);
}

// Every rendered page has the one stylesheet (docs/site.css): light is checked on each (colour contrast
// on the cover), dark on the cover of their elements and classes (README.html and one or two more).
const DARK = cover(RENDERED);
for (const page of RENDERED) {
  test(`${page}: no console error, internal links resolve, axe-core${DARK.has(page) ? ' light and dark' : ''}`, {
    timeout: 30_000,
  }, async () => {
    const p = await open(page);
    assert.equal(await p.$eval('html', (e) => e.lang), 'en');
    assert.match(await p.title(), /^(.+ — )?wasm-backoff$/);
    assert.equal(await p.locator('h1').count(), 1, 'one h1');
    assert.equal(await p.locator('main').count(), 1, 'one main');
    await axeSchemes(p, page, DARK.has(page));
    assert.deepEqual(p.problems, []);
  });
}

// TypeDoc's pages are its templates filled from types/: axe-core (light and dark) on the cover of their
// elements and classes (the main entry's page and a few), which uses every template part any page uses;
// every page is loaded, its links and its console checked.
const DARK_API = cover(API);
test(`the API reference (TypeDoc over types/): its index and each entry load with no console error; links resolve; axe-core light and dark on ${[...DARK_API].join(', ')}`, {
  timeout: 180_000,
}, async () => {
  for (const page of API) {
    const p = await open(page);
    assert.ok((await p.locator('h1').count()) >= 1, page);
    // The navigation is written by TypeDoc's script: checked once it is there.
    await p.waitForFunction(() => !document.querySelector('#tsd-nav-container')?.textContent.includes('Loading'));
    if (page === 'api/index.html') {
      // Each entry is listed by its name, not "index".
      const listed = await p.$$eval('#tsd-nav-container a', (as) => as.map((a) => a.textContent.trim()));
      assert.deepEqual(listed.filter((t) => t.startsWith('wasm-backoff')).sort(), [...MODULES].sort());
    }
    if (DARK_API.has(page)) await axeSchemes(p, page, true);
    assert.deepEqual(p.problems, [], page);
  }
});

test("the API reference's index says what each module is: a one-line description (its `@module` comment's first paragraph)", () => {
  const index = readFileSync(path.join(ctx.out, 'api/index.html'), 'utf8');
  const rows = [
    ...index.matchAll(/<dt class="tsd-member-summary[^"]*"[^>]*>([\s\S]*?)<\/dt>\s*<dd class="tsd-member-summary[^"]*">([\s\S]*?)<\/dd>/g),
  ];
  const text = (html) =>
    html
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' ')
      .trim();
  const listed = rows.map(([, dt, dd]) => [text(dt), text(dd)]);
  assert.deepEqual(listed.map(([name]) => name).sort(), [...MODULES].sort());
  assert.deepEqual(
    listed.filter(([, about]) => !about).map(([name]) => name),
    [],
    'modules listed with no description: give types/<entry>/index.d.ts a /** … @module */ comment whose first paragraph says what it is',
  );
});

test('every #anchor a rendered page links to is a heading of its target page', () => {
  const missing = anchors.filter(([, to, id]) => ids.has(to) && !ids.get(to).has(id)).map(([from, to, id]) => `${from} -> ${to}#${id}`);
  assert.deepEqual(missing, []);
  assert.ok(anchors.length > 5, 'some anchors checked');
});

test('offline after the first visit: every file is stored, and with the server gone a page of each kind loads from the Service Workers', {
  timeout: 180_000,
}, async () => {
  const { FILES } = await import(pathToFileURL(path.join(ctx.out, 'precache.js')).href);
  const server = await serve({ mounts: [['/', ctx.out]], routes: {}, csp: null });
  const context = await ctx.browser.newContext();
  try {
    // The first visit: the home page (the demo); both workers installed, every file stored.
    const first = await context.newPage();
    await first.goto(`${server.url}/`);
    await first.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
    const stored = await first.evaluate(async () => {
      // (each worker by its path, '/www/sw.js' ends with '/sw.js' too, and activated: a navigation made
      // while the site's worker was installed but not yet active went to the network)
      const on = (r, w) => r.active?.state === 'activated' && new URL(r.active.scriptURL).pathname === w;
      for (const w of ['/sw.js', '/www/sw.js'])
        while (!(await navigator.serviceWorker.getRegistrations()).some((r) => on(r, w))) await new Promise((r) => setTimeout(r, 50));
      const [name] = (await caches.keys()).filter((k) => k.startsWith('wasm-backoff-site-'));
      return (await (await caches.open(name)).keys()).map((r) => new URL(r.url).pathname.slice(1));
    });
    assert.deepEqual(
      FILES.filter((f) => !stored.includes(f)),
      [],
      'stored on install',
    );
    // Every internal URL a page links to (its links, stylesheets, scripts, images) is a stored file.
    const files = new Set(FILES.map((f) => `/${f}`));
    const linked = [...statuses.keys()].map((u) => new URL(u).pathname).map((p) => (p.endsWith('/') ? `${p}index.html` : p));
    assert.ok(linked.length > 50, `${linked.length} internal URLs linked`);
    assert.deepEqual(
      linked.filter((p) => !files.has(p)),
      [],
      'linked, not stored',
    );
    await first.close();
    await server.close();
    // Loaded offline: a page of each kind (what a page loads beyond its links, e.g. TypeDoc's navigation,
    // is the same for its kind), the documents one after another in one tab (what a reader offline does);
    // the demo in a tab of its own each time (its simulations, still running when it closes, end with it).
    const problems = [];
    const watch = (p) => {
      p.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      p.on('pageerror', (e) => problems.push(String(e)));
      p.on('requestfailed', (r) => problems.push(`${r.url()}: ${r.failure()?.errorText}`));
      return p;
    };
    const reader = watch(await context.newPage());
    const kinds = [
      API[0],
      API[1],
      '',
      'www/?preset=aws',
      ...['README.html', 'docs/', 'bench/'].map((d) => RENDERED.find((r) => r.startsWith(d))),
    ];
    for (const page of kinds) {
      const demo = page === '' || page.startsWith('www/');
      const p = demo ? watch(await context.newPage()) : reader;
      problems.length = 0;
      await p.goto(`${server.url}/${page}`);
      if (demo) {
        await p.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
        await p.waitForSelector('[data-endpoint="service worker"]');
        assert.deepEqual(await flaky(p), [200, 'service worker'], 'the live endpoint offline');
      }
      assert.ok((await p.locator('h1').count()) >= 1, `${page} offline`);
      assert.deepEqual(problems, [], `${page} offline`);
      if (demo) await p.close();
    }
    await reader.close();
  } finally {
    await context.close();
    await server.close();
  }
});
