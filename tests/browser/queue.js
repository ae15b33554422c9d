// A page that runs a TaskQueue over IndexedDBStore for
// tests/queue/queue.chromium.test.mjs, which drives it through window.qt.
// ?page=<name> names the page; each handler run is reported to the test
// server (POST /queue-log), which sees every page, including closed ones.
// Payloads script the handler: { ms } succeeds after ms; { fail: true }
// always rejects; { quiet: true } succeeds at once, unreported; { hangOn: <page> } hangs in that page (after reporting
// that it started) and succeeds in any other.
import { TaskQueue, IndexedDBStore } from '/pkg/queue/index.js';

const page = new URL(location.href).searchParams.get('page') ?? '?';
const post = (entry) => fetch('/queue-log', { method: 'POST', body: JSON.stringify({ page, ...entry }) });
const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

async function handler(task, { signal }) {
  const p = task.payload;
  if (p.quiet) return; // no report: for backlogs
  await post({ id: task.id, event: 'start' });
  if (p.fail) throw new Error(`scripted failure of ${task.id}`);
  if (p.hangOn === page) return new Promise(() => {}); // this page never finishes it
  await sleep(p.ms ?? 0, signal);
  // Completion is reported before the queue records it: a task run twice shows up twice.
  await post({ id: task.id, event: 'done' });
}

let queue, store, reads;

/** A pending task's record, never claimed, as a queue writes it. */
const pending = (id, payload, nextAttemptAt, createdAt, seed) => ({
  id,
  payload,
  state: 'pending',
  lockedBy: null,
  completeBy: 0,
  failureCount: 0,
  nextAttemptAt,
  createdAt,
  seed,
  version: 0,
  lastError: null,
});
const events = [];

// Every IndexedDB connection the page opens, and how many the browser closed
// ('close' fires only when the browser, not a script, closes one).
const connections = [];
let closes = 0;
const open = indexedDB.open.bind(indexedDB);
indexedDB.open = (...args) => {
  const req = open(...args);
  req.addEventListener('success', () => {
    connections.push(req.result);
    req.result.addEventListener('close', () => closes++);
  });
  return req;
};

window.qt = {
  /** Makes the queue (not started) over the IndexedDB database `db`; counts the records its reads return. */
  make({ db, ...options }) {
    store = new IndexedDBStore({ name: db });
    const counted = { read: 0 };
    for (const m of ['add', 'get', 'active', 'swap', 'earliest', 'purge']) {
      counted[m] = async (...args) => {
        const out = await store[m](...args);
        if (Array.isArray(out)) counted.read += out.length;
        return out;
      };
    }
    reads = counted;
    queue = new TaskQueue({ ...options, store: counted, handler, instanceId: `${page}-${Date.now()}` });
    for (const type of ['processed', 'retry', 'error', 'storeerror']) {
      queue.addEventListener(type, (e) =>
        events.push({
          type,
          id: e.task?.id,
          state: e.task?.state,
          failures: e.task?.failureCount,
          error: e.error?.name,
          message: String(e.error?.message ?? ''),
          reason: e.reason,
        }),
      );
    }
  },
  start: () => void queue.start(),
  stop: () => queue.stop(),
  /** Enqueues [id, payload, { notBefore: ms from now }?] items in order. */
  enqueue: async (items) => {
    for (const [id, payload, o] of items) {
      await queue.enqueue(payload, { id, notBefore: o?.notBefore === undefined ? undefined : Date.now() + o.notBefore });
    }
  },
  purge: (options) => queue.purge(options),
  /** Writes the record of a task enqueued `ago` ms ago and never claimed, as a queue would have written it. */
  plant: ({ id, payload, ago }) => store.add(pending(id, payload, Date.now() - ago, Date.now() - ago, 1)),
  list: () => store.list(),
  /** Records handed back by the store's reads since make(). */
  reads: () => reads.read,
  /** Writes `n` pending records straight into a database of version 1 (the layout before the due-time indexes). */
  seedVersion1: (db, n) =>
    new Promise((resolve, reject) => {
      const req = indexedDB.open(db, 1);
      req.onupgradeneeded = () => req.result.createObjectStore('tasks', { keyPath: 'id' }).createIndex('state', 'state');
      req.onsuccess = () => {
        const tx = req.result.transaction('tasks', 'readwrite');
        const now = Date.now();
        for (let i = 0; i < n; i++) {
          tx.objectStore('tasks').put(pending(`v${i}`, { quiet: true }, now + i, now, i));
        }
        tx.oncomplete = () => (req.result.close(), resolve());
        tx.onerror = () => reject(tx.error);
      };
      req.onerror = () => reject(req.error);
    }),
  /**
   * Ends the lease of task `id` in database `db` now, as if its completeBy had passed (a page closed
   * mid-task with a long lease): writes completeBy = now - 1 straight into the record; returns it.
   */
  expire: (db, id) =>
    new Promise((resolve, reject) => {
      const req = indexedDB.open(db);
      req.onsuccess = () => {
        const tx = req.result.transaction('tasks', 'readwrite');
        const tasks = tx.objectStore('tasks');
        const completeBy = Date.now() - 1;
        const get = tasks.get(id);
        get.onsuccess = () => tasks.put({ ...get.result, completeBy });
        tx.oncomplete = () => (req.result.close(), resolve(completeBy));
        tx.onerror = () => reject(tx.error);
      };
      req.onerror = () => reject(req.error);
    }),
  events: () => events,
  closes: () => closes,
  /** Closes every connection opened so far, as a script can (no 'close' event). */
  closeConnections: () => {
    for (const db of connections) db.close();
  },
};
document.getElementById('status').textContent = 'ready';
document.body.dataset.ready = '1';
