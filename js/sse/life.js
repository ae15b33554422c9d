// @ts-check
// The life of one event stream: connect (a call of the engine), read the
// body through the parser, and when it ends or breaks, reconnect (a call
// started from the break: js/sse/reconnect.js), until it is closed or ends
// for good. What it finds it tells its host (the EventSource, or in shared
// mode the tab holding the connection for every tab).
import { Parser } from './parse.js';
import { StreamJob, refusal } from './job.js';
import { connect, cannot } from './reconnect.js';

/**
 * What a stream tells, and what it reads, of its host.
 * @typedef {object} Host
 * @property {string} url
 * @property {Record<string, any>} c the options (js/sse/event-source.js `read`), with the engine's call options
 * @property {string} lastId the last event ID string (read at each attempt, set at each dispatch)
 * @property {number} [retryMs] the server's reconnection time (`retry:`)
 * @property {() => void} opened the connection is open
 * @property {(type: string, data: string, lastEventId: string) => void} message an event (it sets `lastId`)
 * @property {(info: { message: string, error?: unknown, status?: number, delayMs?: number }) => void} failed a failure: reconnecting after `delayMs`, or for good (no `delayMs`)
 */

/**
 * Runs the stream of `host` until `signal` aborts (close()) or it ends for
 * good (`host.failed` without a delay). Never rejects.
 * @param {Host} host
 * @param {AbortSignal} signal
 */
export async function life(host, signal) {
  const job = new StreamJob(host);
  /** @type {any} */
  const c = { ...host.c, base: () => host.retryMs ?? NaN, onRetry: (/** @type {any} */ i) => retrying(host, i) };
  /** @type {import('../engine/loop.js').Outcome | undefined} the break the next call starts from */
  let broke;
  for (;;) {
    let r;
    try {
      r = /** @type {{ why: string, res: Response }} */ (await connect(c, job, host.url, signal, broke));
    } catch (error) {
      if (!signal.aborted) host.failed({ message: cannot(error), error });
      return;
    }
    const res = r.res;
    if (r.why !== 'success') {
      res.body?.cancel().catch(() => {});
      if (!signal.aborted) host.failed({ message: refusal(r.why, res), status: res.status });
      return;
    }
    host.opened();
    broke = await read(host, /** @type {ReadableStream<Uint8Array>} */ (res.body));
    if (signal.aborted) return;
  }
}

/**
 * A failed attempt the call retries: the host is told, with the wait.
 * @param {Host} host
 * @param {{ delayMs: number, status?: number, error?: unknown }} i
 */
function retrying(host, i) {
  const what = i.status !== undefined ? `the server answered ${i.status}` : String(/** @type {any} */ (i.error)?.message ?? i.error);
  host.failed({ message: `${what}: reconnecting in ${Math.round(i.delayMs)} ms`, error: i.error, status: i.status, delayMs: i.delayMs });
}

/**
 * Reads the body into the parser until it ends; resolves with the outcome
 * of its end (a break, network-like: the stream reconnects).
 * @param {Host} host
 * @param {ReadableStream<Uint8Array> | null} body
 * @returns {Promise<import('../engine/loop.js').Outcome>}
 */
async function read(host, body) {
  const parser = new Parser(
    {
      event: (type, data, id) => host.message(type, data, id),
      id: (id) => void (host.lastId = id),
      retry: (ms) => void (host.retryMs = ms),
    },
    host.lastId,
  );
  let error = new TypeError('the event stream ended');
  if (body) {
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch (e) {
      error = /** @type {TypeError} */ (e);
    } finally {
      reader.releaseLock();
    }
  }
  return Object.freeze({ failed: true, error, network: true });
}
