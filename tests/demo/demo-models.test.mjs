// The demo page's model views end to end in Chromium, under its strict CSP.
// Every view is driven from the page and what it shows is checked against
// the library computed here in Node: the schedules and histograms of
// policies A and B, the storm curves and their verdict, the swimlanes, the
// outage, overload and reconnect models. Deterministic and CPU-bound (seeded models,
// no real-time assertion), with timeouts for a CPU it shares with the
// other tests; the live calls are tests/demo/demo.test.mjs.
// Screenshots of each view go to test-output/ with SCREENSHOTS=1 (look at them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { Backoff, backoffStats } from 'wasm-backoff/stats';
import { serverAndBrowser } from '../support/browser.mjs';
import { opener, shot } from './page.mjs';
import { ROOT } from '../../scripts/serve.mjs';
import { storm, stormRun, SUCCESS, GAVE_UP } from '../../www/storm.js';
import { options, DEFAULT_B } from '../../www/state.js';
import { PRESETS, STRATEGIES, JITTERS, JITTER_RATIO } from '../../js/gen/boundary.js';
import { OUTAGE_POLICIES, DEFAULT_POINT, DEFAULT_RUNS } from '../../www/outage.js';
import { DEFAULT_SEED, STEP_ROW } from '../../www/overload.js';
import { DEFAULT_POINT as RECONNECT_POINT, RECONNECT_POLICIES, reconnectRun } from '../../www/reconnect.js';
import { WAITING } from '../../www/near.js';
import { STORM_SIZES, STORM_RUNS, DRAWS, BINS, binCounts, isUniform, verdict } from '../../www/compare.js';

const ctx = serverAndBrowser();
const opened = opener(ctx);
/**
 * The demo page, its waits sized for a shared CPU (a model's view may take a while there);
 * its outage view the smallest unless the query names a point (page.mjs, smallOutage).
 */
const open = async (/** @type {any[]} */ ...a) => {
  const page = await opened(...a);
  page.setDefaultTimeout(120_000);
  return page;
};

/** What a section shows (its data-values), once nothing it shows is still being computed. */
async function values(page, id) {
  await page.waitForSelector(`#${id}:not([data-pending="1"])`);
  return JSON.parse(await page.$eval(`#${id}`, (e) => e.dataset.values));
}
/**
 * How much a lazy view may grow when its data comes: a line of its legend (a line that runs on another's
 * says so, and the legend may wrap). Before the views kept their room they grew by 177-552 px at 1100 px.
 */
const ROOM_PX = 30;

/**
 * Checks that section `id` (a view simulated near the screen: www/near.js) has simulated nothing once the
 * page's first paint is past (its `status` element says it waits; its `data` attribute is not set), then
 * scrolls to it. Resolves to a check to call once it is drawn: it kept the room it had while it waited
 * (drawn blank, www/chart.js), so that what is below did not move under the reader's pointer.
 */
async function scrolledTo(page, id, { status = `${id}-status`, data = 'values' } = {}) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 100))));
  assert.equal(await page.$eval(`#${status}`, (e) => e.textContent), WAITING, `${id}: waits for the screen`);
  assert.equal(await page.$eval(`#${id}`, (e, k) => e.dataset[k], data), undefined, `${id}: nothing simulated until it is near the screen`);
  const height = () => page.$eval(`#${id}`, (e) => Math.round(e.getBoundingClientRect().height));
  const waited = await height();
  await page.locator(`#${id}`).scrollIntoViewIfNeeded();
  return async () => {
    const drawn = await height();
    assert.ok(Math.abs(drawn - waited) <= ROOM_PX, `${id}: ${waited} px high while it waited, ${drawn} px once drawn`);
  };
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
  timeout: 300_000,
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
    if (preset === 'gcs') await shot(page, 'demo-controls');
  }
  // A shared URL restores both policies and the view.
  const shared = await open('?preset=grpc&b.strategy=linear&b.baseMs=300&retries=8&log=1');
  assert.equal(await shared.$eval('select[name="preset"]', (e) => e.value), 'grpc');
  assert.equal(await shared.$eval('input[name="b.baseMs"]', (e) => e.value), '300');
  const v = await values(shared, 'schedule');
  assert.equal(v.A.stats.length, 8);
  checkSchedule(v.B, { strategy: 'linear', baseMs: '300' }, 'shared B');
  await shot(shared.locator('#schedule'), 'demo-schedule');
  // A bad value shows the library's own message, naming the policy, instead of breaking the page.
  await shared.fill('input[name="b.baseMs"]', '-5');
  assert.equal(await shared.$eval('#error', (e) => e.textContent), 'Policy B: RangeError: baseMs must be a finite number >= 0');
  assert.deepEqual([...page.problems, ...shared.problems], []);
  await page.close();
  await shared.close();
});

