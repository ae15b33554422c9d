// The queue's option readers (TaskQueue's constructor and purge) that are
// not the core's: the policy's options (leaseMs, maxFailures, maxRetentionMs,
// backoff) are read in transitions.js.
import { spec, fn, ms, num, text, required, nullable, quoted } from '../options.js';
import { MAX_TIMER } from '../gen/boundary.js';
import { MemoryStore } from './memory-store.js';
import { FINAL, checkId } from './record.js';

/**
 * An integer >= `lo`.
 * @param {number} lo
 * @param {number} d
 */
export const atLeast = (lo, d) => num(`an integer >= ${lo}`, (v) => Number.isInteger(v) && v >= lo, d);

/**
 * A store: a TaskStore (its required methods checked), or a new MemoryStore
 * for null.
 * @param {any} store
 * @returns {import('./record.js').TaskStore}
 */
function storeOf(store) {
  store ??= new MemoryStore();
  for (const m of ['add', 'get', 'active', 'swap']) {
    if (typeof store?.[m] !== 'function') throw new TypeError(`store must have an ${m}() method (see the TaskStore interface)`);
  }
  return store;
}

/**
 * TaskQueue's options that JavaScript reads (TaskQueueOptions; the core's
 * are the QUEUE rows of js/gen/boundary.js, maxRetentionMs and backoff), in
 * the order they are checked. A store not given is a new MemoryStore
 * (`store ?? new MemoryStore()`: each queue its own).
 */
export const QUEUE_OPTIONS = {
  handler: required(fn()),
  onCompensate: fn(),
  store: spec(() => true, 'a TaskStore', undefined, undefined, storeOf),
  instanceId: text(),
  syncTag: text(),
  concurrency: atLeast(1, 4),
  pollMs: num(`a number in [1, ${MAX_TIMER}]`, (v) => v >= 1 && v <= MAX_TIMER, 1000),
};

/** purge()'s options (PurgeOptions). */
export const PURGE_OPTIONS = {
  olderThan: ms(0),
  // (null: every final state, as undefined)
  states: nullable(
    spec(
      Array.isArray,
      `a non-empty array of ${quoted(FINAL)}`,
      (v) => v.length && v.every((/** @type {any} */ x) => FINAL.includes(x)),
      /** @type {import('./record.js').TaskState[]} */ (FINAL),
    ),
  ),
};

/** enqueue()'s options (EnqueueOptions): a task id (checkId's messages), when it is due. */
export const ENQUEUE_OPTIONS = {
  id: spec(
    () => true,
    'a non-empty string',
    undefined,
    undefined,
    (v) => (checkId(v), v),
  ),
  notBefore: spec(
    (v) => typeof v === 'number' || v instanceof Date,
    'a finite number (ms since the epoch) or a valid Date',
    (v) => Number.isFinite(+v),
    undefined,
    (v) => +v,
  ),
};
