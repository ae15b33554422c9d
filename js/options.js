// @ts-check
// Every option reader, in one module free of wasm (the budget and the
// fleet's budget import it without loading the module), in one shape:
// `read(o, key, spec)` reads one option of a record from `own` (its own
// properties, each read once, so a getter cannot answer the check and the
// use differently and nothing on Object.prototype is read), by a spec made
// by one of the builders below; `readAll(o, table)` reads a feature's whole
// table (an exported constant: tests/package/options.test.mjs checks each
// against its .d.ts and docs/options.md). A wrong type throws a TypeError,
// a value out of range a RangeError; the message is `<name> must be
// <what>`, naming the option.

/**
 * How an option is read, `[is, what, ok, d, map, r]` (a tuple: the
 * smallest shape in every entry's bundle, measured): `is` its type (else a
 * TypeError), `what` the end of the message (`<name> must be <what>`),
 * `ok` its range (else a RangeError), `d` its value when not given
 * (undefined), `map` the value given as it is kept, `r` it must be given
 * (undefined fails `is`). `spec` makes one.
 * @template T
 * @typedef {[is: (v: any) => boolean, what: string, ok: ((v: any) => boolean) | undefined, d: T | undefined, map: ((v: any) => T) | undefined, r: boolean | undefined]} Spec
 */

/** @typedef {Record<string, Spec<any>>} Table */

/**
 * The values a table's reader answers, by option.
 * @template {Table} T
 * @typedef {{ [K in keyof T]: T[K] extends Spec<infer V> ? V : never }} Read
 */

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
 * Value `v` of the option (or argument) `name`, checked by `s`.
 * @template T
 * @param {unknown} v
 * @param {string} name
 * @param {Spec<T>} s
 * @returns {T}
 */
export function must(v, name, s) {
  const [is, what, ok, d, map, r] = s;
  if (v === undefined && !r) return /** @type {T} */ (d);
  const msg = `${name} must be ${what}`;
  if (!is(v)) throw new TypeError(msg);
  if (ok && !ok(v)) throw new RangeError(msg);
  return map ? map(v) : /** @type {T} */ (v);
}

/**
 * Option `key` of `o` (from `own`), checked by `s`; `name` in the message
 * (a factory's options say whose: `hedge: delayMs …`).
 * @template T
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {Spec<T>} s
 * @param {string} [name]
 * @returns {T}
 */
export const read = (o, key, s, name = key) => must(o[key], name, s);

/**
 * Every option of `table` read from `o`, in the table's order, into `into`
 * (a new object unless given); `pre` begins each message (`quota: `).
 * @template {Table} T
 * @template {Record<string, any>} [I={}]
 * @param {Record<string, any>} o
 * @param {T} table
 * @param {string} [pre]
 * @param {I} [into]
 * @returns {Read<T> & I}
 */
export function readAll(o, table, pre = '', into = /** @type {I} */ ({})) {
  const r = /** @type {Record<string, any>} */ (into);
  // (own keys only: a table is a plain object, and Object.prototype may be polluted)
  for (const k of Object.keys(table)) r[k] = must(o[k], pre + k, table[k]);
  return /** @type {Read<T> & I} */ (r);
}

/**
 * A spec (the builders below make the usual ones).
 * @template T
 * @param {(v: any) => boolean} is
 * @param {string} what
 * @param {((v: any) => boolean) | undefined} [ok]
 * @param {T} [d]
 * @param {(v: any) => T} [map]
 * @param {boolean} [r]
 * @returns {Spec<T>}
 */
export const spec = (is, what, ok, d, map, r) => [is, what, ok, d, map, r];

/**
 * The same spec, given or not: undefined fails it (a TypeError).
 * @template T
 * @param {Spec<T>} s
 * @returns {Spec<Exclude<T, undefined>>}
 */
export const required = (s) => /** @type {Spec<Exclude<T, undefined>>} */ (spec(s[0], s[1], s[2], s[3], s[4], true));

/**
 * The same spec, with null read as not given (its default).
 * @template T
 * @param {Spec<T>} s
 * @returns {Spec<T>}
 */
export const nullable = ([is, what, ok, d, map]) =>
  spec(
    (v) => v === null || is(v),
    what,
    (v) => v === null || !ok || ok(v),
    d,
    (v) => (v === null ? /** @type {T} */ (d) : map ? map(v) : v),
  );

/** @param {unknown} v */
const isNum = (v) => typeof v === 'number';

/**
 * A number passing `ok` (a RangeError otherwise), `what` in the message.
 * @template [D=undefined]
 * @param {string} what
 * @param {(v: number) => boolean} ok
 * @param {D} [d]
 * @returns {Spec<number | D>}
 */
