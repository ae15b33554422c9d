// The docs site's Service Worker (scripts/site.mjs copies it to the site's
// root as sw.js): offline after the first visit. On install it stores every
// file of the site (precache.js, written by site.mjs: the list and a hash of
// their contents, the cache's name); then each same-origin GET goes to the
// network first, refreshing the stored copy, and is answered from the cache
// when the network fails. The pages of the site register it; the demo's own
// Service Worker (www/sw.js, scope www/) imports it in the site's copy, so the
// demo works offline too. The demo's scripted endpoint (www/flaky) is left to
// that worker.
import { FILES, VERSION } from './precache.js';

const ROOT = new URL('./', import.meta.url);
const CACHE = `wasm-backoff-site-${VERSION}`;
const FLAKY = new URL('www/flaky', ROOT).pathname;

self.addEventListener('install', (e) => {
  e.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES.map((f) => new URL(f, ROOT)))));
  self.skipWaiting();
});
self.addEventListener('activate', (e) => {
  const old = (k) => k.startsWith('wasm-backoff-site-') && k !== CACHE;
  e.waitUntil(caches.keys().then((ks) => Promise.all(ks.filter(old).map((k) => caches.delete(k)))));
});
self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url);
  if (e.request.method !== 'GET' || url.origin !== location.origin || url.pathname === FLAKY) return;
  e.respondWith(fresh(e.request));
});

/** The network's answer (stored for next time), or the stored one when the network fails. */
async function fresh(request) {
  const cache = await caches.open(CACHE);
  try {
    const res = await fetch(request);
    if (res.ok && res.type === 'basic') await cache.put(request, res.clone());
    return res;
  } catch (err) {
    const stored = await cache.match(request, { ignoreSearch: request.mode === 'navigate' });
    if (stored) return stored;
    throw err;
  }
}
