// The task queue's browser wake-ups in real headless Chromium, delivering to
// the scripted server (tests/server/scripted.mjs, another origin): a page
// enqueues while the origin is down and closes, and its Service Worker
// replays the task on Background Sync's `sync` event (dispatched through the
// DevTools protocol, as the browser would when connectivity returns); the
// `online` event wakes a queue sleeping out a long retry delay; the page
// becoming visible wakes one that does not know of a task another tab
// stored; stop() leaves no listener. Pages: tests/browser/outbox.*. Real
// time, outcomes and order only: the wake-ups' exact times are
// queue.node.test.mjs's, in virtual time.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP, serve } from '../../scripts/serve.mjs';
import { startScripted } from '../server/scripted.mjs';
import { until } from '../support/wait.mjs';
import { launch, dispatchSync } from '../support/browser.mjs';

let srv, site, browser;
let up = false;
/** Every /deliver request: { id, by, ok, at }. */
const deliveries = [];
before(async () => {
  srv = await startScripted();
  srv.script('/deliver', (req) => {
    const u = new URL(req.url, 'http://x');
    deliveries.push({ id: u.searchParams.get('id'), by: u.searchParams.get('by'), ok: up, at: Date.now() });
    return { status: up ? 200 : 503 };
  });
  // The package's strict policy, allowing fetches to the scripted origin too.
  site = await serve({ csp: () => CSP.replace("connect-src 'self'", `connect-src 'self' ${srv.url}`) });
  browser = await launch();
});
after(async () => {
  await browser?.close();
  site?.server.close();
  await srv?.close();
});

/** The outbox page of `context` (?sw=1: with its Service Worker), ready. */
async function outbox(context, { sw }) {
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(String(e)));
  await page.goto(`${site.url}/tests/browser/outbox.html?sw=${sw ? 1 : 0}&origin=${encodeURIComponent(srv.url)}`);
  await page.waitForSelector('body[data-ready="1"]');
  return page;
}

const record = (page, id) => page.evaluate((id) => window.ob.list().then((l) => l.find((r) => r.id === id)), id);
const processed = (page, id) =>
  until(`${id} processed`, async () => {
    const r = await record(page, id);
    return r?.state === 'processed' && r;
  });

/** Runs `fn(context)` in a fresh browser context (its own origin storage), closed afterwards. */
async function inContext(fn) {
  const context = await browser.newContext();
  try {
    await fn(context);
  } finally {
    await context.close();
  }
}

/** The outbox page with its queue made from `options` and started. */
async function started(context, sw, options) {
  const page = await outbox(context, { sw });
  await page.evaluate((o) => (window.ob.make(o), window.ob.start()), options);
  return page;
}

test('Background Sync: a task a closed page left pending is replayed by the Service Worker on `sync`', { timeout: 60_000 }, async () => {
  up = false;
  await inContext(async (context) => {
    const page = await started(context, true, { backoff: { baseMs: 60_000, maxDelayMs: 60_000, jitter: 'none' }, pollMs: 60_000 });
    await page.evaluate(() => window.ob.enqueue('t1', { form: 'Ada' }));
    // The page's attempt fails (503), and so does the worker's if the browser fired the sync the
    // page asked for at once (online, it may, even before the page claims the task): either
    // way the task is left pending, its retry a minute away, nothing in flight.
    await until('the failed attempts to settle', async () => {
      const r = await record(page, 't1');
      return r?.state === 'pending' && r.failureCount >= 1 && r.nextAttemptAt - Date.now() > 30_000;
    });
    const tried = deliveries.filter((d) => d.id === 't1');
    assert.ok(tried.length >= 1 && tried.every((d) => !d.ok), JSON.stringify(tried));
    // The page asked for a Background Sync of the outbox (still registered: a replay that
    // failed is retried by the browser later).
    assert.deepEqual(await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.sync.getTags())), ['outbox']);
    await page.close();

    // The origin is back; the browser fires the outbox's sync (here through the DevTools protocol).
    const from = deliveries.length; // (before the origin is back: a sync the browser fires by itself counts too)
    up = true;
    const helper = await context.newPage();
    await dispatchSync(context, helper, { origin: site.url, scope: `${site.url}/tests/browser/`, tag: 'outbox' });
    await until('the delivery by the Service Worker', () => deliveries.slice(from).some((d) => d.ok));
    const replayed = deliveries.slice(from);
    assert.deepEqual(
      replayed.map((d) => [d.id, d.by, d.ok]),
      [['t1', 'sw', true]],
      'replayed once, by the worker, at once (not after its minute-long retry delay)',
    );
    // The record, read in a fresh page of the origin (no queue started there).
    await helper.goto(`${site.url}/tests/browser/outbox.html?sw=0&origin=${encodeURIComponent(srv.url)}`);
    await helper.waitForSelector('body[data-ready="1"]');
    const rec = await processed(helper, 't1');
    assert.deepEqual([rec.lockedBy, rec.payload], [null, { form: 'Ada' }]);
    assert.equal(deliveries.filter((d) => d.id === 't1' && d.ok).length, 1, 'delivered exactly once');
  });
});

