// @ts-check
// `shared: true`: one connection for every tab (and worker) of the origin
// that opens the same stream. The tabs elect one holder with Web Locks (a
// lock named after the stream: the first to ask holds it, the others wait
// in line); the holder runs the stream and tells every event, ID, `retry:`,
// opening and failure over a BroadcastChannel of the same name; the others
// dispatch what they hear. When the holder's tab closes (or it calls
// close()), its lock is let go and the next in line takes over at once,
// reconnecting with the last event ID it heard: the server sends what came
// after it, so no event is lost or told twice. (The lock grant may outrun
// the old holder's last messages: the other tabs follow the holders in
// order, js/sse/follow.js.)
import { Follower } from './follow.js';
import { Relay } from './relay.js';

/**
 * Runs `host`'s stream shared with the other tabs, when this runtime has
 * Web Locks and BroadcastChannel (browsers); false elsewhere (the caller
 * then runs its own).
 * @param {import('./life.js').Host} host
 * @param {AbortSignal} signal close()
 * @param {(host: import('./life.js').Host) => Promise<void>} run the stream's life, as holder
 */
export function share(host, signal, run) {
  const locks = globalThis.navigator?.locks;
  if (!locks || typeof BroadcastChannel !== 'function') return false;
  // (the protocol's version in the name: a tab still running an older copy of the package, whose
  // messages are not signed, elects its own holder instead of one the others cannot follow)
  const name = `wasm-backoff/sse 2 ${host.c.credentials ? 'credentials ' : ''}${host.c.method} ${host.url}`;
  const ch = new BroadcastChannel(name);
  // (as holder, this tab's messages are signed: `h`, this share's own mark)
  const h = `${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}`;
  const post = (/** @type {object} */ m) => !signal.aborted && ch.postMessage({ ...m, h });
  let holding = false;
  // (the Host the stream runs on while this tab holds the lock: it tells every tab too)
  const relay = new Relay(host, post);
  // (what a holder tells, applied in this tab: in the holders' order, js/sse/follow.js)
  const follower = new Follower((/** @type {any} */ m) => {
    if (m.k === 'event') host.message(m.type, m.data, m.id);
    else if (m.k === 'id' || m.k === 'state') host.lastId = m.id;
    if (typeof m.ms === 'number') host.retryMs = m.ms;
    if (m.k === 'open' || (m.k === 'state' && m.open)) host.opened();
    if (m.k === 'failed') host.failed({ message: String(m.info?.message), status: m.info?.status, delayMs: m.info?.delayMs });
  });
  ch.onmessage = ({ data: m }) => {
    if (holding) {
      // (the state is told to the tab that said hello only: the others have it, maybe ahead of it)
      if (m?.k === 'hello') post({ k: 'state', to: m.from, open: relay.open, id: host.lastId, ms: host.retryMs });
    } else if (told(m) && (m.to === undefined || m.to === h)) follower.take(m);
  };
  locks
    .request(name, { signal }, () => {
      holding = true;
      // (`t`: when, on the clock every tab of the origin shares: the newest holder is the latest)
      post({ k: 'resume', id: host.lastId, t: Date.now() });
      return run(relay);
    })
    .catch(() => {}); // (close() while waiting in line)
  signal.addEventListener('abort', () => ch.close(), { once: true });
  ch.postMessage({ k: 'hello', from: h });
  return true;
}

/**
 * Whether `m` is a holder's message as this version sends them (anything
 * else on the channel, from another script or copy, is left alone).
 * @param {any} m
 */
function told(m) {
  const str = (/** @type {unknown} */ v) => typeof v === 'string';
  if (!m || !str(m.h)) return false;
  if (m.k === 'event') return str(m.type) && str(m.data) && str(m.id);
  if (m.k === 'id' || m.k === 'state' || m.k === 'resume') return str(m.id);
  return m.k === 'open' || m.k === 'retry' || m.k === 'failed';
}
