// @ts-check
// Every option reader, in one module free of wasm (the budget and the
// fleet's budget import it without loading the module): each reads one
// option of a record from `own` (its own properties, each read once, so a
// getter cannot answer the check and the use differently and nothing on
// Object.prototype is read), and throws a TypeError (wrong type) or a
// RangeError (out of range) whose message names the option.

/**
 * The own enumerable properties of an options object, each read once, in a
 * null-prototype copy: a getter cannot answer differently to the check and
 * to the use, and properties on `Object.prototype` change nothing.
 * @param {unknown} [o]
 * @param {string} [what] the argument's name in the error
 * @returns {Record<string, any>}
 */
export function own(o, what = 'options') {
  if (o != null && typeof o !== 'object') throw new TypeError(`${what} must be an object`);
  return Object.assign(Object.create(null), o);
}

/**
 * A number option read by JS alone (the fetch driver's, the gate's per-call
 * limits): `o[key]`, or `dflt` when undefined; else a number passing `ok`,
 * described by `what` in the error.
 * @template T
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {T} dflt
 * @param {(v: number) => boolean} ok
 * @param {string} what
 * @returns {number | T}
 */
export function number(o, key, dflt, ok, what) {
  const v = o[key];
  if (v === undefined) return dflt;
  const msg = `${key} must be ${what}`;
  if (typeof v !== 'number') throw new TypeError(msg);
  if (!ok(v)) throw new RangeError(msg);
  return v;
}

/**
 * A function option: `o[key]`, which may be undefined unless `required`.
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {boolean} [required]
 * @returns {any}
 */
export function fn(o, key, required) {
  const f = o[key];
  if (typeof f !== 'function' && (required || f !== undefined)) throw new TypeError(`${key} must be a function`);
  return f;
}

/**
 * An integer argument in [lo, hi].
 * @param {unknown} v
 * @param {string} name
 * @param {number} lo
 * @param {number} hi
 */
export function integer(v, name, lo, hi) {
  const msg = `${name} must be an integer in [${lo}, ${hi}]`;
  if (typeof v !== 'number') throw new TypeError(msg);
  if (!(Number.isInteger(v) && v >= lo && v <= hi)) throw new RangeError(msg);
  return v;
}

/**
 * A number option in ms: > 0 (`positive`) or >= 0.
 * @template T
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {T} dflt
 * @param {boolean} [positive]
 */
export const ms = (o, key, dflt, positive) =>
  number(o, key, dflt, (v) => (positive ? v > 0 : v >= 0), `a number ${positive ? '> 0' : '>= 0'}`);

/**
 * A list option as a Set: `dflt` (a Set) when undefined, else an array
 * whose entries pass `ok` (mapped by `map`).
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {Set<any>} dflt
 * @param {(v: any) => boolean} ok
 * @param {string} what
 * @param {(v: any) => any} [map]
 */
export function list(o, key, dflt, ok, what, map = (v) => v) {
  const v = o[key];
  if (v === undefined) return dflt;
  const msg = `${key} must be an array of ${what}`;
  if (!Array.isArray(v)) throw new TypeError(msg);
  for (const x of v) if (!ok(x)) throw new RangeError(msg);
  return new Set(v.map(map));
}

/**
 * A list of HTTP statuses as a Set (`retryOn` of the fetch driver and of
 * the query adapters): `dflt` when undefined.
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {Set<number>} dflt
 */
export const statuses = (o, key, dflt) =>
  list(o, key, dflt, (s) => Number.isInteger(s) && s >= 100 && s <= 599, 'integer HTTP statuses (100-599)');

/**
 * A boolean option, `dflt` when not given.
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {boolean} [dflt]
 * @returns {boolean}
 */
export function flag(o, key, dflt = false) {
  const v = o[key];
  if (v !== undefined && typeof v !== 'boolean') throw new TypeError(`${key} must be a boolean`);
  return v ?? dflt;
}

/**
 * A finite number option of the budget: `o[key]`, `dflt` when undefined.
 * @param {any} o
 * @param {string} key
 * @param {number} dflt
 * @param {boolean} [positive] > 0 rather than >= 0
 */
export function option(o, key, dflt, positive) {
  const v = o[key];
  if (v === undefined) return dflt;
  const msg = `${key} must be a finite number ${positive ? '> 0' : '>= 0'}`;
  if (typeof v !== 'number') throw new TypeError(msg);
  if (!(Number.isFinite(v) && (positive ? v > 0 : v >= 0))) throw new RangeError(msg);
  return v;
}

/**
 * An `AbortSignal` option: `o.signal`, undefined when absent or null.
 * @param {Record<string, any>} o
 * @returns {AbortSignal | undefined}
 */
export function signalOf(o) {
  const s = o.signal ?? undefined;
  if (s !== undefined && !(s instanceof AbortSignal)) throw new TypeError('signal must be an AbortSignal');
  return s;
}

/**
 * A per-call count: an integer >= `min`, or Infinity.
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {number} dflt
 * @param {number} min
 */
export const count = (o, key, dflt, min) =>
  number(o, key, dflt, (v) => v === Infinity || (Number.isInteger(v) && v >= min), `an integer >= ${min} or Infinity`);