export const num = (what, ok, d) => spec(isNum, what, ok, d);

/**
 * A duration or amount: a number > 0 (`positive`) or >= 0, and below
 * Infinity when `finite`.
 * @template [D=undefined]
 * @param {D} [d]
 * @param {boolean} [positive]
 * @param {boolean} [finite]
 * @returns {Spec<number | D>}
 */
export const ms = (d, positive, finite) =>
  num(
    `a ${finite ? 'finite ' : ''}number ${positive ? '> 0' : '>= 0'}`,
    (v) => (positive ? v > 0 : v >= 0) && !(finite && v === Infinity),
    d,
  );

/**
 * An integer in [lo, hi].
 * @template [D=undefined]
 * @param {number} lo
 * @param {number} hi
 * @param {D} [d]
 * @returns {Spec<number | D>}
 */
export const int = (lo, hi, d) => num(`an integer in [${lo}, ${hi}]`, (v) => Number.isInteger(v) && v >= lo && v <= hi, d);

/**
 * A count: an integer >= `lo`, or Infinity.
 * @template [D=undefined]
 * @param {number} lo
 * @param {D} [d]
 * @returns {Spec<number | D>}
 */
export const count = (lo, d) => num(`an integer >= ${lo} or Infinity`, (v) => v === Infinity || (Number.isInteger(v) && v >= lo), d);

/**
 * A boolean.
 * @param {boolean} [d]
 * @returns {Spec<boolean>}
 */
export const flag = (d = false) => spec((v) => typeof v === 'boolean', 'a boolean', undefined, d);

/**
 * A function (`what`: the message's words for it).
 * @template {Function | undefined} [D=undefined]
 * @param {D} [d]
 * @param {string} [what]
 * @returns {Spec<any>}
 */
export const fn = (d, what = 'a function') => spec((v) => typeof v === 'function', what, undefined, d);

/**
 * An object (its own properties copied: `own`; null is an empty one).
 * @param {Record<string, any>} [d]
 * @returns {Spec<Record<string, any>>}
 */
export const object = (d) => spec((v) => typeof v === 'object', 'an object', undefined, d, own);

/**
 * A non-empty string.
 * @template [D=undefined]
 * @param {D} [d]
 * @returns {Spec<string | D>}
 */
export const text = (d) => spec((v) => typeof v === 'string' && v !== '', 'a non-empty string', undefined, d);

/**
 * `values` quoted, for a message: `'a', 'b', 'c'`.
 * @param {readonly string[]} values
 */
export const quoted = (values) => values.map((v) => `'${v}'`).join(', ');

/**
 * One of the strings `values` (`'a', 'b' or 'c'` in the message).
 * @template {string} V
 * @param {readonly V[]} values
 * @param {V} [d]
 * @returns {Spec<V>}
 */
export const oneOf = (values, d) =>
  spec(
    (v) => typeof v === 'string',
    quoted(values).replace(/, (?!.*, )/, ' or '),
    (v) => values.includes(v),
    d,
  );

/**
 * An array whose every entry passes `ok`, kept as a Set (of the entries
 * `map` makes); `d` when not given.
 * @template T
 * @param {string} what the entries, in the message (`an array of <what>`)
 * @param {(v: any) => boolean} ok
 * @param {Set<T>} [d]
 * @param {(v: any) => T} [map]
 * @returns {Spec<Set<T>>}
 */
export const list = (what, ok, d, map) =>
  spec(
    Array.isArray,
    `an array of ${what}`,
    (v) => v.every(ok),
    d,
    (v) => new Set(map ? v.map(map) : v),
  );

/**
 * HTTP statuses (integers in [100, 599]), as a Set.
 * @param {Set<number>} [d]
 */
export const statuses = (d) => list('integer HTTP statuses (100-599)', (s) => Number.isInteger(s) && s >= 100 && s <= 599, d);

/**
 * An `AbortSignal` (null is none).
 * @returns {Spec<AbortSignal | undefined>}
 */
export const abortSignal = () =>
  spec(
    (v) => v === null || v instanceof AbortSignal,
    'an AbortSignal',
    undefined,
    undefined,
    (v) => v ?? undefined,
  );

/**
 * An object made by a subpath's factory for option `key` (its `feature`
 * names it): `<key> must be made by <entry>() from 'wasm-backoff/<entry>'`.
 * @param {string} key
 * @param {string} [entry]
 * @returns {Spec<any>}
 */
export const made = (key, entry = key) => spec((v) => v?.feature === key, `made by ${entry}() from 'wasm-backoff/${entry}'`);
