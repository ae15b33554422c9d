// @ts-check
// Promises, timers and signals shared by the drivers (js/engine/, gate.js):
// each leaves no timer or listener behind, however it ends.
import { MAX_TIMER } from './gen/boundary.js';

/**
 * `p`, or the reason of the first of `a` and `b` (signals, either may be
 * absent) the moment it aborts.
 * @template T
 * @param {T | PromiseLike<T>} p
 * @param {AbortSignal} [a]
 * @param {AbortSignal} [b]
 * @returns {Promise<T>}
 */
export function abortable(p, a, b) {
  if (!a && !b) return Promise.resolve(p);
  return new Promise((resolve, reject) => {
    // Whichever comes first settles, and takes every listener away: a `p`
    // that never settles (a hung hook) leaves nothing on a live signal.
    const off = () => {
      a?.removeEventListener('abort', onAbort);
      b?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      off();
      reject((a?.aborted ? a : /** @type {AbortSignal} */ (b)).reason);
    };
    // `p`'s outcome may come too late to be wanted, but what it rejects with
    // must not go unhandled (a process exits on that in Node, Deno and Bun).
    Promise.resolve(p).then(
      (v) => (off(), resolve(v)),
      (e) => (off(), reject(e)),
    );
    if (a?.aborted || b?.aborted) return onAbort();
    a?.addEventListener('abort', onAbort);
    b?.addEventListener('abort', onAbort);
  });
}

/**
 * Waits `ms`, or rejects with the reason of `a` or `b` the moment one aborts.
 * @param {number} ms
 * @param {AbortSignal} [a]
 * @param {AbortSignal} [b]
 * @returns {Promise<void>}
 */
export function sleep(ms, a, b) {
  /** @type {any} */
  let timer;
  return abortable(new Promise((resolve) => (timer = setTimeout(resolve, Math.min(ms, MAX_TIMER)))), a, b).finally(() =>
    clearTimeout(timer),
  );
}

/**
 * Calls an observer hook (`onRetry`, `onDone`): what it throws, or the
 * rejection of what it returns, is written to the console and changes
 * nothing else (never an unhandled rejection).
 * @param {((info: any) => unknown) | undefined} hook
 * @param {object} info
 */
export function observe(hook, info) {
  try {
    /** @type {any} */ (hook?.(info))?.then?.(undefined, report);
  } catch (e) {
    report(e);
  }
}
const report = (/** @type {unknown} */ e) => console.error('wasm-backoff: a hook threw', e);

/**
 * What a synchronous hook (`delay`, the query adapters' `shouldRetry`)
 * returned, when it may be a promise: not awaited (the caller refuses it as
 * the wrong type), but what it rejects with is written to the console,
 * never left unhandled. Anything not an object or function is left alone.
 * @param {unknown} v
 */
export function unawaited(v) {
  if ((typeof v === 'object' && v !== null) || typeof v === 'function') Promise.resolve(v).catch(report);
}

/**
 * A controller that aborts after `wait` ms (`ms` unless given) with a
 * TimeoutError DOMException naming `what` and its `ms`, and its timer.
 * @param {string} what
 * @param {number} ms
 * @param {number} [wait]
 * @returns {[AbortController, any]}
 */
export function deadline(what, ms, wait = ms) {
  const ac = new AbortController();
  // (a TimeoutError DOMException, as AbortSignal.timeout makes)
  const t = setTimeout(
    () => ac.abort(new DOMException(`${what} (${ms} ms) passed`, 'TimeoutError')),
    Math.max(0, Math.min(wait, MAX_TIMER)),
  );
  return [ac, t];
}

/**
 * Lets go of an outcome's response body (one the call will not return: its
 * connection and memory are freed); what the cancel rejects with is dropped.
 * @param {{ res?: Response }} o
 */
export const drop = (o) => o.res?.body?.cancel().catch(() => {});

/**
 * Whether this runtime is Cloudflare Workers (workerd): its requests cancel
 * what waits with nothing pending in their own context (gates poll there),
 * and its timers are numbers (a virtual clock's too).
 */
export const workerd = () => globalThis.navigator?.userAgent === 'Cloudflare-Workers';
