// 7. The task queue against the size of its backlog: what one pass reads,
// and what a task costs, with 10^3, 10^4 and 10^5 pending records in each
// store: MemoryStore (Node), IndexedDBStore (headless Chromium) and
// DurableObjectStore (workerd through miniflare, a SQLite-backed object).
//
// Per store and size, the records are written first (K of them due, the
// others due in an hour), then (bench/queue-measure.mjs):
//   - earliest(5): the read of one pass (concurrency 4, + 1), median of R;
//   - active(): what every pass read before issue 14 (each pending record);
//   - per task: drain() of the K due tasks, handler resolving at once, ÷ K
//     (one pass, the claim and the completion: a read and two writes).
// workerd's clock stands still while code only computes: its figures are the
// Node side's timing of calls into the object, minus an empty call.
//
//   node bench/queue.mjs [--quick]    prints the section (bench/run.mjs imports queueSection)
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { TaskQueue, MemoryStore } from 'wasm-backoff/queue';
import { serve } from '../scripts/serve.mjs';
import { launch } from '../tests/support/browser.mjs';
import { records, measure } from './queue-measure.mjs';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const K = 200;

const fmt = (ms) => (ms < 0.1 ? `${(ms * 1000).toFixed(0)} µs` : ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(0)} ms`);

async function memory(n, reps) {
  const store = new MemoryStore();
  const t = performance.now();
  for (const r of records(n, K)) await store.add(r);
  const seedMs = performance.now() - t;
  return { ...(await measure(store, TaskQueue, { k: K, reps })), seedMs };
}

async function chromium(sizes, reps, log) {
  const site = await serve({});
  const browser = await launch();
  try {
    const page = await browser.newPage();
    await page.goto(`${site.url}/bench/queue.html`);
    await page.waitForSelector('body[data-ready="1"]');
    const out = {};
    for (const n of sizes) {
      log(`[bench] queue: IndexedDB, ${n} records`);
      out[n] = await page.evaluate(([n, k, reps]) => window.bench(n, k, reps), [n, K, reps]);
    }
    return out;
  } finally {
    await browser.close();
    site.server.close();
  }
}

async function workerd(sizes, reps, log) {
  const mf = new Miniflare({
    modules: true,
    scriptPath: path.join(BENCH, 'queue-worker.mjs'),
    modulesRoot: path.join(BENCH, '..'),
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: '2025-07-01',
    durableObjects: { BENCH: { className: 'Bench', useSQLite: true } },
  });
  const call = async (route) => {
    const t = performance.now();
    // (a connection of the pool that workerd closed meanwhile is reset once: then again, on a new one)
    const res = await mf.dispatchFetch(`http://bench${route}`).catch(() => mf.dispatchFetch(`http://bench${route}`));
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${route}: ${res.status} ${text}`);
    return performance.now() - t;
  };
  const median = async (r, route) => {
    const ms = [];
    for (let i = 0; i < r; i++) ms.push(await call(route));
    return ms.sort((a, b) => a - b)[ms.length >> 1];
  };
  try {
    const out = {};
    for (const n of sizes) {
      log(`[bench] queue: Durable Object, ${n} records`);
      let seedMs = 0;
      for (let from = 0; from < n; from += 10_000) seedMs += await call(`/seed?n=${n}&k=${K}&from=${from}&to=${from + 10_000}`);
      const empty = await median(9, `/noop?n=${n}`);
      // Per call: `reps` reads in one call into the object.
      const per = async (method, r) => Math.max(0, ((await median(3, `/${method}?n=${n}&reps=${r}`)) - empty) / r);
      const earliestMs = await per('earliest', reps);
      const activeMs = await per('active', Math.max(1, reps >> 3));
      const perTaskMs = Math.max(0, (await call(`/drain?n=${n}&k=${K}`)) - empty) / K;
      out[n] = { earliestMs, activeMs, perTaskMs, seedMs };
    }
    return out;
  } finally {
    await mf.dispose();
  }
}

export async function queueSection({ quick = false, log = () => {} } = {}) {
  const sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const reps = quick ? 9 : 41;
  const rows = [];
  const add = (name, n, r) =>
    rows.push(
      `| ${name} | ${n.toLocaleString('en')} | ${fmt(r.earliestMs)} | ${fmt(r.activeMs)} | ${fmt(r.perTaskMs)} | ${fmt(r.seedMs)} |`,
    );
  for (const n of sizes) {
    log(`[bench] queue: MemoryStore, ${n} records`);
    add('MemoryStore (Node)', n, await memory(n, reps));
  }
  const idb = await chromium(sizes, reps, log);
  for (const n of sizes) add('IndexedDBStore (Chromium)', n, idb[n]);
  const dos = await workerd(sizes, reps, log);
  for (const n of sizes) add('DurableObjectStore (workerd)', n, dos[n]);
  return [
    `Each store holds n pending records, ${K} of them due. **A pass** reads \`earliest(5)\` (the five pending records due first, and the five leases ending first; concurrency 4 + 1); before issue 14 every pass read \`active()\`, every pending and processing record. **Per task**: \`drain()\` of the ${K} due tasks with a handler that resolves at once, ÷ ${K} (a pass, the claim and the completion). Medians of ${reps} reads (active(): ${Math.max(1, reps >> 3)}). The Durable Object's figures are timed from Node around calls into the object, minus an empty call (its clock stands still while it computes). Written: the time to put the n records in (through the store for memory and the Durable Object, one add each; one IndexedDB transaction in the page).`,
    '',
    '| store | n | a pass reads (`earliest(5)`) | every pass read before (`active()`) | per task (pass + 2 writes) | writing the n records |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows,
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const lines = await queueSection({ quick: process.argv.includes('--quick'), log: (m) => process.stderr.write(`${m}\n`) });
  console.log(lines.join('\n'));
}
