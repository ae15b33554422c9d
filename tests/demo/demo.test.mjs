// The demo page end to end in Chromium, under its strict CSP. Every view is
// driven from the page and what it shows is checked against the library
// computed here in Node: the schedules and histograms of policies A and B,
// the storm curves and their verdict. Screenshots of each view go to
// test-output/ (look at them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { Backoff, backoffStats } from 'wasm-backoff/stats';
import { withBackoff } from 'wasm-backoff';
import { serverAndBrowser, watchedPage } from '../support/browser.mjs';
import { OUT, opener, startCall, allDone } from './page.mjs';
import { serve, ROOT } from '../../scripts/serve.mjs';
import { storm, stormRun, SUCCESS, GAVE_UP } from '../../www/storm.js';
import { options, DEFAULT_B } from '../../www/state.js';
import { PRESETS, STRATEGIES, JITTERS, JITTER_RATIO } from '../../js/gen/boundary.js';
import { OUTAGE_POLICIES } from '../../www/outage.js';
import { DEFAULT_SEED, STEP_ROW } from '../../www/overload.js';
import { STORM_SIZES, STORM_RUNS, DRAWS, BINS, binCounts, isUniform, verdict } from '../../www/compare.js';

const ctx = serverAndBrowser();
const open = opener(ctx);

/** What a section shows (its data-values), once nothing it shows is still being computed. */
async function values(page, id) {
  await page.waitForSelector(`#${id}:not([data-pending="1"])`);
  return JSON.parse(await page.$eval(`#${id}`, (e) => e.dataset.values));
}
const near = (got, want, what) => assert.ok(Math.abs(got - want) <= 1e-9 * Math.max(1, Math.abs(want)), `${what}: ${got} vs ${want}`);

/** The schedule view of policy `fields` checked against backoffStats and a seeded Backoff in Node. */
function checkSchedule(shown, fields, what) {
  const o = options(fields);
  for (const s of shown.stats) {
    const want = backoffStats(o, s.n);
    // Exact laws agree to the bit; sampled ones (decorrelated) come from the same seeded draws.
    for (const k of ['min', 'max', 'p50', 'p90', 'mean']) near(s[k], want[k], `${what} retry ${s.n} ${k}`);
  }
  const b = new Backoff(o);
  for (const [i, d] of shown.path.entries()) assert.equal(d, b.next(), `${what} seeded run, retry ${i + 1}`);
}

test('A and B: every preset against another redraws both schedules with the library values; the URL holds both', {
  timeout: 60_000,
}, async () => {
  const page = await open();
  // The pickers offer the library's lists (src/schema.rs, from the core), in A and B alike.
  const shown = (name) => page.$$eval(`select[name="${name}"] option`, (os) => os.map((o) => o.value));
  for (const p of ['', 'b.']) {
    assert.deepEqual(await shown(`${p}preset`), ['', ...PRESETS], `${p}preset picker`);
    assert.deepEqual(await shown(`${p}strategy`), ['', ...STRATEGIES], `${p}strategy picker`);
    assert.deepEqual(await shown(`${p}jitter`), ['', ...JITTERS.slice(0, JITTER_RATIO), 'ratio', 'add'], `${p}jitter picker`);
  }
  for (const [i, preset] of PRESETS.entries()) {
    const other = PRESETS[(i + 4) % PRESETS.length];
    await page.selectOption('select[name="preset"]', preset);
    await page.selectOption('select[name="b.preset"]', other);
    const v = await values(page, 'schedule');
    assert.ok(v.A.stats.length >= 1 && v.B.stats.length >= 1, preset);
    checkSchedule(v.A, { preset }, `A ${preset}`);
    checkSchedule(v.B, { ...DEFAULT_B, preset: other }, `B ${other}`);
    assert.match(page.url(), new RegExp(`preset=${preset}.*b\\.preset=${other}`));
    if (preset === 'gcs') await page.screenshot({ path: `${OUT}/demo-controls.png` });
  }
  // A shared URL restores both policies and the view.
  const shared = await open('?preset=grpc&b.strategy=linear&b.baseMs=300&retries=8&log=1');
  assert.equal(await shared.$eval('select[name="preset"]', (e) => e.value), 'grpc');
  assert.equal(await shared.$eval('input[name="b.baseMs"]', (e) => e.value), '300');
  const v = await values(shared, 'schedule');
  assert.equal(v.A.stats.length, 8);
  checkSchedule(v.B, { strategy: 'linear', baseMs: '300' }, 'shared B');
  await shared.locator('#schedule').screenshot({ path: `${OUT}/demo-schedule.png` });
  // A bad value shows the library's own message, naming the policy, instead of breaking the page.
  await shared.fill('input[name="b.baseMs"]', '-5');
  assert.equal(await shared.$eval('#error', (e) => e.textContent), 'Policy B: RangeError: baseMs must be a finite number >= 0');
  assert.deepEqual([...page.problems, ...shared.problems], []);
  await page.close();
  await shared.close();
});

