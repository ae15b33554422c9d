// The task record: its states and due times, the checks every store and
// the queue apply to a record and its id, and how a new task's id and seed
// are drawn.
import { TASK_STATES } from '../gen/boundary.js';

/** @typedef {import('../../types/queue/index.js').TaskRecord<any>} TaskRecord its payload is the user's */
/** @typedef {import('../../types/queue/index.js').TaskState} TaskState */
/** @typedef {import('../../types/queue/index.js').TaskStore} TaskStore */

/**
 * @template T
 * @param {T} v
 * @returns {T}
 */
export const clone = (v) => structuredClone(v);

/**
 * The time a record's next step falls due, by its state: the retry for pending, the lease's end for processing.
 * @type {Record<string, 'nextAttemptAt' | 'completeBy'>}
 */
export const INDEXED = { pending: 'nextAttemptAt', processing: 'completeBy' };
/** The final states (what purge() deletes). */
export const FINAL = TASK_STATES.filter((x) => !INDEXED[x]);

/**
 * A task's seed from the queue's seed and the task's id: 53 bits of a
 * 64-bit hash of both (cyrb53, by bryc, public domain), so two distinct ids
 * share a stream with probability about n²/2^54 (a 32-bit hash made that a
 * coin toss at 77 000 tasks).
 * @param {number} seed a safe integer
 * @param {string} id
 */
export function taskSeed(seed, id) {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ Math.floor(seed / 2 ** 32);
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

export const randomId = () => [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, '0')).join('');

/**
 * Whether `r` is a record the passes can act on: an object with a string id,
 * an active state, finite times, counts, seed and version. Any other record
 * a store hands back (no seed, null, an unknown state, a string time) is
 * reported once and stepped past: it neither holds a slot nor sets the time
 * of the next pass (DurableObjectStore's alarm skips it too).
 * @param {any} r
 * @returns {r is TaskRecord}
 */
export function isTask(r) {
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.id === 'string' &&
    Object.hasOwn(INDEXED, r.state) &&
    [r.nextAttemptAt, r.completeBy, r.createdAt, r.failureCount, r.seed, r.version].every(Number.isFinite)
  );
}

/**
 * Refuses what is no non-empty string (an id, a name, a tag).
 * @param {unknown} v
 * @param {string} what its name in the message
 * @returns {asserts v is string}
 */
export function nonEmpty(v, what) {
  if (typeof v !== 'string' || !v) throw new TypeError(`${what} must be a non-empty string`);
}

/** A lone surrogate (what a UTF-8 key cannot hold: stored as U+FFFD, another key). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Refuses a task id that is no well-formed string: a lone surrogate (an id
 * taken from JSON, say) would be stored under U+FFFD by a UTF-8 store, where
 * its record is never found again.
 * @param {unknown} id
 */
export function checkId(id) {
  nonEmpty(id, 'id');
  if (LONE_SURROGATE.test(id)) throw new RangeError('id must be a well-formed string (it has a lone surrogate, e.g. \\ud800)');
}
