// @ts-check
// A request body read up to a bound, written once for every reader of one:
// the stream entry's (a Request's body read first, js/stream/replay.js),
// the undici job's (a body read once, js/undici/body.js) and the outbox's
// (a body stored, js/queue/outbox.js). Each hands its next chunk; the read
// stops at the body's end or as soon as more than `limit` bytes were read
// (the chunk that passed it is kept: nothing read is lost).

/**
 * Reads chunks (`next`: the next one, undefined at the end) until the body
 * ends (`done`) or more than `limit` bytes were read.
 * @param {() => Promise<Uint8Array | undefined>} next
 * @param {number} limit
 * @returns {Promise<{ chunks: Uint8Array[], size: number, done: boolean }>}
 */
export async function readUpTo(next, limit) {
  /** @type {Uint8Array[]} */
  const chunks = [];
  let size = 0;
  for (let v; size <= limit && (v = await next()) !== undefined; size += v.byteLength) chunks.push(v);
  return { chunks, size, done: size <= limit };
}

/**
 * The chunks as one run of bytes (a Blob's: no copy made here).
 * @param {Uint8Array[]} chunks
 */
export const joined = async (chunks) => new Uint8Array(await new Blob(/** @type {BlobPart[]} */ (chunks)).arrayBuffer());