test("the histograms of A and B are the library's draws, binned alike; full jitter gets its exact density", {
  timeout: 30_000,
}, async () => {
  const page = await open('?jitter=full&b.jitter=equal&b.baseMs=300&hist=4');
  const v = await values(page, 'distribution');
  assert.equal(v.attempt, 4);
  for (const [name, fields] of [
    ['A', { jitter: 'full' }],
    ['B', { jitter: 'equal', baseMs: '300' }],
  ]) {
    const o = options(fields);
    const counts = binCounts(Backoff.sample(o, 4, DRAWS), v.lo, v.hi, BINS);
    assert.deepEqual(v[name].counts, counts, `${name} counts`);
    assert.equal(v[name].uniform, isUniform(backoffStats(o, 4)), `${name} exact density`);
    assert.equal(v[name].uniform, true);
  }
  await page.locator('#distribution').screenshot({ path: `${OUT}/demo-histogram.png` });
  await page.close();
});

test('the storm curves of A and B and the verdict are those of the model run in Node', { timeout: 60_000 }, async () => {
  const fields = { a: { preset: 'aws', maxAttempts: '8' }, b: { jitter: 'none' } };
  const page = await open('?preset=aws&maxAttempts=8&b.jitter=none');
  await page.waitForSelector('#storm[data-done="1"]', { timeout: 30_000 });
  const r = JSON.parse(await page.$eval('#storm', (e) => e.dataset.results));
  const want = {};
  for (const [name, f] of [
    ['A', fields.a],
    ['B', fields.b],
  ]) {
    want[name] = STORM_SIZES.map((n) => ({ n, ...storm(Backoff, options(f), n, STORM_RUNS) }));
    assert.deepEqual(r[name], want[name], `${name} curve`);
  }
  const line = verdict(want.A.at(-1), want.B.at(-1));
  assert.match(line, /^B makes \d[.\d]*× the calls of A and finishes .* at N = 100/);
  assert.equal(await page.$eval('#verdict', (e) => e.textContent), line);
  await page.locator('#storm').screenshot({ path: `${OUT}/demo-storm.png` });
  assert.deepEqual(page.problems, []);
  await page.close();
});

/** One run of the storm model in Node, every write traced. */
function nodeTrace(fields, clients, run) {
  const tr = { t: [], c: [], k: [] };
  return { ...stormRun(Backoff, options(fields), clients, run, 1, tr), ...tr };
}
/** What the swimlane of `tr` must show at virtual time `now`. */
function expectedTotals(tr, now) {
  const seen = tr.k.filter((_, i) => tr.t[i] <= now);
  const done = seen.filter((k) => k === SUCCESS).length;
  return { writes: seen.length, conflicts: seen.length - done, done, gaveUp: seen.filter((k) => k === GAVE_UP).length };
}

