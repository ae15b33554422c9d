// @ts-check
// A request's headers in the forms undici's dispatch takes them (a record,
// or a flat array of names and values), and those callers hand it anyway
// (fetch-style pairs, a Map, Headers, a generator); an answer's raw
// headers; and the request model over them (js/request-model.js), so the
// undici job runs the drivers' request stages and idempotency rule.
import { RequestModel } from '../request-model.js';

/**
 * The request's headers in one of undici's two forms, read once: a record
 * as it is; a flat array of names and values as it is (an odd one too,
 * for undici to refuse); fetch-style pairs, or another iterable of pairs
 * (a Map, Headers, a generator, read here once), as a flat array.
 * @param {any} h
 */
export function flatten(h) {
  if (h == null || typeof h !== 'object') return h;
  if (Array.isArray(h)) return Array.isArray(h[0]) ? h.flat() : h;
  return Symbol.iterator in h ? [...h].flat() : h;
}

/**
 * The (flattened) headers' pairs, a value undici would skip (undefined)
 * left out.
 * @param {any} h
 * @returns {[unknown, unknown][]}
 */
function pairs(h) {
  if (h == null) return [];
  /** @type {[unknown, unknown][]} */
  const all = Array.isArray(h) ? h.flatMap((v, i) => (i % 2 ? [] : [[v, h[i + 1]]])) : Object.entries(h);
  return all.filter(([, v]) => v !== undefined);
}

/**
 * One name's value (in any case) in the (flattened) headers, or null.
 * @param {any} h
 * @param {string} name
 */
export function header(h, name) {
  const n = name.toLowerCase();
  for (const [k, v] of pairs(h)) if (String(k).toLowerCase() === n) return String(v);
  return null;
}

/**
 * The (flattened) headers with `name` set to `value` (any of the request's
 * own under that name replaced, as Headers.set does), or without it
 * (undefined), in their form.
 * @param {any} h
 * @param {string} name
 * @param {string | undefined} value
 */
export function withHeader(h, name, value) {
  // (an odd flat array is left for undici to refuse, not mended)
  if (Array.isArray(h) && h.length % 2) return h;
  const other = (/** @type {[unknown, unknown]} */ [k]) => String(k).toLowerCase() !== name.toLowerCase();
  const kept = pairs(h).filter(other);
  if (value !== undefined) kept.push([name, value]);
  return Array.isArray(h) ? kept.flat() : Object.fromEntries(kept);
}

/**
 * The answer's raw headers (name, value, name, value… as Buffers or strings) as `get(name)`.
 * @param {any[]} raw
 */
export const answered = (raw) => ({ get: (/** @type {string} */ name) => header(raw, name) });

/** A request at undici's dispatcher: the drivers' model over undici's forms of headers (`flatten`'s). */
export class DispatchRequest extends RequestModel {
  /** @param {string} name */
  get(name) {
    return header(this.headers, name);
  }

  /**
   * @param {string} name
   * @param {string} [value]
   * @returns {DispatchRequest}
   */
  set(name, value) {
    return new DispatchRequest(this.method, withHeader(this.headers, name, value), this.body);
  }
}
