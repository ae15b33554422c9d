// The fakes of `shared: true`'s tests: an event stream server and (tests/sse/shared.virtual.test.mjs,
// tests/props/sse-shared.props.test.mjs): Web Locks and BroadcastChannel
// whose grants and messages go out only when the test says, on the js/
// sources and the kit's virtual clock.
import { EventSource } from '../../js/entries/sse.js';

export const TYPE = { 'content-type': 'text/event-stream' };
export const URL_ = 'https://api.test/events';

/** SSE text of events `from`..`to` (ID n, data `e<n>`). */
export const events = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => `id: ${from + i}\ndata: e${from + i}\n\n`).join('');

/**
 * An event stream server: `n` events so far, each pushed to every
 * connection open; a connection that names a Last-Event-ID is sent what
 * came after it first (`fetch(i, { resumes: false })`: a server that
 * ignores it, only what comes next). A connection's body errors when its
 * request is aborted, as a real one does (the tab closing).
 */
export function sseServer() {
  const enc = new TextEncoder();
  const open = new Set();
  const s = {
    n: 0,
    /** The events sent on some connection (one sent while none was open, and not sent again after it, is lost to all). */
    sent: new Set(),
    /** Each tab's requests: its Last-Event-ID ('' for none), and the events sent before it. @type {Map<number, { last: string, n: number }[]>} */
    asked: new Map(),
    /** The fetch of tab `i`. @param {number} i @param {{ resumes?: boolean }} [o] */
    fetch:
      (i, { resumes = true } = {}) =>
      async (input, init) => {
        const signal = init?.signal ?? input?.signal;
        const last = new Request(input, { ...init, signal: null }).headers.get('last-event-id') ?? '';
        s.asked.set(i, [...(s.asked.get(i) ?? []), { last, n: s.n }]);
        /** @type {ReadableStreamDefaultController<Uint8Array>} */
        let c;
        const body = new ReadableStream({ start: (ctl) => void (c = ctl) });
        if (resumes && last !== '' && Number(last) < s.n) {
          for (let e = Number(last) + 1; e <= s.n; e++) s.sent.add(e);
          c.enqueue(enc.encode(events(Number(last) + 1, s.n)));
        }
        open.add(c);
        signal?.addEventListener(
          'abort',
          () => {
            open.delete(c);
            c.error(signal.reason);
          },
          { once: true },
        );
        return new Response(body, { status: 200, headers: TYPE });
      },
    /** `k` more events. @param {number} k */
    push(k) {
      const text = enc.encode(events(s.n + 1, s.n + k));
      if (open.size) for (let e = s.n + 1; e <= s.n + k; e++) s.sent.add(e);
      s.n += k;
      for (const c of open) c.enqueue(text);
    },
  };
  return s;
}

/**
 * Fake tabs: `navigator.locks` and `BroadcastChannel` whose lock grants and
 * messages wait in queues until the test lets them go. Installed at once;
 * `uninstall()` puts the runtime's back.
 */
export function fakeBrowser() {
  /** @type {{ from: any, to: any, data: any }[]} */
  let mail = [];
  const channels = new Set();
  /** Each channel's number (a pair of them names a sender and a recipient). @type {Map<any, number>} */
  const channelIds = new Map();
  class Channel {
    /** @param {string} name */
    constructor(name) {
      this.name = name;
      this.onmessage = null;
      channels.add(this);
      channelIds.set(this, channelIds.size);
      Channel.last = this;
    }
    postMessage(data) {
      for (const c of channels) if (c !== this && c.name === this.name) mail.push({ from: this, to: c, data: structuredClone(data) });
    }
    close() {
      channels.delete(this);
    }
  }
  /** @type {{ run: () => Promise<unknown>, done: (v: unknown) => void }[]} */
  const line = [];
  let held = false;
  let autoGrant = true;
  /** The next in line gets the lock, unless it is held (false: no grant). */
  const grant = () => {
    if (held) return false;
    const next = line.shift();
    if (!next) return false;
    held = true;
    Promise.resolve()
      .then(next.run)
      .then(next.done, next.done)
      .finally(() => {
        held = false;
        if (autoGrant) grant();
      });
    return true;
  };
  const locks = {
    request(_name, { signal }, run) {
      return new Promise((done, fail) => {
        const me = { run, done };
        signal?.addEventListener('abort', () => {
          const i = line.indexOf(me);
          if (i >= 0) line.splice(i, 1), fail(signal.reason);
        });
        line.push(me);
        if (!held && autoGrant) grant();
      });
    },
  };
  const saved = { navigator: Object.getOwnPropertyDescriptor(globalThis, 'navigator'), bc: globalThis.BroadcastChannel };
  Object.defineProperty(globalThis, 'navigator', { value: { locks }, configurable: true, writable: true });
  globalThis.BroadcastChannel = /** @type {any} */ (Channel);
  return {
    uninstall() {
      if (saved.navigator) Object.defineProperty(globalThis, 'navigator', saved.navigator);
      else delete globalThis.navigator;
      globalThis.BroadcastChannel = saved.bc;
    },
    /** A tab's EventSource and what it dispatched (data strings), with its channel. */
    tab(fetch) {
      const es = new EventSource(URL_, { fetch, shared: true });
      const heard = [];
      es.onmessage = (e) => heard.push(e.data);
      return { es, heard, ch: Channel.last };
    },
    /** Messages waiting. */
    get waiting() {
      return mail.length;
    },
    /**
     * Delivers one waiting message, chosen by `rand` (a number in [0, 1)): a
     * random sender-recipient pair's first, as a channel keeps one sender's
     * messages in order.
     */
    deliverOne(rand) {
      const m = mail[Math.floor(rand * mail.length)];
      const first = mail.find((y) => y.from === m.from && y.to === m.to);
      return this.deliver((x) => x === first);
    },
    /** Tabs waiting in line for the lock. */
    get inLine() {
      return line.length;
    },
    /** Delivers the waiting messages that `pick` chooses ({from, to, data}: channels, message), in order; the others wait. */
    deliver(pick = () => true) {
      // (as a channel does, one sender's messages reach a tab in order: one picked behind another
      // of the same sender to the same tab that is not picked waits too)
      const blocked = new Set();
      const go = mail.filter((m) => {
        const pair = `${channelIds.get(m.from)}>${channelIds.get(m.to)}`;
        if (!blocked.has(pair) && pick(m)) return true;
        blocked.add(pair);
        return false;
      });
      mail = mail.filter((m) => !go.includes(m));
      for (const m of go) if (channels.has(m.to)) m.to.onmessage?.({ data: m.data });
      return go.length;
    },
    /** From now, a lock let go goes to the next in line only at grant(). */
    holdGrants() {
      autoGrant = false;
    },
    grant,
  };
}

/**
 * The tabs' fetches, their settling (the streams' reads) between the test's
 * moves; 1 virtual ms passes (each takeover at its own time, as in a browser).
 */
export async function settle(clock, b) {
  await clock.tick(1);
  for (let i = 0; i < 5; i++) {
    await clock.runUntilIdle();
    b.deliver((m) => m.data.k === 'hello' || m.data.k === 'state');
  }
}