test('the swimlanes replay one seeded run of the model: stepped write by write, scrubbed to the end, played', {
  timeout: 60_000,
}, async () => {
  const fields = { A: {}, B: { jitter: 'none' } };
  const page = await open('?laneN=10&laneRun=2');
  await page.waitForSelector('#lanes[data-ready="1"]', { timeout: 20_000 });
  const tr = { A: nodeTrace(fields.A, 10, 1), B: nodeTrace(fields.B, 10, 1) };
  const state = async () => ({
    now: Number(await page.$eval('#lanes', (e) => e.dataset.now)),
    totals: JSON.parse(await page.$eval('#lanes', (e) => e.dataset.totals)),
  });
  const check = async (what) => {
    const { now, totals } = await state();
    for (const name of ['A', 'B']) assert.deepEqual(totals[name], expectedTotals(tr[name], now), `${what}: ${name} at ${now} ms`);
    return now;
  };
  assert.equal(await check('start'), 0);
  // Step: from write to write of either policy, in time order.
  const times = [...new Set([...tr.A.t, ...tr.B.t])].sort((a, b) => a - b);
  for (let i = 0; i < 15; i++) {
    await page.click('#lane-step');
    assert.equal(await check(`step ${i + 1}`), times[i]);
  }
  assert.match(await page.$eval('#lane-status', (e) => e.textContent), /^t = .* A: \d+ writes/);
  // Scrub to the end: the totals of the whole run, as in Node.
  await page.$eval('#lane-scrub', (e) => {
    e.value = e.max;
    e.dispatchEvent(new Event('input', { bubbles: true }));
  });
  assert.equal(await check('end'), Math.max(tr.A.timeMs, tr.B.timeMs));
  const { totals } = await state();
  for (const name of ['A', 'B']) {
    assert.equal(totals[name].writes, tr[name].calls, `${name} writes`);
    assert.equal(totals[name].done + totals[name].gaveUp, 10, `${name}: every client is done or gave up`);
  }
  await page.locator('#lanes').screenshot({ path: `${OUT}/demo-swimlanes-end.png` });
  // Scrub to the middle of the (log) axis, then play fast for a moment: time runs, the totals follow it.
  await page.$eval('#lane-scrub', (e) => {
    e.value = '500';
    e.dispatchEvent(new Event('input', { bubbles: true }));
  });
  const mid = await check('scrubbed');
  await page.locator('#lanes').screenshot({ path: `${OUT}/demo-swimlanes.png` });
  await page.selectOption('select[name="speed"]', '64');
  assert.match(page.url(), /speed=64/);
  await page.click('#lane-play');
  await page.waitForFunction((t) => Number(document.getElementById('lanes').dataset.now) > t, mid, { timeout: 10_000 });
  await page.click('#lane-play'); // pause
  assert.equal(await page.$eval('#lane-play', (e) => e.textContent), 'Play');
  assert.ok((await check('played')) > mid);
  // Another number of clients: new traces.
  await page.selectOption('select[name="laneN"]', '5');
  await page.waitForFunction(
    () => document.getElementById('lanes').dataset.ready === '1' && document.getElementById('lanes').dataset.now === '0',
  );
  await page.$eval('#lane-scrub', (e) => {
    e.value = e.max;
    e.dispatchEvent(new Event('input', { bubbles: true }));
  });
  assert.equal((await state()).totals.A.writes, nodeTrace(fields.A, 5, 1).calls);
  assert.deepEqual(page.problems, []);
  await page.close();
});

/**
 * The outage model (www/outage.js) run in Node, in a worker thread: it
 * replaces the global timers while it runs, which this thread's browser
 * driver needs.
 */
