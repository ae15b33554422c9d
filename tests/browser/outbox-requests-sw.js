// The Service Worker of tests/queue/outbox.chromium.test.mjs: an Outbox
// (wasm-backoff/outbox, the entry without top-level await) that POSTs to
// the scripted server's /forms go through: answered by the network when it
// answers, stored (202) on a network failure, replayed on Background Sync.
// A minute between replays: a delivery after a failure comes from `sync`.
import { Outbox } from '/pkg/outbox/bundler.js';

const outbox = new Outbox({
  name: 'requests',
  retry: { baseMs: 10, maxAttempts: 2 },
  queue: { backoff: { baseMs: 60_000, maxDelayMs: 60_000, jitter: 'none' }, pollMs: 60_000, instanceId: 'sw' },
});
// At the top level: the `sync` listener must be there when the worker is first evaluated.
outbox.start();

addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (e.request.method === 'POST' && url.pathname === '/forms') e.respondWith(outbox.fetch(e.request));
});
addEventListener('install', () => skipWaiting());
addEventListener('activate', (e) => e.waitUntil(clients.claim()));
