// The demo page's live calls end to end in Chromium, under its strict CSP,
// against the scripted server (and, statically hosted, the demo's Service
// Worker): what each lane shows is checked against the library's schedule
// computed here in Node. The model views are tests/demo/demo-models.test.mjs.
// Screenshots go to test-output/ with SCREENSHOTS=1 (look at them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff } from 'wasm-backoff';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';
import { opener, shot, smallOutage, setCall, startCall, allDone } from './page.mjs';
import { until } from '../support/wait.mjs';
import { serve, ROOT } from '../../scripts/serve.mjs';
import { options } from '../../www/state.js';

const ctx = serverAndBrowser();
const open = opener(ctx);

const lanes = (page) =>
  page.$$eval('#live-lanes li', (ls) =>
    ls.map((l) => ({ ...l.dataset, attempts: JSON.parse(l.dataset.attempts), waits: JSON.parse(l.dataset.waits) })),
  );
/** The attempts of each lane so far (a lane not drawn yet has none). */
const attemptsOf = (page) => page.$$eval('#live-lanes li', (ls) => ls.map((l) => JSON.parse(l.dataset.attempts ?? '[]')));

/**
 * The waits (onRetry's delayMs, as the live lanes record them) of a
 * `withBackoff` call with options `o` in Node whose attempts answer
 * `statuses`: the library's choice, whatever its rule (after a 429 or a 503
 * the step is drawn on throttleBaseMs, by default 10 × baseMs, under
 * maxDelayMs). A stand-in fetch: only the statuses matter here; the real
 * waits are the schedule's, a few hundred ms at most for the policies used.
 */
async function libraryWaits(o, statuses) {
  const waits = [];
  let i = 0;
  const f = withBackoff(async () => new Response(null, { status: statuses[i++] }), {
    ...o,
    maxAttempts: statuses.length,
    onRetry: ({ delayMs }) => waits.push(delayMs),
  });
  assert.equal((await f('http://live.test/')).status, statuses.at(-1));
  return waits;
}

