// @ts-check
// The body handed back by the stream entry's fetchWithBackoff: the
// response's own, read through one reader that
//   - replays the first chunk when it was read ahead (firstChunkTimeoutMs),
//   - errors with a TimeoutError when no chunk comes for `idleMs` while the
//     consumer waits for one (idleTimeoutMs),
//   - on a network failure or a stall, asks `resume` for the rest of the
//     body and reads on from it (resume: true; js/stream/resume.js).
//
// The reader and its idle timer: js/stream/idle.js.
import { IdleReader, clamp } from './idle.js';

/** Statuses whose Response may have no body (the constructor refuses one). */
const NULL_BODY = [101, 103, 204, 205, 304];

/**
 * @typedef {object} Wrap
 * @property {number} [idleMs]
 * @property {Uint8Array} [first] a chunk read ahead, replayed first
 * @property {(offset: number, error: unknown, signal: AbortSignal) => Promise<ReadableStreamDefaultReader<Uint8Array>>} [resume] the rest of the body from `offset`, or rejects with why not; `signal` aborts when the body is cancelled
 * @property {ReadableStreamDefaultReader<Uint8Array>} [reader] the response's reader, when it was taken already
 * @property {(offset: number) => void} [finish] a resumed body ended cleanly at `offset`: throws when that is short of its length (a 206 whose body ended before its Content-Range's end)
 */

/**
 * `res` with its body read through the wrapper (status, headers, url and
 * `redirected` kept), or `res` itself when it has no body.
 * @param {Response} res
 * @param {Wrap} w
 * @returns {Response}
 */
export function wrap(res, w) {
  if (!res.body || NULL_BODY.includes(res.status)) return res;
  const out = new Response(body(w.reader ?? res.body.getReader(), w), {
    status: res.status,
    statusText: res.statusText,
    headers: res.headers,
  });
  Object.defineProperties(out, { url: { value: res.url }, redirected: { value: res.redirected } });
  return out;
}

/**
 * The wrapper's stream over `reader`.
 * @param {ReadableStreamDefaultReader<Uint8Array>} reader
 * @param {Wrap} w
 */
function body(reader, { idleMs, first, resume, finish }) {
  let resumed = false;
  let offset = 0;
  const src = new IdleReader(reader, idleMs);
  /** Aborted when the consumer cancels the body: a resume in flight ends with it. */
  const cancelled = new AbortController();
  return new ReadableStream(
    {
      async pull(ctl) {
        if (first) {
          offset += first.byteLength;
          ctl.enqueue(first);
          first = undefined;
          return;
        }
        for (;;) {
          let r;
          try {
            r = await src.read();
          } catch (e) {
            src.stop();
            if (!resume) throw e;
            src.stalled = undefined;
            const next = await resume(offset, e, cancelled.signal);
            // (cancelled while the resume answered: nobody will read it)
            if (cancelled.signal.aborted) return void next.cancel().catch(() => {});
            src.reader = next;
            resumed = true;
            continue;
          }
          if (r.done) {
            src.stop();
            if (resumed) finish?.(offset);
            return ctl.close();
          }
          offset += r.value.byteLength;
          return ctl.enqueue(r.value);
        }
      },
      // Resolves (a broken reader's cancel would reject with the break), and
      // ends a resume in flight: its wait, its request, its reader.
      cancel(reason) {
        src.stop();
        cancelled.abort(reason ?? new DOMException('the body was cancelled', 'AbortError'));
        return src.reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The first chunk of `res`'s body within `ms` (from now), with the reader
 * taken; rejects with a TimeoutError (the body cancelled) when none came.
 * @param {Response} res
 * @param {number} ms
 * @returns {Promise<[ReadableStreamDefaultReader<Uint8Array>, Uint8Array | undefined]>}
 */
export async function firstChunk(res, ms) {
  const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
  /** @type {any} */
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new DOMException(`firstChunkTimeoutMs (${ms} ms) passed`, 'TimeoutError')), clamp(ms));
  });
  try {
    const r = await Promise.race([reader.read(), late]);
    return [reader, r.value];
  } catch (e) {
    reader.cancel(e).catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
  }
}
