// @ts-check
// A gate's state as JSON (gate.toJSON(), gate.restore()): each target's
// numbers, as the core saves them (gate::SAVED_*), named by the generated
// boundary; the core checks their ranges when it takes them up.
import { w, mem, OUT } from '../wasm.js';
import { BUCKETS, SAVED, SAVED_LEN, SAVED_STATES } from '../gen/boundary.js';

/** How restore() names what it was given. */
export const WHAT = 'state (from gate.toJSON())';

/**
 * What the core saves of the target of handle `h` at `savedAt`, named; undefined when
 * it has nothing to carry (closed, nothing counted).
 * @param {number} h
 * @param {number} savedAt
 * @returns {import('../../types/gate/index.js').SavedTarget | undefined}
 */
export function saved(h, savedAt) {
  w.gate_save(h, savedAt);
  const v = Array.from(mem().subarray(OUT, OUT + SAVED_LEN));
  /** @type {Record<string, any>} */
  const t = {};
  for (let i = 1; i < SAVED.length; i++) t[SAVED[i]] = v[i];
  t.state = SAVED_STATES[v[1]];
  t.calls = v.slice(SAVED.length, SAVED.length + BUCKETS);
  t.fails = v.slice(SAVED.length + BUCKETS);
  const clean = t.state === 'closed' && t.round === 0 && t.failures === 0 && t.calls.every((/** @type {number} */ x) => x === 0);
  return clean ? undefined : /** @type {any} */ (t);
}

/**
 * The targets of a state from toJSON(), as the numbers the core takes up
 * (gate_restore's scratch record), by key: a TypeError for the wrong shape.
 * @param {unknown} state
 * @returns {[string, number[]][]}
 */
export function rows(state) {
  if (typeof state !== 'object' || state === null) throw new TypeError(`${WHAT} must be an object`);
  const { version, savedAt, targets } = /** @type {any} */ (state);
  if (version !== 1) throw new RangeError(`${WHAT}: version must be 1`);
  if (typeof savedAt !== 'number') throw new TypeError(`${WHAT}: savedAt must be a number`);
  if (typeof targets !== 'object' || targets === null) throw new TypeError(`${WHAT}: targets must be an object`);
  return Object.keys(targets).map((key) => {
    const t = targets[key];
    const bad = (/** @type {string} */ f) => new TypeError(`${WHAT}: targets[${JSON.stringify(key)}].${f} has the wrong type`);
    if (typeof t !== 'object' || t === null) throw bad('');
    const v = [savedAt, SAVED_STATES.indexOf(t.state)];
    if (v[1] < 0) throw bad('state');
    for (let i = 2; i < SAVED.length; i++) {
      const x = t[SAVED[i]] ?? (SAVED[i] === 'windowAt' ? NaN : undefined);
      if (typeof x !== 'number') throw bad(SAVED[i]);
      v.push(x);
    }
    for (const f of ['calls', 'fails']) {
      if (!Array.isArray(t[f]) || t[f].length !== BUCKETS || !t[f].every((x) => typeof x === 'number')) throw bad(f);
      v.push(...t[f]);
    }
    return [key, v];
  });
}
