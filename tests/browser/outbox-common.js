// What the outbox page (outbox.js) and its Service Worker (outbox-sw.js)
// share for tests/queue/queue.sync.chromium.test.mjs: the database, the sync
// tag and the handler, which POSTs each task to the scripted server's
// /deliver (a cross-origin simple request), naming who delivered it.
export const OUTBOX = { name: 'outbox', syncTag: 'outbox' };

/** The handler of `by` ('page' or 'sw'): a non-2xx answer is a failure (retried). */
export const deliver =
  (origin, by) =>
  async (task, { signal }) => {
    const res = await fetch(`${origin}/deliver?id=${encodeURIComponent(task.id)}&by=${by}`, {
      method: 'POST',
      body: JSON.stringify(task.payload),
      signal,
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
  };
