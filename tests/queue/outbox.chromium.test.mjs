// wasm-backoff/outbox in real headless Chromium, with a Service Worker
// (tests/browser/outbox-requests*): a page POSTs a form while the network
// to the scripted server (another origin) fails; the worker stores the
// request and answers 202; the page closes; when the server is back, the
// Background Sync `sync` event (dispatched through the DevTools protocol,
// as the queue's tests do) makes the worker replay it, once, with the body
// and the idempotency key it was stored with. Offline (`context.setOffline`),
// with every default, in a page and in the docs' Service Worker: a stored
// POST is replayed while offline without spending its failures, and sent
// once when the browser is back online. Real time: the outbox's real-time
// smokes (a real Service Worker, IndexedDB, Background Sync, offline),
// outcomes and order only; the exact waits are outbox.node.test.mjs's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { startScripted } from '../server/scripted.mjs';
import { until } from '../support/wait.mjs';
import { serverAndBrowser, dispatchSync } from '../support/browser.mjs';

let srv;
let up = false;
before(async () => {
  srv = await startScripted();
  // Down: the connection is reset (a network failure, which is what the outbox stores).
  srv.script('/forms', () => (up ? { status: 201 } : { reset: true }));
});
after(() => srv?.close());
// The package's strict policy, allowing fetches to the scripted origin too.
const site = serverAndBrowser({ csp: () => CSP.replace("connect-src 'self'", `connect-src 'self' ${srv.url}`) });

/** Runs `f(context)` in a new browser context, closed after it. */
async function inContext(f) {
  const context = await site.browser.newContext();
  try {
    await f(context);
  } finally {
    await context.close();
  }
}

/** The page of the outbox (`outbox-requests.html`: its worker in control). */
async function open(context, path = 'outbox-requests.html') {
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(String(e)));
  await page.goto(`${site.url}/tests/browser/${path}`);
  await page.waitForSelector('body[data-ready="1"]');
  return page;
}

test('a POST made while the network fails is stored by the Service Worker and replayed on `sync` after the page closed', {
  timeout: 60_000,
}, async () => {
  const context = await site.browser.newContext();
  try {
    const page = await open(context);
    const answer = await page.evaluate((origin) => window.rq.post(origin, '{"name":"Ada"}'), srv.url);
    assert.equal(answer.status, 202, 'stored, not lost');
    assert.match(answer.id, /^[0-9a-f-]{36}$/);
    // The worker's first replay fails too (reset: a network failure, which spends no failure
    // of the task); the next is a minute away.
    const record = () => page.evaluate((id) => window.rq.list().then((l) => l.find((r) => r.id === id)), answer.id);
    await until('the failed replay to settle', async () => {
      const r = await record();
      return r?.state === 'pending' && r.networkWaits >= 1 && r.nextAttemptAt - Date.now() > 30_000;
    });
    assert.equal((await record()).failureCount, 0, 'a network failure is no failure of the task');
    assert.deepEqual(await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.sync.getTags())), ['requests']);
    assert.deepEqual(page.problems, []);
    await page.close();

    const from = srv.requests.length; // (before the origin is back: a sync the browser fires by itself counts too)
    up = true;
    const helper = await context.newPage();
    await dispatchSync(context, helper, { origin: site.url, scope: `${site.url}/tests/browser/`, tag: 'requests' });
    await until('the replay', () => srv.requests.slice(from).some((r) => r.path === '/forms' && r.method === 'POST'));
    const replayed = srv.requests.slice(from).filter((r) => r.path === '/forms' && r.method === 'POST');
    assert.deepEqual(
      replayed.map((r) => [r.body, r.headers['idempotency-key'], r.headers['content-type']]),
      [['{"name":"Ada"}', answer.id, 'text/plain']],
      'once, with its body, key and headers',
    );
    await helper.goto(`${site.url}/tests/browser/outbox-requests.html`);
    await helper.waitForSelector('body[data-ready="1"]');
    await until('the task processed', () =>
      helper.evaluate((id) => window.rq.list().then((l) => l.find((r) => r.id === id)?.state === 'processed'), answer.id),
    );
    assert.equal(srv.requests.slice(from).filter((r) => r.path === '/forms' && r.method === 'POST').length, 1, 'sent once in all');
  } finally {
    await context.close();
  }
});

