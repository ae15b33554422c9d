// The Service Worker of docs/queue.md's outbox recipe, as the docs write it
// (every default: the queue's schedule, maxFailures 5, the replay's three
// tries), for tests/queue/outbox.chromium.test.mjs's offline check. Its
// page is outbox-requests.html?sw=docs.
import { Outbox } from '/pkg/outbox/bundler.js';

const outbox = new Outbox({ name: 'requests' });
outbox.start(); // at the top level: the `sync` listener must exist when the worker starts

addEventListener('fetch', (e) => {
  if (e.request.method === 'POST' && new URL(e.request.url).pathname === '/forms') e.respondWith(outbox.fetch(e.request));
});
addEventListener('install', () => skipWaiting());
addEventListener('activate', (e) => e.waitUntil(clients.claim()));
