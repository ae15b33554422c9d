// @ts-check
// The JavaScript side of the boundary (src/schema.rs describes it; the
// numbers and messages come from js/gen/boundary.js, generated from it).
//
// Only numbers cross: options are written into one record in wasm memory
// and read by the constructor called next; objects are handles into the
// module's slabs; answers are numbers, or a result record read right after
// the call. The module's exports are called directly: every one takes and
// returns plain numbers (extern "C" functions: no binding glue at all).
import { w } from '#load';
import {
  E_JITTER_ADD_MAX_MS,
  E_JITTER_RATIO,
  F_JITTER,
  F_JITTER_AMOUNT,
  F_SEED,
  JITTERS,
  JITTER_ADD_MAX_MS,
  JITTER_RATIO,
  MESSAGES,
} from './gen/boundary.js';

export { w };
import { own, quoted } from './options.js';

let f64 = new Float64Array(w.memory.buffer);

/**
 * The module's memory as f64s. A constructor may grow the memory, which
 * detaches the old buffer (its views read as empty): then a fresh view.
 */
export const mem = () => (f64.length ? f64 : (f64 = new Float64Array(w.memory.buffer)));

/** Offsets (in f64s) of the options record, the result record and the scratch buffer. */
export const OPTS = w.opts() / 8;
export const OUT = w.out() / 8;
export const SCRATCH = w.scratch() / 8;

/**
 * Throws the error of a constructor's answer `h` when it is one (minus a code).
 * @param {number} h
 * @param {string[]} [messages] the gate's callers pass GATE_MESSAGES, the queue's ALL_MESSAGES
 */
export function check(h, messages = MESSAGES) {
  if (h < 0) throw new RangeError(messages[-h]);
  return h;
}

/**
 * `v` as a number for the record; NaN (not given) when undefined.
 * @param {unknown} v
 * @param {string} msg the message a wrong type throws
 */
const num = (v, msg) => {
  if (v === undefined) return NaN;
  // A NaN would read as "not given": it is out of every range.
  if (typeof v !== 'number' || Number.isNaN(v)) throw new (typeof v === 'number' ? RangeError : TypeError)(msg);
  return v;
};

/**
 * The index of `v` in `values`; NaN when undefined.
 * @param {unknown} v
 * @param {string} key
 * @param {string[]} values
 */
export function choice(v, key, values) {
  if (v === undefined) return NaN;
  const i = values.indexOf(/** @type {string} */ (v));
  if (i < 0) throw new (typeof v === 'string' ? RangeError : TypeError)(`${key} must be one of ${quoted(values)}`);
  return i;
}

/**
 * Writes the fields of one section of the options record (`SCHEDULE`,
 * `GATE`, `QUEUE`) from `o` (from `own`), NaN for those not given; checks
 * their types (the module checks the ranges). The schedule's jitter and seed
 * are read here too: without a seed, `seed()` supplies one.
 * @param {Record<string, any>} o
 * @param {[number, [string, 0 | 1 | string[], string][]]} section
 * @param {() => number} [seed] the seed when none is given
 */
export function write(o, [from, rows], seed = entropy) {
  // Every value is read and checked first (a getter of a nested object, such
  // as jitter's, may even make a Backoff of its own), then written at once.
  const values = rows.map(([key, kind, msg]) => (kind === 1 ? NaN : kind ? choice(o[key], key, kind) : num(o[key], msg)));
  if (from === 0) {
    let jitter = NaN;
    let amount = NaN;
    const j = o.jitter;
    if (j !== undefined) {
      const obj = typeof j === 'object' && j !== null && own(j);
      // The strings come first in JITTERS; an object has exactly one of { ratio } and { addMaxMs }.
      jitter = obj
        ? [NaN, JITTER_RATIO, JITTER_ADD_MAX_MS][+(obj.ratio !== undefined) + 2 * +(obj.addMaxMs !== undefined)]
        : JITTERS.indexOf(j);
      if (!(jitter >= 0 && (obj || jitter < JITTER_RATIO))) throw new (typeof j === 'string' ? RangeError : TypeError)(rows[F_JITTER][2]);
      if (obj) amount = num(obj[JITTERS[jitter]], MESSAGES[jitter === JITTER_RATIO ? E_JITTER_RATIO : E_JITTER_ADD_MAX_MS]);
    }
    values[F_JITTER] = jitter;
    values[F_JITTER_AMOUNT] = amount;
    values[F_SEED] = o.seed === undefined ? seed() : num(o.seed, rows[F_SEED][2]);
  }
  mem().set(values, OPTS + from);
}

/**
 * A copy of the options record up to the end of `section` (what `write`
 * wrote), for `load` to put back before each constructor call.
 * @param {[number, unknown[]]} section
 * @returns {number[]}
 */
export function record([from, rows]) {
  // A plain array: a new Float64Array costs ~300 ns in V8, ten times this.
  const m = mem();
  const r = [];
  for (let i = OPTS; i < OPTS + from + rows.length; i++) r.push(m[i]);
  return r;
}

/**
 * Puts a record made by `write` back into the options record (with a fresh
 * seed unless the options named one), for the next constructor call.
 * @param {number[]} rec
 * @param {boolean} seeded
 */
export function load(rec, seeded) {
  const m = mem();
  m.set(rec, OPTS);
  if (!seeded) m[OPTS + F_SEED] = entropy();
}

/**
 * A fresh 53-bit seed from `crypto.getRandomValues`, which every supported
 * runtime has (browsers, workers, workerd, Deno, Bun, Node >= 19); never a
 * constant. Drawn here rather than through getrandom in wasm: the same call,
 * without the glue that would cost every user bytes. (workerd forbids random
 * values at module scope: nothing calls this until a schedule is made.)
 */
export function entropy() {
  if (left < 2) crypto.getRandomValues(pool), (left = 256);
  return (pool[--left] & 0x1fffff) * 2 ** 32 + pool[--left];
}
/** Random words drawn 256 at a time: one crypto call per 128 seeds (measured, 1.8 µs each), not per seed. */
const pool = new Uint32Array(256);
let left = 0;