/** The live section: several calls in flight, each its own lane, checked against the library's schedule in Node. */
async function liveCalls(page, { host, name }) {
  await page.waitForSelector(`#live[data-endpoint="${host}"]`, { timeout: 20_000 });
  const a = options({ baseMs: '50', maxDelayMs: '100' });
  await startCall(page, '503,503,200');
  await startCall(page, '429ra1,200');
  await startCall(page, '429rl2,200');
  await startCall(page, '503', 'B'); // waits 1, 2, 4, 8 s (503: throttleBaseMs, 10 × 100 ms): aborted on the way
  await startCall(page, 'reset,503,200');
  // Calls in flight together, on the page's record of them (not its live count, which a slow machine
  // can poll too late): call 4 (waits 1, 2, 4 s) is aborted only once it has made an attempt after call 5
  // started, so at that start both were in flight, however long the clicks took.
  // (A failure names what every call had done: one stressed run in 60 timed out here, and its log could
  // not say whether call 5 had started, or call 4 had ended or hung.)
  let seen = [];
  await until(
    'call 4 making an attempt after call 5 started',
    async () => {
      seen = await attemptsOf(page);
      const [, , , a4 = [], a5 = []] = seen;
      return a5.length > 0 && a4.length >= 2 && a4.at(-1).start > a5[0].start;
    },
    20_000,
  ).catch(async (e) => {
    const outcomes = await page.$$eval('#live-lanes li', (ls) => ls.map((l) => l.dataset.outcome));
    const calls = seen.map((a, i) => ({
      outcome: outcomes[i],
      attempts: a.map((x) => [Math.round(x.start), Math.round(x.end), x.status ?? x.error]),
    }));
    e.message += `; the calls (attempts: [start, end, status] ms): ${JSON.stringify(calls)}`;
    throw e;
  });
  await page.click('text=Abort call 4');
  await allDone(page);
  const [c1, c2, c3, c4, c5] = await lanes(page);
  const spans = [c1, c2, c3, c4, c5].map((c) => [c.attempts[0].start, Math.max(...c.attempts.map((x) => x.end))]);
  const overlapping = spans.flatMap(([s, e], i) => spans.slice(i + 1).filter(([s2, e2]) => s2 < e && s < e2));
  assert.ok(overlapping.length >= 1, `no two calls in flight at once: ${JSON.stringify(spans)}`);
  // A's waits are its seeded schedule as the library draws it after two 503s in Node (on the throttling base).
  assert.deepEqual(
    c1.attempts.map((x) => x.status),
    [503, 503, 200],
  );
  assert.deepEqual(
    c1.waits.map((w) => w.delayMs),
    await libraryWaits(a, [503, 503, 200]),
  );
  assert.equal(c1.outcome, 'resolved: 200 after 3 attempts');
  // Server-named waits: the headers on the bar, a wait of at least what they name.
  assert.deepEqual(c2.attempts[0].headers, ['Retry-After: 1']);
  assert.ok(c2.waits[0].delayMs >= 1000 && c2.waits[0].retryAfterMs === 1000, JSON.stringify(c2.waits));
  assert.deepEqual(c3.attempts[0].headers, ['RateLimit-Limit: 10', 'RateLimit-Remaining: 0', 'RateLimit-Reset: 2']);
  assert.ok(c3.waits[0].delayMs >= 2000 && c3.waits[0].retryAfterMs === 2000, JSON.stringify(c3.waits));
  assert.match(c3.outcome, /^resolved: 200/);
  // The aborted call ends at once with the signal's reason; the others went on.
  assert.match(c4.outcome, /^rejected: AbortError after [2-4] attempts$/);
  // A dropped connection is a network error (a TypeError), retried.
  assert.equal(c5.attempts[0].error, 'TypeError');
  assert.deepEqual(
    c5.attempts.slice(1).map((x) => x.status),
    [503, 200],
  );
  if (name) await shot(page.locator('#live'), name);
  // "Server down" (3 s here): a call started then gets 503 until it is back, then its script. (The call
  // is set up before the outage: only its start's click falls in it. B's waits after a 503, 1 s doubling
  // on throttleBaseMs, span 15 s over its 5 attempts: it outlasts the outage even on a busy machine.)
  await page.click('#live-clear');
  await page.fill('#live-down-s', '3');
  assert.equal(await page.$eval('#live-down', (e) => e.textContent), 'Server down for 3 s');
  await setCall(page, '200', 'B');
  await page.click('#live-down');
  await page.waitForSelector('#live[data-downs]');
  await page.click('#live-run');
  await allDone(page);
  const [down] = await lanes(page);
  const [{ start, end }] = JSON.parse(await page.$eval('#live', (e) => e.dataset.downs));
  const statuses = down.attempts.map((x) => x.status);
  assert.ok(statuses.length >= 2 && statuses.at(-1) === 200 && statuses.slice(0, -1).every((x) => x === 503), String(statuses));
  assert.ok(down.attempts[0].start >= start && down.attempts.at(-1).start >= end - 50, JSON.stringify({ start, end, a: down.attempts }));
}

test('live fetch: several calls in flight, each a lane; headers on the bars; abort per call; server down', {
  timeout: 60_000,
}, async () => {
  const page = await open('?baseMs=50&maxDelayMs=100');
  await liveCalls(page, { host: 'server', name: 'demo-live' });
  // Failed attempts log their HTTP errors in the console by design; nothing else may.
  assert.deepEqual(
    page.problems.filter((p) => !/status of (503|429)|Failed to load resource/.test(p)),
    [],
  );
  await page.close();
});

