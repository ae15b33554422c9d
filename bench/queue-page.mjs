// bench/queue.mjs in Chromium: IndexedDBStore with `n` records (written in
// one transaction, straight through IndexedDB), measured by queue-measure.mjs.
import { TaskQueue, IndexedDBStore } from '/pkg/queue/index.js';
import { records, measure } from './queue-measure.mjs';

window.bench = async (n, k, reps) => {
  const name = `bench-${n}-${Date.now()}`;
  const store = new IndexedDBStore({ name });
  await store.earliest(1); // creates the database and its indexes
  await store.close();
  const t = performance.now();
  await new Promise((resolve, reject) => {
    const req = indexedDB.open(name);
    req.onsuccess = () => {
      const tx = req.result.transaction('tasks', 'readwrite');
      for (const r of records(n, k)) tx.objectStore('tasks').put(r);
      tx.oncomplete = () => (req.result.close(), resolve());
      tx.onerror = () => reject(tx.error);
    };
    req.onerror = () => reject(req.error);
  });
  const seedMs = performance.now() - t;
  const out = { ...(await measure(store, TaskQueue, { k, reps })), seedMs };
  await store.close();
  indexedDB.deleteDatabase(name);
  return out;
};
document.body.dataset.ready = '1';
