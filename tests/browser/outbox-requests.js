// The page of tests/queue/outbox.chromium.test.mjs, driven through window.rq:
// registers the outbox's Service Worker (?sw=docs: the docs' recipe,
// outbox-docs-sw.js, else outbox-requests-sw.js) and waits until it
// controls the page; `post(origin, body)` POSTs a form, `list()` reads the
// outbox's records.
import { IndexedDBStore } from '/pkg/queue/index.js';

const docs = new URL(location.href).searchParams.get('sw') === 'docs';
await navigator.serviceWorker.register(docs ? './outbox-docs-sw.js' : './outbox-requests-sw.js', { type: 'module' });
await navigator.serviceWorker.ready;
if (!navigator.serviceWorker.controller) {
  await new Promise((resolve) => navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }));
}

window.rq = {
  async post(origin, body) {
    const res = await fetch(`${origin}/forms`, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
    return { status: res.status, id: res.headers.get('outbox-id') };
  },
  list: () => new IndexedDBStore({ name: 'requests' }).list(),
};
document.getElementById('status').textContent = 'ready';
document.body.dataset.ready = '1';