/** The POSTs to /forms the server received since request number `from`. */
const forms = (from) => srv.requests.slice(from).filter((r) => r.path === '/forms' && r.method === 'POST');

/**
 * The offline check shared by the page and the worker: `post()` is made
 * while the browser is offline and must answer 202 (stored); the outbox then
 * replays it offline until `replayed()` says six times, more than the
 * default failure limit (5), or the task ends (`record().state` final); the
 * task must still be pending, no failure spent. Back online (`wake()`, once
 * connectivity is back), the server gets it once, with its body and key, and
 * the task ends processed.
 */
async function offlineThenOnline(context, { post, record, replayed, wake }) {
  const from = srv.requests.length;
  await context.setOffline(true);
  const answer = await post('{"name":"Grace"}');
  assert.equal(answer.status, 202, 'stored while offline');
  assert.match(answer.id, /^[0-9a-f-]{36}$/);
  // More offline replays than the 5 failures of the default limit (about 4 s with the defaults), and
  // the task between two of them (a replay may be under way: it is `processing` then), or given up.
  const rec = await until(
    'six offline replays, the task pending; or the task given up',
    async () => {
      const r = await record(answer.id);
      if (['processed', 'error'].includes(r?.state)) return r;
      return r?.state === 'pending' && (await replayed(answer.id)) && r;
    },
    30_000,
  );
  assert.deepEqual(
    { state: rec.state, failureCount: rec.failureCount, lastError: rec.lastError },
    { state: 'pending', failureCount: 0, lastError: rec.lastError },
    'offline replays spend no failure: the task waits for the network',
  );
  assert.equal(forms(from).length, 0, 'nothing reached the server while offline');
  await context.setOffline(false);
  await wake?.();
  await until('the replay once online', () => forms(from).length > 0);
  await until('the task processed', async () => (await record(answer.id))?.state === 'processed');
  assert.deepEqual(
    forms(from).map((r) => [r.body, r.headers['idempotency-key'], r.headers['content-type']]),
    [['{"name":"Grace"}', answer.id, 'text/plain']],
    'sent once, with its body, key and headers',
  );
}

test('offline, every default, in a page: the stored POST is kept while offline and sent once `online`', { timeout: 60_000 }, async () => {
  up = true; // only the browser is offline
  await inContext(async (context) => {
    const page = await open(context, 'outbox-page.html');
    const events = () => page.evaluate(() => window.op.events());
    await offlineThenOnline(context, {
      post: (body) => page.evaluate(([origin, b]) => window.op.post(origin, b), [srv.url, body]),
      record: (id) => page.evaluate((i) => window.op.record(i), id),
      replayed: async (id) => (await events()).filter((e) => e.type === 'retry' && e.id === id).length >= 6,
    });
    const seen = await events();
    assert.deepEqual(
      seen.filter((e) => e.type !== 'retry'),
      [{ type: 'processed', id: seen[0].id, failureCount: 0, reason: undefined, error: '' }],
      'no error, no storeerror: one processed',
    );
    assert.deepEqual(page.problems, []);
  });
});

test("offline, the docs' Service Worker recipe: the request it answered 202 for is kept, and sent once back online", {
  timeout: 60_000,
}, async () => {
  up = true;
  await inContext(async (context) => {
    const page = await open(context, 'outbox-requests.html?sw=docs');
    const record = (id) => page.evaluate((i) => window.rq.list().then((l) => l.find((r) => r.id === i)), id);
    await offlineThenOnline(context, {
      post: (body) => page.evaluate(([origin, b]) => window.rq.post(origin, b), [srv.url, body]),
      record,
      // (each replay is two writes: the claim and its outcome)
      replayed: async (id) => (await record(id))?.version >= 12,
      // Connectivity is back: the browser fires the outbox's sync (here through the DevTools protocol).
      wake: () => dispatchSync(context, page, { origin: site.url, scope: `${site.url}/tests/browser/`, tag: 'requests' }),
    });
    assert.deepEqual(page.problems, []);
  });
});
