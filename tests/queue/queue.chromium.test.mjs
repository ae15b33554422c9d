// The durable task queue in real headless Chromium with IndexedDBStore
// (tests/browser/queue.html): two pages of one origin sharing 200 tasks,
// reloads, the browser closing the database, an upgrade, a handler that
// always fails, retention, notBefore and purge. Each handler run is POSTed
// to the test server (/queue-log), so runs in closed and reloaded pages are
// counted too. In every case every enqueued id must end `processed` or
// `error`. One real-time smoke of a lease across pages (a page closed
// mid-task, its task recovered by another after completeBy); outcomes and
// order only: the exact times are queue.node.test.mjs's, in virtual time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEMO_ROUTES } from '../../scripts/serve.mjs';
import { serverAndBrowser } from '../support/browser.mjs';
import { until } from '../support/wait.mjs';

const log = [];
function queueLog(_url, req, res) {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    log.push({ ...JSON.parse(body), at: Date.now() });
    res.writeHead(204).end();
  });
}
const ctx = serverAndBrowser({ routes: { ...DEMO_ROUTES, '/queue-log': queueLog } });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const runs = (event, ids) => log.filter((e) => e.event === event && ids.has(e.id));

/** A page of `context` at queue.html?page=<name>, ready, recording console errors. */
async function openPage(context, name) {
  const page = await context.newPage();
  page.problems = [];
  page.on('console', (m) => m.type() === 'error' && page.problems.push(m.text()));
  page.on('pageerror', (e) => page.problems.push(String(e)));
  await page.goto(`${ctx.url}/tests/browser/queue.html?page=${name}`);
  await page.waitForSelector('body[data-ready="1"]');
  return page;
}

/** Polls `page`'s store until every id of `ids` is final; returns the records. */
async function settled(page, ids, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const recs = (await page.evaluate(() => window.qt.list())).filter((r) => ids.has(r.id));
    const open = recs.filter((r) => r.state !== 'processed' && r.state !== 'error');
    if (recs.length === ids.size && open.length === 0) return recs;
    if (Date.now() > until) assert.fail(`${open.length} of ${ids.size} tasks not final after ${ms} ms (${ids.size - recs.length} missing)`);
    await sleep(50);
  }
}

const counts = (entries, key) => entries.reduce((m, e) => m.set(e[key], (m.get(e[key]) ?? 0) + 1), new Map());

test('two pages of one origin process 200 tasks at once: each completes exactly once', { timeout: 30_000 }, async () => {
  const context = await ctx.browser.newContext();
  try {
    const [a, b] = await Promise.all([openPage(context, 'A'), openPage(context, 'B')]);
    const options = { db: 'two-pages', leaseMs: 5000, concurrency: 4, pollMs: 50 };
    for (const p of [a, b]) await p.evaluate((o) => (window.qt.make(o), window.qt.start()), options);
    const items = Array.from({ length: 200 }, (_, i) => [`t${i}`, { ms: 5 }]);
    const ids = new Set(items.map(([id]) => id));
    // Each page enqueues half, both claiming from the first moment.
    await Promise.all([
      a.evaluate((it) => window.qt.enqueue(it), items.slice(0, 100)),
      b.evaluate((it) => window.qt.enqueue(it), items.slice(100)),
    ]);
    const recs = await settled(a, ids);
    assert.deepEqual(
      recs.filter((r) => r.state !== 'processed'),
      [],
      'all processed',
    );
    const done = runs('done', ids);
    const perId = counts(done, 'id');
    assert.equal(perId.size, 200, 'every task completed');
    assert.deepEqual(
      [...perId].filter(([, n]) => n !== 1),
      [],
      'no task completed twice',
    );
    assert.equal(runs('start', ids).length, 200, 'no handler ran twice');
    const perPage = counts(done, 'page');
    assert.ok(perPage.get('A') > 0 && perPage.get('B') > 0, `both pages worked: ${JSON.stringify([...perPage])}`);
    const events = [...(await a.evaluate(() => window.qt.events())), ...(await b.evaluate(() => window.qt.events()))];
    assert.equal(events.filter((e) => e.type === 'processed').length, 200, 'one processed event per task, over both pages');
    assert.deepEqual(
      events.filter((e) => e.type !== 'processed'),
      [],
    );
    await Promise.all([a, b].map((p) => p.evaluate(() => window.qt.stop())));
    assert.deepEqual([...a.problems, ...b.problems], []);
  } finally {
    await context.close();
  }
});

