// The outbox page for tests/queue/queue.sync.chromium.test.mjs, driven through
// window.ob. ?origin=<scripted server> is where tasks are delivered; ?sw=1
// registers the outbox's Service Worker first (and the queue asks for
// Background Sync when tasks are pending).
import { TaskQueue, IndexedDBStore } from '/pkg/queue/index.js';
import { OUTBOX, deliver } from './outbox-common.js';

const params = new URL(location.href).searchParams;
const origin = params.get('origin');
const sw = params.get('sw') === '1';
if (sw) {
  await navigator.serviceWorker.register(`./outbox-sw.js?origin=${encodeURIComponent(origin)}`, { type: 'module' });
  await navigator.serviceWorker.ready;
}

let queue;
const events = [];
window.ob = {
  /** Makes the page's queue on the outbox database (not started). */
  make(options) {
    queue = new TaskQueue({
      store: new IndexedDBStore({ name: OUTBOX.name }),
      handler: deliver(origin, 'page'),
      instanceId: 'page',
      ...(sw ? { syncTag: OUTBOX.syncTag } : {}),
      ...options,
    });
    for (const type of ['processed', 'retry', 'error', 'storeerror']) {
      queue.addEventListener(type, (e) => events.push({ type, id: e.task?.id, message: String(e.error?.message ?? '') }));
    }
  },
  start: () => void queue.start(),
  stop: () => queue.stop(),
  drain: () => queue.drain(),
  enqueue: (id, payload) => queue.enqueue(payload, { id }),
  list: () => new IndexedDBStore({ name: OUTBOX.name }).list(),
  events: () => events,
};
document.getElementById('status').textContent = 'ready';
document.body.dataset.ready = '1';
