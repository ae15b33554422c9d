// The page of tests/queue/outbox.chromium.test.mjs's offline checks, driven
// through window.op: an Outbox with every default (IndexedDB, the queue's
// and the replay's default schedules, maxFailures 5), started, in the page
// itself. `post(origin, body)` sends a form through outbox.fetch (202 with
// `outbox-id` when it was stored), `record(id)` reads the task's record,
// `events()` the queue's events so far.
import { Outbox } from '/pkg/outbox/index.js';

const outbox = new Outbox({ name: 'page-requests' }).start();
const events = [];
for (const type of ['processed', 'retry', 'error', 'storeerror']) {
  outbox.queue.addEventListener(type, (e) =>
    events.push({ type, id: e.task?.id, failureCount: e.task?.failureCount, reason: e.reason, error: String(e.error?.message ?? '') }),
  );
}

window.op = {
  async post(origin, body) {
    const request = new Request(`${origin}/forms`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
    const res = await outbox.fetch(request);
    return { status: res.status, id: res.headers.get('outbox-id') };
  },
  record: (id) => outbox.queue.get(id),
  events: () => events,
  onLine: () => navigator.onLine,
};
document.getElementById('status').textContent = 'ready';
document.body.dataset.ready = '1';
