/**
 * Background Sync for a queue in a Service Worker: with a `syncTag`, pending
 * tasks are replayed on the browser's `sync` event, even after every page of
 * the origin closed. It uses the queue's public methods only (retryNow,
 * drain). `listen(method)` adds or removes the `sync` listener ('addEventListener'
 * or 'removeEventListener'); `register()` asks the browser for a sync.
 * @param {{ retryNow(): Promise<number>, drain(): Promise<number> }} queue
 * @param {string} tag the queue's `syncTag`
 */
export function backgroundSync(queue, tag) {
  let syncing = 0; // sync events being handled
  /** @type {Promise<void> | undefined} */
  let registering; // a Background Sync registration in flight

  /**
   * Background Sync's `sync` event: retries every task now and drains. It
   * fails (so the browser retries the sync later, with its own backoff)
   * while any task is left pending or processing.
   */
  const replay = async () => {
    syncing++;
    try {
      await queue.retryNow();
      const next = await queue.drain();
      if (next !== Infinity) throw new Error('tasks are still pending: the browser retries this sync later');
    } finally {
      syncing--;
    }
  };

  /** @param {any} e a SyncEvent */
  const onSync = (e) => {
    if (e.tag === tag) e.waitUntil(replay());
  };

  return {
    /** @param {'addEventListener' | 'removeEventListener'} method */
    listen(method) {
      const g = /** @type {any} */ (globalThis); // (ServiceWorkerGlobalScope is not in the DOM lib)
      const sw = g.ServiceWorkerGlobalScope;
      if (typeof sw === 'function' && g instanceof sw) g[method]('sync', onSync);
    },

    /**
     * Asks the browser for a Background Sync with the tag (when a Service
     * Worker is registered), so that pending tasks are replayed even after
     * every page of the origin closed. Not while handling that event (a
     * failed replay is retried by the browser itself), nor twice at once.
     */
    register() {
      const g = /** @type {any} */ (globalThis); // (a Service Worker's registration is not in the DOM lib)
      if (syncing || registering) return;
      const reg = g.registration?.sync ? Promise.resolve(g.registration) : g.navigator?.serviceWorker?.getRegistration();
      // (Background Sync is an extra: a refusal changes nothing else)
      registering = reg
        ?.then((/** @type {any} */ r) => r?.sync?.register(tag))
        .catch(() => {})
        .finally(() => {
          registering = undefined;
        });
    },
  };
}
