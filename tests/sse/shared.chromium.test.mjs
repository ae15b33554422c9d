// `shared: true` in real Chromium: five tabs of one origin open the same
// stream and the server sees one connection; the holder's tab closes and
// another takes over at once, with one new connection that resumes from the
// last event ID: every remaining tab hears every event once, in order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { startLive } from '../server/live.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';
import { until } from '../support/wait.mjs';

let live;
before(async () => {
  live = await startLive();
});
after(() => live?.close());
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*") });

/** Whether `ids` are consecutive integers (nothing lost, nothing twice). */
const consecutive = (ids) => ids.every((id, i) => i === 0 || id === ids[i - 1] + 1);

test('five tabs share one connection; the holder closes, one new connection resumes, nothing lost or doubled', {
  timeout: 60_000,
}, async () => {
  const context = await ctx.browser.newContext();
  const stream = `${live.url}/sse/tabs?plan=stream&every=20`;
  const open = async () => {
    const page = await watchedPage(context);
    await page.goto(`${ctx.url}/tests/browser/shared.html?url=${encodeURIComponent(stream)}`);
    await page.waitForSelector('body[data-started="1"]');
    return page;
  };
  // The first tab asks for the lock first: it holds the connection.
  const holder = await open();
  await until('the holder open', () => holder.evaluate(() => window.state() === 1 && window.ids.length > 0));
  const others = [];
  for (let i = 0; i < 4; i++) others.push(await open());
  const heard = (p) => p.evaluate(() => window.ids.length);
  await until('every tab hearing events', async () => (await Promise.all(others.map(heard))).every((n) => n >= 5));
  assert.equal(live.log('tabs').length, 1, 'five tabs, one connection');
  for (const p of others) assert.equal(await p.evaluate(() => window.state()), 1);

  await holder.close();
  await until('a new connection', () => live.log('tabs').length >= 2, 5000);
  await until('events after the takeover', async () => (await Promise.all(others.map(heard))).every((n) => n >= 30));
  const log = live.log('tabs');
  assert.equal(log.length, 2, 'one new connection');
  // "At once", on the server's clock (not the test's, whose own polling of the log would count): from
  // the holder's connection closing to the new one arriving (below 0: no gap at all).
  assert.notEqual(log[0].closed, undefined, "the holder's connection closed with its tab");
  const takeover = log[1].at - log[0].closed;
  assert.ok(takeover < 1000, `taken over in ${takeover} ms (${JSON.stringify(log)})`);
  assert.ok(log[1].lastEventId !== null, 'the new connection resumes from the last event ID');
  const lists = await Promise.all(others.map((p) => p.evaluate(() => window.ids)));
  for (const ids of lists) {
    assert.ok(consecutive(ids), `every event once, in order: ${ids.join(',')}`);
    assert.ok(ids.includes(Number(log[1].lastEventId)) && ids.includes(Number(log[1].lastEventId) + 1), 'heard across the takeover');
  }
  for (const p of others) assert.deepEqual(p.problems, []);
  await context.close();
});
