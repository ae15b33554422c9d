// The backoff gate in a headless Chromium page, against the scripted server
// on another localhost origin: 20 calls in flight through an outage.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { startScripted } from '../server/scripted.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*") });

test('in a page: one probe per round while down, then every call released in order', { timeout: 60_000 }, async () => {
  let n = 0;
  srv.script('/gate-outage', (req) =>
    n++ < 23 ? { status: 503 } : { status: 200, body: new URL(req.url, 'http://x').searchParams.get('i') },
  );
  const page = await watchedPage(ctx.browser);
  await page.goto(`${ctx.url}/tests/browser/gate.html?server=${encodeURIComponent(srv.url)}`);
  await page.waitForSelector('body[data-done="1"]', { timeout: 50_000 });
  const { bodies, error, calls, stats } = await page.evaluate(() => window.results);
  assert.equal(error, undefined);
  assert.deepEqual(
    bodies,
    Array.from({ length: 20 }, (_, i) => String(i)),
  );
  assert.equal(stats.probes, 4, '3 failed probes and the one that succeeded');
  assert.equal(stats.rounds, stats.probes);
  // A probe per round, then the others released oldest call first. (Which call probes is the oldest
  // held when the round ends: call 0 on a quiet machine, and in gate.node.test.mjs on virtual time;
  // here, if call 0's 503 is handled after the first 20 ms round, another.)
  const [probes, released] = [calls.slice(20, 24), calls.slice(24)];
  assert.deepEqual(
    released,
    Array.from({ length: 20 }, (_, i) => i).filter((i) => i !== probes[3]),
  );
  assert.equal(srv.count('/gate-outage'), 20 + 4 + 19);
  const unexpected = page.problems.filter((p) => !/Failed to load resource|status of 5\d\d/.test(p));
  assert.deepEqual(unexpected, []);
  await page.close();
});