test('live fetch, steered: the hedge that won, the host a failover went to', { timeout: 60_000 }, async () => {
  const page = await open('?baseMs=50&maxDelayMs=100');
  await page.waitForSelector('#live[data-endpoint="server"]', { timeout: 20_000 });
  await startCall(page, 'hang,200', 'A', 'hedge'); // the first copy hangs; the hedge goes at 300 ms and wins
  await startCall(page, '200', 'A', 'hedge'); // answers at once: no hedge
  await startCall(page, '503', 'A', 'failover'); // the primary answers 503: the retry goes to the backup
  await allDone(page);
  const [hedged, quick, failed] = await lanes(page);
  assert.equal(hedged.outcome, 'resolved: 200 after 2 attempts; attempt 2 won the hedge');
  assert.equal(hedged.won, '2');
  assert.equal(hedged.attempts[0].error, 'AbortError', 'the loser was aborted');
  assert.ok(hedged.attempts[1].start >= 280 + hedged.attempts[0].start, JSON.stringify(hedged.attempts));
  // (a 200 at once sends no hedge, unless a loaded machine takes 300 ms to answer it)
  assert.match(quick.outcome, /^resolved: 200 after (1 attempt; no hedge needed|2 attempts; attempt [12] won the hedge)$/);
  assert.equal(failed.outcome, 'resolved: 200 after 2 attempts; answered by the backup');
  assert.deepEqual(
    failed.attempts.map((a) => [a.via, a.status]),
    [
      ['primary', 503],
      ['backup', 200],
    ],
  );
  // What the bars say (their titles: a label that does not fit is cut to the status): the winner and the loser, each host.
  const labels = await page.$$eval('#live-lanes li', (ls) =>
    ls.map((l) => [...l.querySelectorAll('rect.attempt title')].map((t) => t.textContent.replace(/ \(.*$/, ''))),
  );
  assert.deepEqual(labels[0], ['AbortError lost', '200 won']);
  assert.deepEqual(labels[2], ['primary · 503', 'backup · 200']);
  // "Server down" takes the primary down, not the backup: a failover call goes to the backup.
  // (set up before the outage: only the start's click falls in it)
  await page.click('#live-clear');
  await page.fill('#live-down-s', '2');
  await setCall(page, '200', 'A', 'failover');
  await page.click('#live-down');
  await page.waitForSelector('#live[data-downs]');
  await page.click('#live-run');
  await allDone(page);
  const [down] = await lanes(page);
  assert.equal(down.outcome, 'resolved: 200 after 2 attempts; answered by the backup');
  await shot(page.locator('#live'), 'demo-live-steered');
  assert.deepEqual(
    page.problems.filter((p) => !/status of (503|429)|Failed to load resource/.test(p)),
    [],
  );
  await page.close();
});

test('static hosting: from plain static files (www/ and pkg/, no /flaky route, no CSP) the Service Worker of the demo answers the live calls', {
  timeout: 60_000,
}, async () => {
  // The layout scripts/site.sh publishes: the page and the package, nothing else.
  const statics = await serve({
    mounts: [
      ['/www/', `${ROOT}/www`],
      ['/pkg/', `${ROOT}/pkg`],
    ],
    routes: {},
    csp: null,
  });
  try {
    const page = await watchedPage(ctx.browser, { viewport: { width: 1100, height: 900 } });
    await page.goto(`${statics.url}/www/${smallOutage('?baseMs=50&maxDelayMs=100')}`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
    assert.equal((await page.request.get(`${statics.url}/www/flaky?probe`)).status(), 404, 'no endpoint on the server');
    await liveCalls(page, { host: 'service worker', name: 'demo-live-static' });
    assert.match(await page.$eval('#live-endpoint', (e) => e.textContent), /Service Worker/);
    // (the storm's worker, its wasm from the static files: simulated once its section is near the screen)
    await page.locator('#storm').scrollIntoViewIfNeeded();
    await page.waitForSelector('#storm[data-done="1"]', { timeout: 30_000 });
    // The scripted failures of the live calls (statuses, dropped connections), and nothing else: no 404
    // (the endpoint is found without a probe).
    assert.deepEqual(
      page.problems.filter((p) => !/status of (503|429)\b|net::ERR_FAILED/.test(p)),
      [],
    );
    await page.close();
  } finally {
    await statics.close();
  }
});