test('a page closed in the middle of a task: the other page recovers it after completeBy', { timeout: 30_000 }, async () => {
  const context = await ctx.browser.newContext();
  try {
    // Long leases, so that no run outlives its own on a loaded machine and is taken back as a second
    // failure (page A's own sweep would, if A lived past a short one); A's lease is ended once A is
    // closed, by moving its completeBy into the past (as the time passing would).
    const options = { db: 'closed-page', backoff: { baseMs: 20, jitter: 'none' }, pollMs: 50, leaseMs: 10_000 };
    const a = await openPage(context, 'A');
    await a.evaluate((o) => (window.qt.make(o), window.qt.start()), options);
    const items = [['orphan', { hangOn: 'A' }], ...Array.from({ length: 5 }, (_, i) => [`c${i}`, { ms: 5 }])];
    const ids = new Set(items.map(([id]) => id));
    await a.evaluate((it) => window.qt.enqueue(it), items);
    await until('page A to start the orphan task', () => runs('start', new Set(['orphan'])).length, 5000);
    // The short tasks done first, so that the orphan is the one task in flight when A closes (closed with
    // one of them in flight too, B waited out that one's real 10 s lease: the run took 11 s, not 1).
    const claimed = await until('page A to finish its short tasks', async () => {
      const list = await a.evaluate(() => window.qt.list());
      return list.filter((r) => r.id !== 'orphan').every((r) => r.state === 'processed') && list;
    });
    const orphan = claimed.find((r) => r.id === 'orphan');
    assert.equal(orphan.state, 'processing');
    assert.match(orphan.lockedBy, /^A-/);
    await a.close(); // mid-task: the record stays processing, locked by A

    const b = await openPage(context, 'B');
    const expired = await b.evaluate((db) => window.qt.expire(db, 'orphan'), options.db);
    await b.evaluate((o) => (window.qt.make(o), window.qt.start()), options);
    const recs = await settled(b, ids);
    const rec = recs.find((r) => r.id === 'orphan');
    assert.equal(rec.state, 'processed');
    assert.equal(rec.failureCount, 1, 'the expired lease counted as one failure');
    const done = runs('done', new Set(['orphan']));
    assert.deepEqual(
      done.map((e) => e.page),
      ['B'],
      'completed once, by page B',
    );
    assert.ok(done[0].at >= expired, 'not before the lease of page A expired');
    const events = (await b.evaluate(() => window.qt.events())).filter((e) => e.id === 'orphan');
    assert.deepEqual(
      events.map((e) => [e.type, e.error ?? null]),
      [
        ['retry', 'TimeoutError'],
        ['processed', null],
      ],
    );
    assert.deepEqual(
      recs.filter((r) => r.state !== 'processed'),
      [],
      'nothing lost',
    );
    await b.evaluate(() => window.qt.stop());
    assert.deepEqual(b.problems, []);
  } finally {
    await context.close();
  }
});

test('a reload: pending tasks persist, and resume once a queue starts', { timeout: 30_000 }, async () => {
  const context = await ctx.browser.newContext();
  try {
    const options = { db: 'reload', concurrency: 1, pollMs: 50 };
    const page = await openPage(context, 'R');
    await page.evaluate((o) => window.qt.make(o), options);
    const items = Array.from({ length: 20 }, (_, i) => [`r${i}`, { ms: 1 }]);
    const ids = new Set(items.map(([id]) => id));
    await page.evaluate((it) => window.qt.enqueue(it), items); // not started: only stored

    await page.reload();
    await page.waitForSelector('body[data-ready="1"]');
    await page.evaluate((o) => window.qt.make(o), options);
    const stored = await page.evaluate(() => window.qt.list());
    assert.deepEqual(
      stored.map((r) => [r.id, r.state]).sort(),
      items.map(([id]) => [id, 'pending']).sort(),
      'the 20 tasks survived the reload',
    );
    await page.evaluate(() => window.qt.start());
    const recs = await settled(page, ids);
    assert.deepEqual(
      recs.filter((r) => r.state !== 'processed' || r.failureCount !== 0),
      [],
      'all processed after the reload, none failed',
    );
    const done = runs('done', ids);
    assert.deepEqual(
      [...counts(done, 'id')].filter(([, n]) => n !== 1),
      [],
    );
    assert.equal(done.length, 20, 'each once');
    await page.evaluate(() => window.qt.stop());
    assert.deepEqual(page.problems, []);
  } finally {
    await context.close();
  }
});

