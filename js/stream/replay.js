// @ts-check
// A streamed request body, sent again from a bounded buffer: every chunk
// read from the caller's stream is kept until the bytes kept pass `limit`;
// then they are dropped, and the body can no longer be sent again (the
// attempt that overflowed it is the last). Memory: at most `limit` bytes
// plus the one chunk in flight. Each attempt reads its own stream, which
// replays what was kept, then reads on from the source.
import { readUpTo, joined } from '../body.js';

/** The Fetch standard's allowance for a body kept for a redirect, and our default: 64 KiB. */
export const REPLAY_BYTES = 65536;

export class Replay {
  /** The chunks kept (empty once over). @type {Uint8Array[]} */
  chunks = [];
  /** Bytes read from the source so far. */
  size = 0;
  /** Past `limit`: the kept chunks were dropped, no attempt can start over. */
  over = false;
  done = false;
  /** What the source failed with (its own error, or a chunk fetch cannot send): the call's. @type {unknown} */
  error;
  /** Streams made so far (one per attempt). */
  streams = 0;
  /** The source read in flight, shared by the attempts' streams. @type {Promise<Uint8Array | undefined> | undefined} */
  p;

  /**
   * @param {ReadableStreamDefaultReader<Uint8Array>} reader the caller's stream, locked to this
   * @param {number} limit
   */
  constructor(reader, limit) {
    this.reader = reader;
    this.limit = limit;
  }

  /** The next chunk of the source (kept while within the limit); undefined at its end. */
  fill() {
    return (this.p ??= this.reader.read().then(
      ({ done, value }) => {
        this.p = undefined;
        if (done) return void (this.done = true);
        // (fetch refuses any other chunk: a chunk dropped would send other bytes)
        if (!(value instanceof Uint8Array)) throw (this.error = new TypeError('a body stream must give Uint8Array chunks'));
        this.size += value.byteLength;
        if (!this.over && this.size > this.limit) (this.over = true), (this.chunks = []);
        if (!this.over) this.chunks.push(value);
        return value;
      },
      (e) => {
        this.p = undefined;
        throw (this.error = e);
      },
    ));
  }

  /** Whether the body can be sent again from its start: all it gave so far is kept, and it did not fail. */
  replayable() {
    return !this.over && this.size <= this.limit && this.error === undefined;
  }

  /** Reads the source to its end, or until it is past the limit (what is read is kept for the next attempt). */
  async drain() {
    while (!this.done && this.replayable()) await this.fill();
  }

  /**
   * The body of one attempt: what was kept, then the rest of the source. Its
   * cancel leaves the source to the next attempt. The first attempt's, or
   * one made while the body is replayable: a later stream of a body past
   * its buffer would send only what is left of it (it errors instead).
   */
  stream() {
    let i = 0;
    const whole = !this.streams++ || this.replayable();
    return new ReadableStream(
      {
        pull: async (ctl) => {
          if (!whole) throw new TypeError('the body is past replayBufferBytes: it cannot be sent again');
          if (!this.over && i < this.chunks.length) return ctl.enqueue(this.chunks[i++]);
          if (this.done) return ctl.close();
          const v = await this.fill();
          if (!v) return ctl.close();
          i++;
          ctl.enqueue(v);
        },
      },
      { highWaterMark: 0 },
    );
  }

  /** Lets go of the caller's stream (the call has ended). */
  close() {
    if (!this.done) this.reader.cancel().catch(() => {});
    this.chunks = [];
  }
}

/**
 * Reads `body` up to `limit` bytes: its bytes when it ends within them (sent
 * with a length, again on every attempt), else a Replay of the whole (what
 * was read first, then the rest).
 * @param {ReadableStream<Uint8Array>} body
 * @param {number} limit
 * @returns {Promise<Uint8Array | Replay>}
 */
export async function prime(body, limit) {
  // (the replay keeps every chunk read meanwhile: the bound is `readUpTo`'s)
  const replay = new Replay(body.getReader(), Infinity);
  const { chunks, done } = await readUpTo(() => replay.fill(), limit);
  if (done) return joined(chunks);
  // (the first attempt sends what was read: then the limit applies)
  replay.limit = limit;
  return replay;
}
