// The queue's option readers (TaskQueue's constructor and purge) that are
// not the core's: the policy's options are read in transitions.js.
import { number } from '../options.js';
import { MemoryStore } from './memory-store.js';
import { FINAL } from './record.js';

/**
 * An integer or number option in [lo, hi].
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {number} dflt
 * @param {number} lo
 * @param {boolean} integer
 */
export const bounded = (o, key, dflt, lo, integer, hi = Infinity) =>
  number(
    o,
    key,
    dflt,
    (v) => v >= lo && v <= hi && (!integer || Number.isInteger(v)),
    `${integer ? 'an integer' : 'a number'} ${hi < Infinity ? `in [${lo}, ${hi}]` : `>= ${lo}`}`,
  );

/**
 * The `store` option: a TaskStore (its required methods checked), or a new MemoryStore.
 * @param {any} o
 * @returns {import('./record.js').TaskStore}
 */
export function storeOf(o) {
  const store = o.store ?? new MemoryStore();
  for (const m of ['add', 'get', 'active', 'swap']) {
    if (typeof store?.[m] !== 'function') throw new TypeError(`store must have an ${m}() method (see the TaskStore interface)`);
  }
  return store;
}

/**
 * purge's `states`: a non-empty array of final states (default: all of them).
 * @param {unknown} states
 * @returns {import('./record.js').TaskState[]}
 */
export function finalStates(states) {
  states ??= FINAL;
  if (!Array.isArray(states) || !states.length || !states.every((x) => FINAL.includes(x))) {
    throw new (Array.isArray(states) ? RangeError : TypeError)(
      `states must be a non-empty array of ${FINAL.map((x) => `'${x}'`).join(', ')}`,
    );
  }
  return states;
}
