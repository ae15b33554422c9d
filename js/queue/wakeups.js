// What wakes a queue besides its timers: connectivity coming back (the
// browser's `online`: tasks that failed or waited for the network meanwhile
// are due now, retryNow), the page becoming visible (another tab may have
// stored tasks), and in a Service Worker Background Sync's `sync` event
// (background-sync.js).
import { w } from '../wasm.js';
import { networkWaitsOf } from './errors.js';
import { isTask } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

/**
 * The browser's wake-up listeners of a started queue: `online` calls
 * `online()`, the page becoming visible `wake()`, and `sync` (with a
 * syncTag) replays; the function returned adds or removes them all.
 * @param {{ online: () => void, wake: () => void, sync?: { listen(method: string): void } }} q
 * @returns {(method: 'addEventListener' | 'removeEventListener') => void}
 */
export function wakeups({ online, wake, sync }) {
  const onOnline = () => online();
  const onVisible = () => {
    if (document.visibilityState === 'visible') wake();
  };
  return (method) => {
    const g = globalThis;
    if (typeof g.addEventListener !== 'function') return;
    g[method]('online', onOnline);
    if (typeof document === 'object') document[method]('visibilitychange', onVisible);
    sync?.listen(method);
  };
}

/**
 * Every pending task of `store` waiting for a retry after a failure or a
 * network wait becomes due `now` (the core's queue_retry_now); tasks never
 * tried keep their `notBefore`. Reads every active record; resolves with
 * how many tasks it brought forward.
 * @param {import('./record.js').TaskStore} store
 * @param {import('./transitions.js').Transitions} t
 * @param {number} now
 */
export async function retryDue(store, t, now) {
  let n = 0;
  for (const r of await store.active()) {
    if (!isTask(r)) continue; // (a pass reports it)
    // (to the core, a network wait is a try that failed too; the record keeps its own count)
    const tried = { ...r, failureCount: r.failureCount + networkWaitsOf(r) };
    const h = /** @type {TaskRecord | undefined} */ (t.step(w.queue_retry_now, tried, now));
    if (h) h.failureCount = r.failureCount;
    if (h && (await store.swap(r, h))) n++;
  }
  return n;
}
