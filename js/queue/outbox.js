// @ts-check
// `wasm-backoff/outbox`: "send it later" for HTTP requests (the job of
// Workbox's BackgroundSyncPlugin), on the durable task queue. A request
// that failed, or was made offline, is stored (method, URL, headers, a
// bounded body, an idempotency key) as a task; the queue replays it through
// fetchWithBackoff when it runs: at start (a page load, a Service Worker's
// start), on `online`, and on Background Sync's `sync` event (its syncTag),
// so a request a closed page left behind is delivered by the worker.
import { readAll, own, nullable, object, text } from '../options.js';
import { withBackoff } from '../fetch/index.js';
import { TaskQueue } from './task-queue.js';
import { IndexedDBStore } from './indexeddb-store.js';
import { PermanentError, describe } from './errors.js';
import { advice, throttled, isNetworkError, wantsKey, METHODS } from '../policy.js';
import { serverWait } from '../retry-after.js';
import { atLeast } from './options.js';
import { readUpTo, joined } from '../body.js';

/**
 * Why a replay's tries ended on an answer that will never be taken: the
 * retry policy said no (its status is not retried, or the server said
 * `x-should-retry: false`: 'not-retryable'; shouldRetry said no:
 * 'vetoed', unless it was the `delay` hook that gave up). Any other end
 * (tries, deadline, budget, a server wait over the bound) leaves it for
 * later, and so does a throttled answer (429, 503, 529): the server will take
 * it another time (unless it said `x-should-retry: false`).
 */
const NEVER = ['not-retryable', 'vetoed'];

/** The Outbox's options (OutboxOptions), in the order they are checked. */
export const OUTBOX_OPTIONS = {
  // (null: the default, as undefined)
  name: nullable(text('outbox')),
  maxBodyBytes: atLeast(0, 1_048_576),
  retry: nullable(object({ maxAttempts: 3 })),
  queue: object({}),
};

/** The queue options an outbox sets itself. */
const OWN = ['handler', 'syncTag'];

/**
 * A request's body, read now: an ArrayBuffer, or null for none. Over `max`
 * bytes (declared, or counted as it is read): a RangeError, and the body is
 * cancelled there, nothing read further.
 * @param {Request} request
 * @param {number} max
 */
async function bodyOf(request, max) {
  const declared = Number(request.headers.get('content-length'));
  const over = (/** @type {string} */ n) =>
    new RangeError(`maxBodyBytes: the request body (${n} bytes) is over the outbox's bound (${max} bytes): not stored`);
  if (declared > max) throw over(String(declared));
  if (request.body === null) return null;
  const reader = request.body.getReader();
  const read = await readUpTo(async () => (await reader.read()).value, max);
  if (read.done) return (await joined(read.chunks)).buffer;
  await reader.cancel();
  throw over(`at least ${read.size}`);
}

/**
 * The idempotency key a request carries (an empty value is none).
 * @param {Headers} headers
 */
const keyOf = (headers) => headers.get('idempotency-key') || undefined;

/** Whether the browser (or worker) says it is offline: `navigator.onLine` is false. */
const offline = () => /** @type {any} */ (globalThis).navigator?.onLine === false;

/**
 * The rejection of a replay that met the network's failure: the queue
 * counts no failure for an error with `network: true` (task-queue.js).
 * @param {any} error
 */
const networkFailure = (error) =>
  Object.assign(new Error(`no answer (the network failed): ${describe(error)}`, { cause: error }), { network: true });

/** The stored request of a task: what a replay sends. */
/** @typedef {{ method: string, url: string, headers: [string, string][], body: ArrayBuffer | null }} StoredRequest */

export class Outbox {
  #queue;
  #max;
  #retry;
  /** The caller's onDone and delay (retry options): told too. @type {Function | undefined} */
  #done;
  /** @type {Function | undefined} */
  #delay;
  /** The caller's retry.maxElapsedMs (a replay's is at most its lease's). @type {number} */
  #elapsed;

