// @ts-check
// A request body at undici's dispatcher: a body read once (a stream, an
// async iterable, fetch's own generator) is read first, up to
// `maxBufferBytes`, so that a retry sends it again; each chunk as the bytes
// undici sends for it.
import { readUpTo, joined } from '../body.js';

const utf8 = new TextEncoder();

/**
 * A chunk of a body read once as the bytes undici sends for it: a string's
 * UTF-8, an ArrayBuffer view's bytes (a Buffer, a Uint8Array, any typed
 * array, a DataView), nothing for an empty ArrayBuffer (undici skips it).
 * Anything else (an ArrayBuffer, a number, an object) throws a TypeError
 * with undici's code, as undici refuses it: never sent as other bytes.
 * @param {unknown} v
 * @returns {Uint8Array}
 */
export function bytes(v) {
  if (typeof v === 'string') return utf8.encode(v);
  if (ArrayBuffer.isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  if ((v instanceof ArrayBuffer || v instanceof SharedArrayBuffer) && v.byteLength === 0) return new Uint8Array(0);
  const what = Object.prototype.toString.call(v).slice(8, -1);
  const err = new TypeError(`body: a chunk must be a string or an ArrayBuffer view (Buffer, Uint8Array, DataView…), not ${what}`);
  throw Object.assign(err, { code: 'ERR_INVALID_ARG_TYPE' });
}

/**
 * Whether a body is read once (a stream, an async iterable): what a retry
 * cannot send again unless it is read first.
 * @param {any} body
 */
export const readOnce = (body) => typeof body?.[Symbol.asyncIterator] === 'function';

/**
 * A body read once, read up to `bound` bytes: the bytes when it ended by
 * then (sent again on every attempt), else the same body (sent once: never
 * again, as what was read of it is gone). Each chunk is `bytes`'s, those
 * read later too: a chunk undici refuses, or the body's own error, fails
 * the call (before anything is sent when it comes within the bound).
 * @param {AsyncIterable<any>} body
 * @param {number} bound
 * @returns {Promise<Uint8Array | AsyncIterable<Uint8Array>>}
 */
export async function buffered(body, bound) {
  const it = body[Symbol.asyncIterator]();
  const next = async () => {
    const x = await it.next();
    return x.done ? undefined : bytes(x.value);
  };
  const { chunks, done } = await readUpTo(next, bound);
  if (done) return joined(chunks);
  return (async function* () {
    yield* chunks;
    for (let v = await next(); v; v = await next()) yield v;
  })();
}