test("the histograms of A and B are the library's draws, binned alike; full jitter gets its exact density", {
  timeout: 300_000,
}, async () => {
  const page = await open('?jitter=full&b.jitter=equal&b.baseMs=300&hist=4');
  // The first load's histograms are drawn by the page; a change's, from the draws of its laws worker.
  for (const attempt of [4, 5]) {
    if (attempt !== 4) await page.fill('input[name="hist"]', String(attempt));
    const v = await values(page, 'distribution');
    assert.equal(v.attempt, attempt);
    for (const [name, fields] of [
      ['A', { jitter: 'full' }],
      ['B', { jitter: 'equal', baseMs: '300' }],
    ]) {
      const o = options(fields);
      const counts = binCounts(Backoff.sample(o, attempt, DRAWS), v.lo, v.hi, BINS);
      assert.deepEqual(v[name].counts, counts, `${name} counts, retry ${attempt}`);
      assert.equal(v[name].uniform, isUniform(backoffStats(o, attempt)), `${name} exact density`);
      assert.equal(v[name].uniform, true);
    }
  }
  await shot(page.locator('#distribution'), 'demo-histogram');
  await page.close();
});

test('the storm curves of A and B and the verdict are those of the model run in Node', { timeout: 300_000 }, async () => {
  const fields = { a: { preset: 'aws', maxAttempts: '8' }, b: { jitter: 'none' } };
  const page = await open('?preset=aws&maxAttempts=8&b.jitter=none');
  const keptRoom = await scrolledTo(page, 'storm', { status: 'verdict', data: 'results' });
  await page.waitForSelector('#storm[data-done="1"]', { timeout: 120_000 });
  await keptRoom();
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
  await shot(page.locator('#storm'), 'demo-storm');
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
  timeout: 300_000,
}, async () => {
  const fields = { A: {}, B: { jitter: 'none' } };
  const page = await open('?laneN=10&laneRun=2');
  const keptRoom = await scrolledTo(page, 'lanes', { status: 'lane-status', data: 'ready' });
  await page.waitForSelector('#lanes[data-ready="1"]', { timeout: 60_000 });
  await keptRoom();
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
  await shot(page.locator('#lanes'), 'demo-swimlanes-end');
  // Scrub to the middle of the (log) axis, then play fast for a moment: time runs, the totals follow it.
  await page.$eval('#lane-scrub', (e) => {
    e.value = '500';
    e.dispatchEvent(new Event('input', { bubbles: true }));
  });
  const mid = await check('scrubbed');
  await shot(page.locator('#lanes'), 'demo-swimlanes');
  await page.selectOption('select[name="speed"]', '64');
  assert.match(page.url(), /speed=64/);
  await page.click('#lane-play');
  await page.waitForFunction((t) => Number(document.getElementById('lanes').dataset.now) > t, mid, { timeout: 60_000 });
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
 * driver needs. Resolves to each policy's means of runs 0…runs-1
 * (outageMeans), and of run 0 alone (`first`: a view of one run).
 */
function nodeOutage(point, runs, schedule) {
  const code = `
    import { parentPort, workerData as w } from 'node:worker_threads';
    const { OUTAGE_POLICIES, loadLib, outageRun, meanOf } = await import(w.model);
    const lib = await loadLib((m) => import(w.entries[m]));
    const means = {}, first = {};
    for (const p of OUTAGE_POLICIES) {
      const all = [];
      for (let run = 0; run < w.runs; run++) all.push(await outageRun(w.point, p, lib, { run, schedule: w.schedule }));
      means[p.id] = meanOf(all);
      first[p.id] = meanOf(all.slice(0, 1));
    }
    parentPort.postMessage({ means, first });`;
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

test('the outage view shows the model of bench/outage.mjs: its counts and its requests per bin, as in Node and in OUTAGE.md', {
  timeout: 300_000,
}, async () => {
  // The default view is the benchmark's first point, 10 seeded runs: bench/OUTAGE.md's first rows. That is
  // checked in Node (a worker thread, meanwhile: 16 s of CPU, against ~45 s in the page on a loaded machine),
  // and the page at the same point computes what Node does (one run of it here, Node's first of the ten;
  // the page and Node run the same code, www/outage.js, so its default view is OUTAGE.md's rows).
  const table = nodeOutage(DEFAULT_POINT, DEFAULT_RUNS);
  const page = await open(`?${new URLSearchParams({ C: DEFAULT_POINT.C, K: DEFAULT_POINT.K, T: DEFAULT_POINT.T / 1000, runs: 1 })}`);
  // (its ~20 s of CPU are spent only once the section comes near the screen, as the overload view's)
  const keptRoom = await scrolledTo(page, 'outage');
  await page.waitForSelector('#outage[data-done="1"]', { timeout: 240_000 });
  await keptRoom();
  const shown = await values(page, 'outage');
  assert.deepEqual(shown.point, DEFAULT_POINT);
  assert.deepEqual(shown.results, (await table).first, 'the page vs Node, one run of the default point (the first of the ten)');
  const fmt = (x) => Math.round(x).toLocaleString('en-US');
  const md = readFileSync(new URL('../../bench/OUTAGE.md', import.meta.url), 'utf8').split('\n');
  const first = md.findIndex((l) => l.startsWith('| 100 × 20, 10 s |'));
  const { means } = await table;
  for (const [i, p] of OUTAGE_POLICIES.entries()) {
    const r = means[p.id];
    const cells = md[first + i].split('|').map((c) => c.trim());
    assert.equal(cells[2], p.name);
    assert.deepEqual(
      [r.sentDuring, r.receivedDown, r.drain, r.median].map(fmt),
      cells.slice(3, 7),
      `${p.name}: the model in Node (actual) vs bench/OUTAGE.md (expected; stale? \`node bench/outage.mjs\` after a release build)`,
    );
  }
  assert.ok(means.gate.sentDuring < 0.1 * means['per-request'].sentDuring, 'the gate sends under 0.1× during the outage');
  // (issue 34) Every row's line can be seen, and none is a comb of stripes: the two gate rows are the same
  // line here (drawn dashed over the first, and the legend says so), and a long run's bins are merged.
  const chart = await page.$eval('#outage-chart', (svg) => ({
    legend: [...svg.previousElementSibling.querySelectorAll('li')].map((li) => li.textContent),
    lines: [...svg.querySelectorAll('path.line')].map((p) => ({
      cls: p.getAttribute('class'),
      steps: p.getAttribute('d').split('L').length,
    })),
    y: svg.textContent,
  }));
  // (At this point the two gate rows differ by at most a few % in a bin: the same line on screen.)
  const dashed = chart.lines.map((l) => / dash\b/.test(l.cls));
  assert.deepEqual(
    chart.lines.map((l) => l.cls.match(/ l(\d)$/)?.[1]),
    ['3', '2', '1', '0'],
    'the earlier, the wider: lines running together all show',
  );
  assert.deepEqual(dashed, [false, false, true, false], 'the default gate row, on the line of the one tripping at once, is dashed');
  assert.equal(chart.legend[3], `${OUTAGE_POLICIES[2].name} (dashed: on the line of ${OUTAGE_POLICIES[1].name})`);
  for (const l of chart.lines) assert.ok(l.steps <= 2 * 80 + 2, `${l.cls}: ${l.steps} steps (bins merged to about 80)`);
  assert.match(chart.y, /requests per 400 ms at the origin/);
  await shot(page.locator('#outage'), 'demo-outage');
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
  assert.deepEqual(small.results, (await nodeOutage(small.point, 2, timing)).means);
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
  timeout: 300_000,
}, async () => {
  const inNode = benchStep(DEFAULT_SEED); // (meanwhile, the page)
  const page = await open();
  const keptRoom = await scrolledTo(page, 'overload');
  await page.waitForSelector('#overload[data-done="1"]', { timeout: 240_000 });
  await keptRoom();
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
  await shot(page.locator('#overload'), 'demo-overload');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the reconnect view waits until it is near the screen, then shows the model of bench/reconnect.mjs at its default point, as in Node', {
  timeout: 120_000,
}, async () => {
  const page = await open();
  const keptRoom = await scrolledTo(page, 'reconnect');
  await page.waitForSelector('#reconnect[data-done="1"]', { timeout: 60_000 });
  await keptRoom();
  const shown = await values(page, 'reconnect');
  // The same model (www/reconnect.js) and calculator in Node, every policy at the default point.
  const want = Object.fromEntries(
    RECONNECT_POLICIES.map((p) => {
      const { perSecond, peak, backMs, attempts, idealMs, left } = reconnectRun(RECONNECT_POINT, p, Backoff);
      return [p.id, { perSecond, peak, backMs, attempts, idealMs, left }];
    }),
  );
  assert.deepEqual(JSON.parse(JSON.stringify(shown)), JSON.parse(JSON.stringify(want)), 'the page vs Node, the default point');
  assert.equal(
    await page.locator('#reconnect-chart path.line').count(),
    1 + RECONNECT_POLICIES.length,
    'the capacity and one line per policy',
  );
  assert.equal(await page.locator('#reconnect-table tbody tr').count(), RECONNECT_POLICIES.length);
  assert.match(await page.$eval('#reconnect-status', (e) => e.textContent), /^10,000 clients, 1,000 new connections a second/);
  assert.deepEqual(page.problems, []);
  await page.close();
});
