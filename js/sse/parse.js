// @ts-check
// The event stream format (WHATWG HTML §9.2.6, "Interpreting an event
// stream"): lines ended by CR, LF or CRLF (a CR at the end of one chunk and
// an LF at the start of the next are one line end); `field: value` (one
// space after the colon dropped), a line starting with a colon a comment;
// `data` lines joined by LF, `event` the type, `id` the last event ID
// (unless it holds a NUL), `retry` the reconnection time (ASCII digits
// only); a blank line dispatches. The bytes are decoded as UTF-8, a BOM at
// the start dropped (TextDecoder's default). What is left of an event at
// the stream's end is dropped, as the standard says.

/**
 * What the parser tells its owner.
 * @typedef {object} Sink
 * @property {(type: string, data: string, lastEventId: string) => void} event an event to dispatch (`lastEventId` is now the last event ID string)
 * @property {(id: string) => void} id the last event ID string, set by a dispatch without data
 * @property {(ms: number) => void} retry the server's reconnection time
 */

export class Parser {
  #decoder = new TextDecoder();
  /** The text of the line not yet ended. */
  #line = '';
  /** The last chunk ended with a CR: an LF at the start of the next ends nothing. */
  #cr = false;
  #data = '';
  #type = '';
  /** The last event ID buffer (kept across events, as the standard says). */
  #id;

  /**
   * @param {Sink} sink
   * @param {string} [lastEventId] the buffer's value at the start (a reconnect's)
   */
  constructor(sink, lastEventId = '') {
    this.sink = sink;
    this.#id = lastEventId;
  }

  /** Feeds bytes of the stream. @param {Uint8Array} bytes */
  feed(bytes) {
    this.text(this.#decoder.decode(bytes, { stream: true }));
  }

  /** Feeds decoded text. @param {string} s */
  text(s) {
    let i = 0;
    if (this.#cr && s[0] === '\n') i = 1;
    this.#cr = false;
    for (;;) {
      const cr = s.indexOf('\r', i);
      const lf = s.indexOf('\n', i);
      const end = cr < 0 ? lf : lf < 0 ? cr : Math.min(cr, lf);
      if (end < 0) break;
      this.#field(this.#line + s.slice(i, end));
      this.#line = '';
      if (s[end] === '\r') {
        if (end + 1 === s.length) this.#cr = true;
        else if (s[end + 1] === '\n') i = end + 2;
        else i = end + 1;
        if (this.#cr) return;
        continue;
      }
      i = end + 1;
    }
    this.#line += s.slice(i);
  }

  /** One line. @param {string} line */
  #field(line) {
    if (line === '') return this.#dispatch();
    const colon = line.indexOf(':');
    if (colon === 0) return; // a comment
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (name === 'data') this.#data += `${value}\n`;
    else if (name === 'event') this.#type = value;
    else if (name === 'id') {
      if (!value.includes('\0')) this.#id = value;
    } else if (name === 'retry' && /^\d+$/.test(value)) this.sink.retry(+value);
  }

  /** A blank line: the event so far, if it has data. */
  #dispatch() {
    const [data, type] = [this.#data, this.#type];
    this.#data = this.#type = '';
    if (data === '') this.sink.id(this.#id);
    else this.sink.event(type || 'message', data.slice(0, -1), this.#id);
  }
}