test('`online` wakes a queue sleeping out a retry delay; stop() removes its listeners', { timeout: 30_000 }, async () => {
  up = true;
  await inContext(async (context) => {
    const page = await started(context, false, { backoff: { baseMs: 20_000, jitter: 'none' }, pollMs: 60_000 });
    await context.setOffline(true);
    await page.evaluate(() => window.ob.enqueue('o1', 1));
    const failed = await until('the offline failure', async () => {
      const r = await record(page, 'o1');
      return r?.failureCount === 1 && r;
    });
    assert.equal(deliveries.filter((d) => d.id === 'o1').length, 0, 'nothing reached the server while offline');
    await context.setOffline(false); // fires `online` in the page
    const delivered = await until('the delivery after `online`', () => deliveries.find((d) => d.id === 'o1' && d.ok));
    assert.ok(delivered.at < failed.nextAttemptAt, 'delivered before its retry (20 s after the failure) was due');
    assert.equal((await processed(page, 'o1')).failureCount, 1);
    // The wake-up listeners are there while the queue runs, and gone after stop().
    const cdp = await context.newCDPSession(page);
    const listeners = async (expr) => {
      const { result } = await cdp.send('Runtime.evaluate', { expression: expr });
      const { listeners } = await cdp.send('DOMDebugger.getEventListeners', { objectId: result.objectId });
      return listeners.map((l) => l.type).filter((t) => t === 'online' || t === 'visibilitychange');
    };
    assert.deepEqual(await listeners('window'), ['online']);
    assert.deepEqual(await listeners('document'), ['visibilitychange']);
    await page.evaluate(() => window.ob.stop());
    assert.deepEqual(await listeners('window'), []);
    assert.deepEqual(await listeners('document'), []);
    assert.deepEqual(page.problems, []);
  });
});

test('the page becoming visible wakes its queue: a task another tab stored is run at once', { timeout: 30_000 }, async () => {
  up = true;
  await inContext(async (context) => {
    const a = await started(context, false, { pollMs: 60_000 });
    assert.equal(await a.evaluate(() => window.ob.drain()), Infinity, "a's passes found nothing: it sleeps for a minute");
    const b = await outbox(context, { sw: false });
    await b.evaluate(() => (window.ob.make({}), window.ob.enqueue('v1', 1))); // stored, not run: b's queue is not started
    await b.close();
    assert.equal(deliveries.filter((d) => d.id === 'v1').length, 0, 'nobody ran it yet');
    // What the browser sends a tab brought back to the foreground.
    await a.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
    // (within until's default 10 s: far below pollMs, 60 s, when a's next pass would have found it anyway)
    await until('the delivery after visibilitychange', () => deliveries.some((d) => d.id === 'v1' && d.ok));
    assert.deepEqual(
      deliveries.filter((d) => d.id === 'v1').map((d) => d.by),
      ['page'],
    );
    await a.evaluate(() => window.ob.stop());
    assert.deepEqual(a.problems, []);
  });
});
