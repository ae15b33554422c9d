// The demo's Service Worker: when the page is served as plain static files
// (no demo server), it answers the page's scripted endpoint, `./flaky`, by
// the same rules as the demo server (flaky.js); every other request goes to
// the network untouched. live.js registers it only when no server answers.
import { Flaky } from './flaky.js';

const flaky = new Flaky('service worker');

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()));
self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (url.origin === location.origin && url.pathname === new URL('./flaky', location.href).pathname) e.respondWith(respond(url, e.request));
});

/** A response as the server would send it; a dropped connection is a network error; a hung one answers only when abandoned. */
function respond(url, request) {
  const a = flaky.answer(url);
  if (a.reset) return Response.error();
  if (a.hang)
    return new Promise((resolve) => {
      const gone = () => resolve(Response.error());
      request.signal.addEventListener('abort', gone);
      setTimeout(gone, 60_000); // in case the browser does not tell the worker
    });
  return new Response(a.body, { status: a.status, headers: a.headers });
}
