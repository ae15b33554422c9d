// @ts-check
// The life of a reconnecting WebSocket: open a socket (a call of the
// engine), hold it until it closes, and unless it was closed by the caller
// or with a code that says "do not come back" (`stopCodes`, 1008 by
// default), reconnect (a call started from the close: js/sse/reconnect.js).
import { connect, cannot } from '../sse/reconnect.js';
import { SocketJob } from './job.js';

/**
 * What the socket's life tells, and reads, of its host.
 * @typedef {object} Host
 * @property {string} url
 * @property {string | string[] | undefined} protocols
 * @property {Record<string, any>} c the options, with the engine's call options
 * @property {string} binaryType
 * @property {(ws: any) => void} opened a socket is open
 * @property {(e: { code: number, reason: string, wasClean: boolean }, last: boolean) => void} closed it closed (`last`: for good)
 * @property {(info: { message: string, error?: unknown, status?: number, delayMs?: number }) => void} failed a failed attempt (reconnecting after `delayMs`), or the end (no `delayMs`)
 */

/**
 * Runs `host`'s connection until `signal` aborts (close()) or it ends for
 * good. Never rejects.
 * @param {Host} host
 * @param {AbortSignal} signal
 */
export async function life(host, signal) {
  const job = new SocketJob(host);
  /** @type {any} */
  const c = { ...host.c, onRetry: (/** @type {any} */ i) => i.attempt && retrying(host, i) };
  /** @type {import('../engine/loop.js').Outcome | undefined} */
  let broke;
  for (;;) {
    let r;
    try {
      r = /** @type {{ why: string, ws: any, error: any, status?: number }} */ (await connect(c, job, host.url, signal, broke));
    } catch (error) {
      if (!signal.aborted) host.failed({ message: cannot(error), error });
      return;
    }
    if (r.why !== 'success') {
      const s = r.status === undefined ? '' : ` (the server answered ${r.status})`;
      if (!signal.aborted) host.failed({ message: `cannot connect: ${r.why}${s}`, error: r.error, status: r.status });
      return;
    }
    host.opened(r.ws);
    const e = await closing(r.ws);
    const last = signal.aborted || c.stopCodes.has(e.code);
    host.closed(e, last);
    if (last) return;
    broke = Object.freeze({ failed: true, network: true, error: new Error(`the connection closed (${e.code})`) });
  }
}

/**
 * A failed attempt the call retries: the host is told, with the wait.
 * @param {Host} host
 * @param {{ delayMs: number, status?: number, error?: unknown }} i
 */
function retrying(host, i) {
  const what = String(/** @type {any} */ (i.error)?.message ?? `the server answered ${i.status}`);
  host.failed({ message: `${what}: reconnecting in ${Math.round(i.delayMs)} ms`, error: i.error, status: i.status, delayMs: i.delayMs });
}

/**
 * Resolves with the socket's close event.
 * @param {any} ws
 * @returns {Promise<{ code: number, reason: string, wasClean: boolean }>}
 */
const closing = (ws) =>
  new Promise((resolve) =>
    ws.addEventListener(
      'close',
      (/** @type {any} */ e) => resolve({ code: e.code, reason: String(e.reason ?? ''), wasClean: !!e.wasClean }),
      {
        once: true,
      },
    ),
  );