test('IndexedDBStore reconnects after the browser closed its connection (site data cleared) or a script did', {
  timeout: 30_000,
}, async () => {
  const context = await ctx.browser.newContext();
  try {
    const page = await openPage(context, 'C');
    await page.evaluate((o) => (window.qt.make(o), window.qt.start()), { db: 'reconnect', pollMs: 20 });
    await page.evaluate(() => window.qt.enqueue([['c1', { ms: 1 }]]));
    await settled(page, new Set(['c1']));
    assert.equal(await page.evaluate(() => window.qt.closes()), 0);
    // What "clear site data" does: Chromium deletes the database and force-closes its connections ('close' event).
    const cdp = await context.newCDPSession(page);
    await cdp.send('Storage.clearDataForOrigin', { origin: ctx.url, storageTypes: 'indexeddb' });
    const until = Date.now() + 5000;
    while ((await page.evaluate(() => window.qt.closes())) === 0) {
      assert.ok(Date.now() < until, 'the browser never closed the connection');
      await sleep(20);
    }
    assert.deepEqual(await page.evaluate(() => window.qt.list()), [], 'a fresh (empty) database');
    await page.evaluate(() => window.qt.enqueue([['c2', { ms: 1 }]]));
    await settled(page, new Set(['c2']));
    // A connection closed by script fires no 'close': the InvalidStateError of the next transaction resets it.
    await page.evaluate(() => window.qt.closeConnections());
    await page.evaluate(() => window.qt.enqueue([['c3', { ms: 1 }]]));
    const recs = await settled(page, new Set(['c2', 'c3']));
    assert.deepEqual(
      recs.map((r) => r.state),
      ['processed', 'processed'],
    );
    const events = await page.evaluate(() => window.qt.events());
    // A pass whose transaction was open at the moment the data was cleared
    // fails once (a storeerror, retried on the next pass); a stuck store would
    // fail every pass and never process c2 and c3.
    const errors = events.filter((e) => e.type !== 'processed');
    assert.ok(errors.length <= 2 && errors.every((e) => e.type === 'storeerror'), JSON.stringify(errors));
    await page.evaluate(() => window.qt.stop());
    assert.deepEqual(page.problems, []);
  } finally {
    await context.close();
  }
});

test('a handler that always fails: the task ends in error after maxFailures, with the error event', { timeout: 30_000 }, async () => {
  const context = await ctx.browser.newContext();
  try {
    const page = await openPage(context, 'F');
    // (no wait between tries: the backoff's timing is queue.node.test.mjs's)
    await page.evaluate((o) => (window.qt.make(o), window.qt.start()), { db: 'fail', maxFailures: 3, backoff: { baseMs: 0 }, pollMs: 50 });
    const ids = new Set(['bad', 'good']);
    await page.evaluate(() =>
      window.qt.enqueue([
        ['bad', { fail: true }],
        ['good', { ms: 1 }],
      ]),
    );
    const recs = await settled(page, ids);
    const bad = recs.find((r) => r.id === 'bad');
    assert.deepEqual([bad.state, bad.failureCount, bad.lastError], ['error', 3, 'scripted failure of bad']);
    assert.equal(recs.find((r) => r.id === 'good').state, 'processed');
    assert.equal(runs('start', new Set(['bad'])).length, 3, 'the handler ran maxFailures times');
    const events = (await page.evaluate(() => window.qt.events())).filter((e) => e.id === 'bad');
    assert.deepEqual(
      events.map((e) => [e.type, e.failures]),
      [
        ['retry', 1],
        ['retry', 2],
        ['error', 3],
      ],
    );
    assert.equal(events[2].message, 'scripted failure of bad');
    // A payload IndexedDB cannot store is refused at enqueue, with the browser's own error.
    const refused = await page.evaluate(() =>
      window.qt.enqueue([['fn', { f: () => 1 }]]).then(
        () => 'stored',
        (e) => e.name,
      ),
    );
    assert.equal(refused, 'DataCloneError');
    assert.equal(
      (await page.evaluate(() => window.qt.list())).some((r) => r.id === 'fn'),
      false,
    );
    await page.evaluate(() => window.qt.stop());
    assert.deepEqual(page.problems, []);
  } finally {
    await context.close();
  }
});

