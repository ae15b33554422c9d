// @ts-check
// The engine's job (js/engine/loop.js) of a WebSocket's connection: one
// attempt opens one socket of the implementation the caller chose (the
// runtime's, or `options.WebSocket`: Node 20's `ws` package), and waits for
// its `open`, or its `close` (a refused or failed handshake), or the
// attempt's signal (close(), the reconnect's deadline, `timeoutMs`). A
// failed handshake is a network failure, retried; where the implementation
// says which status the server refused the upgrade with (the `ws`
// package's "Unexpected server response: 503"), the policy judges that
// status (js/policy.js): 5xx and 429 are retried, a 401 or a 404 is not.
import { attemptSignal } from '../engine/signal.js';
import { verdict } from '../policy.js';

const OPENED = Object.freeze({ why: 'success', hurt: false });

/**
 * The status a failed handshake's error names, if any.
 * @param {any} e
 */
const statusOf = (e) => {
  const m = /server response: (\d{3})/.exec(String(e?.message ?? e?.error?.message ?? ''));
  return m ? +m[1] : undefined;
};

/**
 * What the job needs of its socket.
 * @typedef {object} Target
 * @property {string} url
 * @property {string | string[] | undefined} protocols
 * @property {Record<string, any>} c the options (`WebSocket`: the implementation)
 * @property {string} binaryType
 */

export class SocketJob {
  /** @param {Target} t */
  constructor(t) {
    this.t = t;
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {number} _n
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<import('../engine/loop.js').Outcome>}
   */
  attempt(call, _n, signal) {
    const { url, protocols, c, binaryType } = this.t;
    const [sig, release, timeout] = attemptSignal(call, signal, false);
    return new Promise((resolve, reject) => {
      /** @type {any} */
      let ws;
      try {
        ws = new c.WebSocket(url, protocols);
        ws.binaryType = binaryType;
      } catch (error) {
        ws?.close?.();
        release();
        return resolve({ failed: true, error, network: false });
      }
      /** @type {unknown} */
      let error;
      const on = (/** @type {string} */ type, /** @type {(e: any) => void} */ f) => ws.addEventListener(type, f);
      const off = () => {
        ws.removeEventListener('open', opened);
        ws.removeEventListener('error', failed);
        ws.removeEventListener('close', closed);
        sig?.removeEventListener('abort', aborted);
        release();
      };
      const opened = () => (off(), resolve({ failed: false, value: ws }));
      const failed = (/** @type {any} */ e) => void (error = e?.error ?? e);
      const closed = (/** @type {any} */ e) => {
        off();
        const status = statusOf(error);
        const why = new Error(`the connection closed during the handshake (${e.code}${e.reason ? ` ${e.reason}` : ''})`, { cause: error });
        resolve(status === undefined ? { failed: true, error: why, network: true } : { failed: false, error: why, status });
      };
      const aborted = () => {
        off();
        ws.close();
        try {
          call.alive();
          resolve({ failed: true, error: timeout?.signal.reason, network: true });
        } catch (e) {
          reject(e);
        }
      };
      on('open', opened);
      on('error', failed);
      on('close', closed);
      sig?.addEventListener('abort', aborted);
      if (sig?.aborted) aborted();
    });
  }

  /**
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Outcome} o
   * @returns {import('../engine/loop.js').Verdict}
   */
  judge(call, o) {
    if (!o.failed && o.status === undefined) return OPENED;
    const why = verdict({
      failed: o.failed,
      network: !!o.network,
      status: o.status,
      retryOn: /** @type {any} */ (call.c).retryOn,
      idempotent: true,
      replayable: true,
    });
    return { why, hurt: !why };
  }

  /**
   * What the call resolves with: why it ended, the socket or the refusal.
   * @param {import('../engine/loop.js').Outcome} o
   * @param {string} why
   */
  result(o, why) {
    return { why, ws: o.value, error: o.error, status: o.status };
  }
}
