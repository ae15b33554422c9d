// The gate as a circuit breaker and adaptive limiter in a headless Chromium
// page (tests/browser/breaker.html, driven through window.bt), against the
// scripted server on another localhost origin: fail-fast, isolation by hand,
// a breaker's state carried from one page to the next in localStorage, every
// state change with its key and reason, and the limiter's server-named wait.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CSP } from '../../scripts/serve.mjs';
import { assertLimiterAlone, assertThrottledGap, roundOver } from './breaker-asserts.mjs';
import { startScripted } from '../server/scripted.mjs';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';
import { sleep } from '../support/wait.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());
const ctx = serverAndBrowser({ csp: CSP.replace("connect-src 'self'", "connect-src 'self' http://127.0.0.1:*") });

/** A ready breaker.html page of `where` (the browser, or a context whose pages share localStorage). */
async function open(where = ctx.browser) {
  const page = await watchedPage(where);
  await page.goto(`${ctx.url}/tests/browser/breaker.html`);
  await page.waitForSelector('body[data-ready="1"]');
  return page;
}

/** Runs scenario `name` of window.bt in `page` with the server's URL and `args`. */
const bt = (page, name, ...args) => page.evaluate(([n, a]) => window.bt[n](...a), [name, [srv.url, ...args]]);

/** What a page logged besides the failed loads the scenarios cause on purpose. */
const unexpected = (page) => page.problems.filter((p) => !/Failed to load resource|status of [45]\d\d/.test(p));

/** The carried breaker's round (CARRIED in tests/browser/breaker.js: no jitter). */
const ROUND_MS = 10_000;

/** When the server saw each request to `p` (ms, its clock). */
const arrivals = (p) => srv.requests.filter((r) => r.path === p).map((r) => r.at);

test("fail-fast in a page: past the threshold a BrokenCircuitError names the wait, nothing is sent; the round's probe closes it; every change told", {
  timeout: 30_000,
}, async () => {
  srv.script('/ff', [{ status: 503 }, { status: 503 }, { status: 200, body: 'probe ok' }]);
  const page = await open();
  const r = await bt(page, 'failFast', '/ff');
  assert.equal(r.first.status, 503);
  assert.equal(r.afterOne, 'closed', 'one failure is below consecutive: 2');
  assert.equal(r.second.status, 503);
  assert.equal(r.afterTwo, 'open');
  for (const { error } of r.refused) {
    assert.equal(error?.name, 'BrokenCircuitError');
    assert.ok(error.broken, 'instanceof the BrokenCircuitError that /pkg/gate/index.js exports');
    assert.equal(error.key, srv.url, 'the default key: the origin');
    assert.equal(error.isolated, false);
    assert.ok(error.retryAfterMs > 0 && error.retryAfterMs <= 10_000, `retryAfterMs ${error.retryAfterMs}`);
  }
  assert.equal(r.roundOver, 'half-open', 'the round is over: the next call probes');
  assert.equal(r.probe.body, 'probe ok');
  assert.equal(r.after, 'closed');
  assert.equal(srv.count('/ff'), 3, 'two failures and the probe; the refused calls sent nothing');
  assert.deepEqual(r.changes, ['closed>open:tripped', 'open>half-open:round-over', 'half-open>closed:probe-succeeded']);
  assert.deepEqual(r.keys, [srv.url, srv.url, srv.url]);
  assert.deepEqual(unexpected(page), []);
  await page.close();
});

test('isolate / release by hand in a page: a held call waits unsent until released; fail-fast refuses while isolated', {
  timeout: 30_000,
}, async () => {
  srv.script('/iso', { status: 200, body: 'ok' });
  const page = await open();
  const one = await bt(page, 'isolate', '/iso');
  assert.deepEqual(one.state, { state: 'isolated', probing: false, held: 1, inFlight: 0, retryAfterMs: Infinity });
  assert.equal(one.refused.error?.name, 'BrokenCircuitError');
  assert.ok(one.refused.error.broken);
  assert.equal(one.refused.error.isolated, true);
  assert.equal(one.refused.error.retryAfterMs, 'Infinity');
  await sleep(100);
  assert.equal(srv.count('/iso'), 0, 'nothing sent while isolated');
  const two = await bt(page, 'release', '/iso');
  assert.deepEqual(
    two.before,
    { state: 'isolated', probing: false, held: 1, inFlight: 0, retryAfterMs: Infinity },
    'still held after 150 ms',
  );
  assert.deepEqual(two.res, { status: 200, body: 'ok' });
  assert.deepEqual(two.passed, { status: 200, body: 'ok' });
  assert.equal(two.after.state, 'closed');
  assert.equal(srv.count('/iso'), 2, 'the released call and the fail-fast gate’s call after release');
  assert.deepEqual(two.changes, ['closed>isolated:isolated', 'isolated>closed:released']);
  assert.deepEqual(two.keys, [srv.url, srv.url]);
  assert.deepEqual(unexpected(page), []);
  await page.close();
});