test('IndexedDB: a database of version 1 is upgraded in place, and a pass reads only the records it can act on', {
  timeout: 30_000,
}, async () => {
  const context = await ctx.browser.newContext();
  try {
    const page = await openPage(context, 'U');
    const n = 600; // (enough to tell a linear pass from a quadratic one: 12 000 reads at most; without its limit, a pass read 36 300)
    await page.evaluate((n) => window.qt.seedVersion1('upgrade', n), n);
    await page.evaluate((o) => window.qt.make(o), { db: 'upgrade', pollMs: 1000 });
    const ids = new Set(Array.from({ length: n }, (_, i) => `v${i}`));
    const t0 = Date.now();
    await page.evaluate(() => window.qt.start());
    await page.waitForFunction((n) => window.qt.events().length >= n, n, { polling: 100, timeout: 20_000 });
    const ms = Date.now() - t0;
    const recs = await settled(page, ids);
    assert.deepEqual(
      recs.filter((r) => r.state !== 'processed'),
      [],
      'the records of version 1 were kept and processed',
    );
    // Each pass reads at most concurrency + 1 records per state; reading every
    // active record per pass would be about n²/8 = 45 000 here.
    const reads = await page.evaluate(() => window.qt.reads());
    assert.ok(reads <= 20 * n, `${reads} records read to process ${n} tasks (${ms} ms)`);
    await page.evaluate(() => window.qt.stop());
    assert.deepEqual(page.problems, []);
  } finally {
    await context.close();
  }
});

test('IndexedDB: maxRetentionMs ends a task too old to run, notBefore delays one, purge() deletes finished records', {
  timeout: 30_000,
}, async () => {
  const context = await ctx.browser.newContext();
  try {
    const page = await openPage(context, 'P');
    await page.evaluate((o) => window.qt.make(o), { db: 'retention', maxRetentionMs: 60_000, pollMs: 60_000 });
    // A task enqueued two minutes ago and never claimed: past its retention (written as a queue would have).
    await page.evaluate(() => window.qt.plant({ id: 'stale', payload: { quiet: true }, ago: 120_000 }));
    await page.evaluate(() => window.qt.start());
    await page.evaluate(() =>
      window.qt.enqueue([
        ['fresh', { quiet: true }],
        ['delayed', { quiet: true }, { notBefore: 150 }],
      ]),
    );
    const recs = await settled(page, new Set(['stale', 'fresh', 'delayed']));
    assert.deepEqual(recs.map((r) => [r.id, r.state, r.failureCount]).sort(), [
      ['delayed', 'processed', 0],
      ['fresh', 'processed', 0],
      ['stale', 'error', 0],
    ]);
    const delayed = recs.find((r) => r.id === 'delayed');
    assert.ok(delayed.nextAttemptAt - delayed.createdAt >= 149, 'not claimed before notBefore');
    const events = await page.evaluate(() => window.qt.events());
    assert.deepEqual(
      events.filter((e) => e.type === 'error').map((e) => [e.id, e.reason, e.error]),
      [['stale', 'maxRetention', 'TimeoutError']],
    );
    assert.equal(await page.evaluate(() => window.qt.purge({ states: ['error'] })), 1);
    assert.deepEqual((await page.evaluate(() => window.qt.list())).map((r) => r.id).sort(), ['delayed', 'fresh']);
    assert.equal(await page.evaluate(() => window.qt.purge({ olderThan: 60_000 })), 0, 'none that old');
    assert.equal(await page.evaluate(() => window.qt.purge()), 2);
    assert.deepEqual(await page.evaluate(() => window.qt.list()), []);
    await page.evaluate(() => window.qt.stop());
    assert.deepEqual(page.problems, []);
  } finally {
    await context.close();
  }
});