function nodeOutage(point, runs, schedule) {
  const code = `
    import { parentPort, workerData as w } from 'node:worker_threads';
    const { OUTAGE_POLICIES, loadLib, outageMeans } = await import(w.model);
    const lib = await loadLib((m) => import(w.entries[m]));
    const out = {};
    for (const p of OUTAGE_POLICIES) out[p.id] = await outageMeans(w.point, p, lib, { runs: w.runs, schedule: w.schedule });
    parentPort.postMessage(out);`;
  const subpaths = new Set(OUTAGE_POLICIES.flatMap((p) => p.modules));
  const entries = Object.fromEntries([...subpaths].map((m) => [m, import.meta.resolve(m ? `wasm-backoff/${m}` : 'wasm-backoff')]));
  const model = new URL('../../www/outage.js', import.meta.url).href;
  const worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(code)}`), {
    workerData: { model, entries, point, runs, schedule },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => (resolve(m), worker.terminate()));
    worker.once('error', reject);
  });
}

test('the outage view shows the model of bench/outage.mjs: its counts and its requests per 100 ms, as in Node and in OUTAGE.md', {
  timeout: 90_000,
}, async () => {
  // The default view is the benchmark's first point: the numbers of bench/OUTAGE.md's first rows.
  const page = await open();
  await page.waitForSelector('#outage[data-done="1"]', { timeout: 60_000 });
  const shown = await values(page, 'outage');
  assert.deepEqual(shown.point, { C: 100, K: 20, T: 10_000 });
  const fmt = (x) => Math.round(x).toLocaleString('en-US');
  const md = readFileSync(new URL('../../bench/OUTAGE.md', import.meta.url), 'utf8').split('\n');
  const first = md.findIndex((l) => l.startsWith('| 100 × 20, 10 s |'));
  for (const [i, p] of OUTAGE_POLICIES.entries()) {
    const r = shown.results[p.id];
    const cells = md[first + i].split('|').map((c) => c.trim());
    assert.equal(cells[2], p.name);
    assert.deepEqual(
      [r.sentDuring, r.receivedDown, r.drain, r.median].map(fmt),
      cells.slice(3, 7),
      `${p.name}: the page (actual) vs bench/OUTAGE.md (expected; stale? \`node bench/outage.mjs\` after a release build)`,
    );
  }
  assert.ok(shown.results.gate.sentDuring < 0.1 * shown.results['per-request'].sentDuring, 'the gate sends under 0.1× during the outage');
  await page.locator('#outage').screenshot({ path: `${OUT}/demo-outage.png` });
  // Another point, with policy A's timing: every count and bin as the same runs in Node.
  await page.selectOption('select[name="preset"]', 'decorrelated');
  for (const [k, v] of Object.entries({ C: '20', K: '5', T: '2', runs: '2' })) await page.fill(`input[name="${k}"]`, v);
  await page.selectOption('select[name="outageSchedule"]', 'a');
  await page.waitForFunction(() => {
    const e = document.getElementById('outage');
    return e.dataset.done === '1' && JSON.parse(e.dataset.values).point.C === 20;
  });
  const small = await values(page, 'outage');
  assert.deepEqual(small.point, { C: 20, K: 5, T: 2000 });
  assert.match(await page.$eval('#outage-status', (e) => e.textContent), /mean of 2 of 2 seeded runs \(policy A's timing\)/);
  const { maxAttempts, maxElapsedMs, seed, ...timing } = options({ preset: 'decorrelated' });
  assert.deepEqual(small.results, await nodeOutage(small.point, 2, timing));
  assert.match(page.url(), /C=20&K=5&T=2&runs=2&outageSchedule=a/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

/** The step row of the overload matrix as bench/overload.mjs computes it in Node with `seed` (its --json row). */
function benchStep(seed) {
  const bench = new URL('../../bench/overload.mjs', import.meta.url).pathname;
  const args = [bench, '--matrix', '--rows=^step.*, RA$', `--seed=${seed}`, '--json'];
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { cwd: ROOT }, (e, out) => (e ? reject(e) : resolve(JSON.parse(out)))),
  );
}

test('the overload view shows the step row of bench/overload.mjs --matrix: per second and in all, as the bench in Node for its seed', {
  timeout: 90_000,
}, async () => {
  const inNode = benchStep(DEFAULT_SEED); // (meanwhile, the page)
  const page = await open();
  assert.equal(await page.$eval('#overload-status', (e) => e.textContent), '', 'nothing simulated until the section is near the screen');
  await page.locator('#overload').scrollIntoViewIfNeeded();
  await page.waitForSelector('#overload[data-done="1"]', { timeout: 60_000 });
  const shown = await values(page, 'overload');
  const rows = await inNode;
  assert.deepEqual(
    rows.map((r) => r.name),
    [STEP_ROW],
  );
  assert.equal(shown.seed, DEFAULT_SEED);
  assert.deepEqual(shown.results, { ours: rows[0].ours, sdk: rows[0].sdk }, 'the page vs the bench in Node, same seed');
  // What it shows: the capacity and one line per limiter; the figures, and ours over the SDK's.
  assert.equal(await page.locator('#overload-chart path.line').count(), 3);
  const table = await page.$$eval('#overload-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.equal(table.length, 3);
  assert.equal(table[0][1], String(+shown.results.ours.goodput.toFixed(1)));
  assert.equal(table[1][2], String(shown.results.sdk.throttled));
  assert.equal(shown.results.ours.perSecond.length, 30);
  assert.ok(shown.results.ours.goodput > shown.results.sdk.goodput, 'ours keeps more of the capacity');
  await page.locator('#overload').screenshot({ path: `${OUT}/demo-overload.png` });
  assert.deepEqual(page.problems, []);
  await page.close();
});

const lanes = (page) =>
  page.$$eval('#live-lanes li', (ls) =>
    ls.map((l) => ({ ...l.dataset, attempts: JSON.parse(l.dataset.attempts), waits: JSON.parse(l.dataset.waits) })),
  );
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
async function liveCalls(page, { host, shot }) {
  await page.waitForSelector(`#live[data-endpoint="${host}"]`, { timeout: 20_000 });
  const a = options({ baseMs: '50', maxDelayMs: '100' });
  await startCall(page, '503,503,200');
  await startCall(page, '429ra1,200');
  await startCall(page, '429rl2,200');
  await startCall(page, '503', 'B'); // waits 1, 2, 4, 8 s (503: throttleBaseMs, 10 × 100 ms): aborted on the way
  await startCall(page, 'reset,503,200');
  await page.waitForFunction(() => Number(document.getElementById('live').dataset.inFlight) >= 2, null, { timeout: 5_000 });
  await page.waitForFunction(() => JSON.parse(document.querySelectorAll('#live-lanes li')[3].dataset.attempts).length >= 2);
  await page.click('text=Abort call 4');
  await allDone(page);
  const [c1, c2, c3, c4, c5] = await lanes(page);
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
  if (shot) await page.locator('#live').screenshot({ path: shot });
  // "Server down" (1 s here): a call started then gets 503 until it is back, then its script. (B's
  // waits after a 503, 1 s doubling on throttleBaseMs, span 15 s over its 5 attempts: it outlasts the
  // outage even on a busy machine.)
  await page.click('#live-clear');
  await page.fill('#live-down-s', '1');
  assert.equal(await page.$eval('#live-down', (e) => e.textContent), 'Server down for 1 s');
  await page.click('#live-down');
  await page.waitForSelector('#live[data-downs]');
  await startCall(page, '200', 'B');
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
  await liveCalls(page, { host: 'server', shot: `${OUT}/demo-live.png` });
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
  await page.click('#live-clear');
  await page.fill('#live-down-s', '2');
  await page.click('#live-down');
  await page.waitForSelector('#live[data-downs]');
  await startCall(page, '200', 'A', 'failover');
  await allDone(page);
  const [down] = await lanes(page);
  assert.equal(down.outcome, 'resolved: 200 after 2 attempts; answered by the backup');
  await page.locator('#live').screenshot({ path: `${OUT}/demo-live-steered.png` });
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
    await page.goto(`${statics.url}/www/?baseMs=50&maxDelayMs=100`);
    await page.waitForSelector('body[data-ready="1"]', { timeout: 20_000 });
    assert.equal((await page.request.get(`${statics.url}/www/flaky?probe`)).status(), 404, 'no endpoint on the server');
    await liveCalls(page, { host: 'service worker', shot: `${OUT}/demo-live-static.png` });
    assert.match(await page.$eval('#live-endpoint', (e) => e.textContent), /Service Worker/);
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