test('toJSON() in one page, restore() in the next (localStorage): open there too, then the first call after the round probes and closes it', {
  timeout: 30_000,
}, async () => {
  srv.script('/carry', [{ status: 503 }, { status: 200, body: 'probe ok' }]);
  const context = await ctx.browser.newContext();
  try {
    // Two pages of one origin (both loaded first: page 2's call must come within the round).
    // Page 1 trips the breaker (consecutive: 1) and saves it, then goes away.
    const [first, second] = [await open(context), await open(context)];
    const one = await bt(first, 'trip', '/carry');
    assert.equal(one.res.status, 503);
    assert.deepEqual(one.changes, ['closed>open:tripped']);
    assert.deepEqual(one.keys, [srv.url]);
    const saved = one.saved.targets[srv.url];
    assert.equal(saved?.state, 'open');
    // (the round, 10 s with no jitter, began when the 503 came: after the call was sent, before the state was saved)
    assert.ok(saved.untilMs >= one.sentAt + ROUND_MS, `the round ends ${saved.untilMs - one.sentAt} ms after the call was sent`);
    assert.ok(saved.untilMs <= one.saved.savedAt + ROUND_MS, `the round ends ${saved.untilMs - one.saved.savedAt} ms after the save`);
    assert.deepEqual(unexpected(first), []);
    await first.close();

    // Page 2, a fresh gate: restored open; its call is refused without
    // reaching the server, and the round ends when it would have in page 1.
    await sleep(100);
    const sent = Date.now();
    const two = await bt(second, 'resume', '/carry');
    assert.equal(two.before, 'closed', 'a fresh gate');
    assert.equal(two.restored, 'open');
    assert.equal(two.res.error?.name, 'BrokenCircuitError', JSON.stringify(two.res));
    assert.ok(two.res.error.broken);
    assert.ok(two.res.error.retryAfterMs > 0 && two.res.error.retryAfterMs <= ROUND_MS, `retryAfterMs ${two.res.error.retryAfterMs}`);
    assert.ok(
      two.res.error.retryAfterMs <= saved.untilMs - sent + 2,
      `retryAfterMs ${two.res.error.retryAfterMs}: the round ends ${saved.untilMs - sent} ms after page 2 was asked (not a new round)`,
    );
    assert.equal(srv.count('/carry'), 1, 'page 2 sent nothing');
    assert.deepEqual(two.changes, ['closed>open:restored']);
    assert.equal(two.saved.targets[srv.url]?.untilMs, saved.untilMs, 'saved again, the same round');

    // Page 2 reloaded once the round is over (a new realm, a fresh gate):
    // restored with the probe due; its call probes and closes the circuit.
    // (the round is not waited out: the state in localStorage is made one
    // saved a round earlier, its untilMs just past)
    const stored = JSON.parse(await second.evaluate(() => localStorage.getItem('breaker')));
    await second.evaluate((text) => localStorage.setItem('breaker', text), JSON.stringify(roundOver(stored, srv.url)));
    await second.reload();
    await second.waitForSelector('body[data-ready="1"]');
    const three = await bt(second, 'resume', '/carry');
    assert.equal(three.restored, 'half-open', 'the round ended before this page: the next call probes');
    assert.deepEqual(three.res, { status: 200, body: 'probe ok' });
    assert.equal(srv.count('/carry'), 2, 'one probe');
    assert.deepEqual(three.changes, ['closed>open:restored', 'open>half-open:round-over', 'half-open>closed:probe-succeeded']);
    assert.deepEqual(three.keys, [srv.url, srv.url, srv.url]);
    assert.deepEqual(three.saved.targets, {}, 'closed and clean: nothing to carry');
    assert.deepEqual(JSON.parse(await second.evaluate(() => localStorage.getItem('breaker'))).targets, {});
    assert.deepEqual(unexpected(second), []);
  } finally {
    await context.close();
  }
});

test("limit: 'adaptive' in a page — a 429 naming a wait (retry-after-ms) pauses no other call: the next first attempt waits a token at most", {
  timeout: 30_000,
}, async (t) => {
  const page = await open();
  // Without the limiter, the next call goes at once.
  srv.script('/unlimited', [
    { status: 429, headers: { 'retry-after-ms': '1000' } },
    { status: 200, body: 'ok' },
  ]);
  const u = await bt(page, 'limited', '/unlimited', 0, 'none');
  assert.deepEqual([u.throttled.status, u.next.status], [429, 200]);
  const at = arrivals('/unlimited');
  assert.ok(at[1] - at[0] < 800, `without the limiter: ${(at[1] - at[0]).toFixed(0)} ms`);

  // With it: 30 calls 20 ms apart, a 429 naming 1 s, then a new call. The
  // named wait is that call's (its retry's); the next call waits one token
  // at most at the throttled rate, a share of what the server took: the
  // warm-up keeps that token short (issue 24: pausing every call on a named
  // wait cost half the goodput or more in bench/overload.mjs's matrix).
  let n = 0;
  srv.script('/limited', () => (n++ === 30 ? { status: 429, headers: { 'retry-after-ms': '1000' } } : { status: 200, body: 'ok' }));
  const r = await bt(page, 'limited', '/limited', 30, 'adaptive');
  assertThrottledGap(r, arrivals('/limited'), t);

  // The limiter alone: the wait it asks for after the named 300 ms, and the token given back.
  const l = await bt(page, 'limiter');
  assertLimiterAlone(l);
  assert.deepEqual(unexpected(page), []);
  await page.close();
});