  /** @param {import('../../types/outbox/index.js').OutboxOptions} [options] */
  constructor(options) {
    const { name, maxBodyBytes, retry, queue: q } = readAll(own(options), OUTBOX_OPTIONS);
    this.#max = maxBodyBytes;
    // A replay's own tries, a few at once (its key makes a POST retryable);
    // the queue's backoff spaces the replays. Checked now.
    this.#retry = withBackoff((input, init) => fetch(input, init), retry);
    this.#done = retry.onDone;
    this.#delay = retry.delay;
    this.#elapsed = retry.maxElapsedMs ?? Infinity;
    for (const k of OWN) if (q[k] !== undefined) throw new TypeError(`queue.${k} is set by the outbox`);
    // (not at the first add: where there is no IndexedDB, say so now)
    if (q.store === undefined && typeof indexedDB === 'undefined')
      throw new TypeError('queue.store is needed where there is no IndexedDB (new MemoryStore(), a DurableObjectStore, …)');
    this.#queue = new TaskQueue({
      ...q,
      store: q.store ?? new IndexedDBStore({ name }),
      syncTag: name,
      handler: (
        /** @type {{ payload: StoredRequest }} */ task,
        /** @type {{ signal: AbortSignal, completeBy: number }} */ { signal, completeBy },
      ) => this.#replay(task.payload, signal, completeBy),
    });
  }

  /** The task queue under it (its events, `get`, `purge`, `drain`). */
  get queue() {
    return this.#queue;
  }

  /** Starts replaying (now, on `online`, on Background Sync); returns this. */
  start() {
    this.#queue.start();
    return this;
  }

  /** Stops replaying (a replay in flight finishes). */
  stop() {
    return this.#queue.stop();
  }

  /**
   * Stores `request` to be sent later; resolves with its task id (its
   * `Idempotency-Key`: the request's own, else a new one). Its body is read.
   * @param {Request} request
   */
  async add(request) {
    if (!(request instanceof Request)) throw new TypeError('request must be a Request');
    const body = await bodyOf(request, this.#max);
    const headers = new Headers(request.headers);
    const key = keyOf(headers) ?? crypto.randomUUID();
    headers.set('idempotency-key', key);
    /** @type {[string, string][]} */
    const pairs = [];
    headers.forEach((v, k) => {
      pairs.push([k, v]);
    });
    /** @type {StoredRequest} */
    const stored = { method: request.method, url: request.url, headers: pairs, body };
    return this.#queue.enqueue(stored, { id: key });
  }

  /**
   * `fetch(request)` now, once; on a network failure the request is stored
   * instead and the answer is `202 Accepted` with its id in `Outbox-Id`
   * (for a Service Worker's `respondWith`). A request whose method is not
   * idempotent is sent with the `Idempotency-Key` it will be replayed
   * under (its own, else a new one), so that a server which took the
   * first send before the connection broke can tell the replay apart. A
   * request fetch refused (not a network failure), or whose body is over
   * the bound, is not stored: the failure is the answer.
   * @param {Request} request
   */
  async fetch(request) {
    if (!(request instanceof Request)) throw new TypeError('request must be a Request');
    // (the core's one rule, as with `idempotencyKey: true`: a method retried by itself, or a key of its own, needs none)
    const listed = METHODS.includes(request.method.toUpperCase());
    if (wantsKey({ listed, keyed: keyOf(request.headers) !== undefined, option: true, any: false })) {
      const headers = new Headers(request.headers);
      headers.set('idempotency-key', crypto.randomUUID());
      request = new Request(request, { headers });
    }
    const copy = request.clone();
    try {
      return await fetch(request);
    } catch (error) {
      if (request.signal?.aborted || !isNetworkError(error)) throw error;
      let id;
      try {
        id = await this.add(copy);
      } catch {
        throw error;
      }
      return new Response(null, { status: 202, statusText: 'Accepted', headers: { 'outbox-id': id } });
    }
  }

  /**
   * One replay: the stored request through withBackoff (`retry`). A 2xx or
   * 3xx ends the task. An answer the retry policy would try again (a
   * status of `retry.retryOn`, a server's wait, `x-should-retry: true`), a
   * throttled one (429, 503, 529), or one the `delay` hook gave up waiting for,
   * leaves it for a later replay once the replay's tries are spent (a
   * failure of the task); one it would not (another 4xx or 5xx,
   * `x-should-retry: false`, shouldRetry's false) ends it in `error`: it
   * would never succeed. No answer because of the network (a network
   * failure, or anything while offline) is no failure of the task: it
   * waits for the network (`network: true`).
   * @param {StoredRequest} stored
   * @param {AbortSignal} signal
   * @param {number} completeBy the lease's end
   */
  async #replay(stored, signal, completeBy) {
    const { method, url, headers, body } = stored;
    let why = '';
    let gaveUp = false;
    const [done, delay] = [this.#done, this.#delay];
    /** @type {Record<string, any>} */
    const hooks = { onDone: (/** @type {any} */ info) => ((why = info.reason), done?.(info)) };
    // (the delay hook giving up ends this replay's tries, not the task)
    if (delay)
      hooks.delay = (/** @type {any} */ info) => {
        const d = delay(info);
        if (d === false) gaveUp = true;
        return d;
      };
    // (the replay's tries end before the lease: a server's wait that would
    // outlast it is the queue's to wait, not this replay's)
    hooks.maxElapsedMs = Math.max(0, Math.min(this.#elapsed, completeBy - Date.now() - 100));
    /** @type {Response} */
    let res;
    try {
      res = await this.#retry(url, { method, headers, body, signal }, hooks);
    } catch (error) {
      // No answer, and the network is to blame (a network failure, or any
      // failure while the browser says it is offline): the request did not
      // fail, so the task spends no failure and waits for the network (the
      // queue's `network: true`). Its lease's end (signal) and a replay cut
      // by its deadline while online (the server may have taken it) count.
      if (!signal.aborted && (isNetworkError(error) || offline())) throw networkFailure(error);
      throw error;
    }
    await res.body?.cancel();
    if (res.status < 400) return;
    const error = `HTTP ${res.status} from ${method} ${url}`;
    // (the server's own `x-should-retry: false` ends it whatever the status)
    const never = (NEVER.includes(why) && !gaveUp && !throttled(res.status)) || advice(res.headers) === false;
    if (never) throw new PermanentError(error);
    // (a later replay waits what the server named: the queue's next attempt is not due before it)
    throw Object.assign(new Error(error), { retryAfterMs: serverWait(res.headers) });
  }
}
