// wasm-backoff/outbox in real headless Chromium, with a Service Worker
// (tests/browser/outbox-requests*): a page POSTs a form while the network
// to the scripted server (another origin) fails; the worker stores the
// request and answers 202; the page closes; when the server is back, the
// Background Sync `sync` event (dispatched through the DevTools protocol,
// as the queue's tests do) makes the worker replay it, once, with the body
// and the idempotency key it was stored with.
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

/** The page of the outbox, its worker in control. */
async function open(context) {
  const page = await context.newPage();
  page.problems = [];
  page.on('pageerror', (e) => page.problems.push(String(e)));
  await page.goto(`${site.url}/tests/browser/outbox-requests.html`);
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
    // The worker's first replay fails too (reset); the next is a minute away.
    const record = () => page.evaluate((id) => window.rq.list().then((l) => l.find((r) => r.id === id)), answer.id);
    await until('the failed replay to settle', async () => {
      const r = await record();
      return r?.state === 'pending' && r.failureCount >= 1 && r.nextAttemptAt - Date.now() > 30_000;
    });
    assert.deepEqual(await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.sync.getTags())), ['requests']);
    assert.deepEqual(page.problems, []);
    await page.close();

    up = true;
    const helper = await context.newPage();
    const from = srv.requests.length;
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
