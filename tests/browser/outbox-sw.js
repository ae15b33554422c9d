// The outbox's Service Worker (a module worker: the queue comes from the
// entry without top-level await, bundler.js). Its queue listens for
// Background Sync's `sync` event with the outbox tag: it retries every
// pending task at once and drains the queue, so tasks a closed page left
// behind are delivered. Long retry delays and polls: a delivery after a
// failure comes from a sync event (or `online`), not from a timer.
import { TaskQueue, IndexedDBStore } from '/pkg/queue/bundler.js';
import { OUTBOX, deliver } from './outbox-common.js';

const origin = new URL(location.href).searchParams.get('origin');
const queue = new TaskQueue({
  store: new IndexedDBStore({ name: OUTBOX.name }),
  syncTag: OUTBOX.syncTag,
  handler: deliver(origin, 'sw'),
  backoff: { baseMs: 60_000, maxDelayMs: 60_000, jitter: 'none' },
  pollMs: 60_000,
  instanceId: 'sw',
});
// At the top level: the `sync` listener must be there when the worker is first evaluated.
queue.start();

addEventListener('install', () => skipWaiting());
addEventListener('activate', (e) => e.waitUntil(clients.claim()));
