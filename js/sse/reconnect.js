// @ts-check
// What a long-lived connection (wasm-backoff/sse's EventSource,
// wasm-backoff/ws's WebSocket) takes from the engine: its options read as a
// call's (the schedule's record, the episode's deadline, the statuses
// retried), and the lane of a reconnect. A reconnect is one call of the
// engine (js/engine/loop.js) started from the connection that broke: the
// break is a failed attempt the lane decides on (the first wait, drawn from
// the call's own schedule: jittered, on the server's `retry:` as its base
// when it named one), and each attempt after it goes through the lane the
// connection uses (the plain schedule, or a gate's ticket: a gate shared
// with the page's fetches hears every failed attempt). Each connection
// opened ends its call: the next break starts a fresh schedule.
import { w, mem, write, record, check, OPTS } from '../wasm.js';
import { ms, statuses, own, readAll, spec } from '../options.js';
import { sleep } from '../hooks.js';
import { scheduled } from '../engine/schedule.js';
import { Call, drive } from '../engine/loop.js';
import { RETRY_ON } from '../policy.js';
import { MAX_RETRY_AFTER_MS } from '../gen/policy.js';
import { SCHEDULE, F_BASE_MS, F_MAX_DELAY_MS, F_MAX_ELAPSED_MS } from '../gen/boundary.js';

/** The default reconnect schedule's cap, ms (a base above it raises it). */
export const MAX_DELAY_MS = 30_000;

/**
 * The reconnect options of a long-lived connection over the schedule's
 * (SCHEDULE), in the order they are checked.
 */
export const RECONNECT_OPTIONS = {
  maxElapsedMs: ms(Infinity),
  maxRetryAfterMs: ms(MAX_RETRY_AFTER_MS),
  retryOn: statuses(new Set(RETRY_ON)),
};

/** The `gate` option of a connection: a Gate (its `lane` is the engine's). */
export const gateOption = () => spec((v) => typeof v?.lane === 'function', "a Gate (createGate from 'wasm-backoff/gate')");

/**
 * The reconnect options of `o` (from `own`), checked now (a TypeError or
 * RangeError naming the option): the schedule as a record each reconnect
 * loads (no attempt limit unless `maxAttempts`; `baseMs` by default
 * `baseMs`, its cap 30 s, unless a preset sets them), the deadline of one
 * reconnect (`maxElapsedMs`: a wall-clock bound, not a sum of delays), the
 * longest server-named wait waited for (where the connection's answers
 * name one: `table`) and the statuses retried.
 * @param {Record<string, any>} o
 * @param {number} baseMs
 * @param {Partial<typeof RECONNECT_OPTIONS>} [table]
 */
export function reconnectOptions(o, baseMs, table = RECONNECT_OPTIONS) {
  write(o, SCHEDULE, () => 0);
  const m = mem();
  if (o.preset === undefined) {
    if (o.baseMs === undefined) m[OPTS + F_BASE_MS] = baseMs;
    if (o.maxDelayMs === undefined) m[OPTS + F_MAX_DELAY_MS] = Math.max(MAX_DELAY_MS, o.baseMs ?? baseMs);
  }
  m[OPTS + F_MAX_ELAPSED_MS] = NaN;
  const rec = record(SCHEDULE);
  w.backoff_free(check(w.backoff_new())); // (the module checks the ranges)
  return { rec, seeded: o.seed !== undefined, ...readAll(o, table) };
}

/**
 * The options object of a constructor (`own`), with the message naming it.
 * @param {unknown} options
 */
export const optionsOf = (options) => own(options, 'options');

/**
 * The lane of a reconnect (drive's `from` is the break): the first wait is
 * the call's own schedule's, the attempts after it go through `inner`.
 * @param {import('../engine/loop.js').Lane} inner
 * @returns {import('../engine/loop.js').Lane}
 */
export function reconnecting(inner) {
  let first = true;
  return {
    pass(call, d) {
      if (!first) return inner.pass(call, d);
      first = false;
      return sleep(d, call.signal, call.ds).then(() => inner.pass(call, 0));
    },
    after: (call, v, o) => (first ? scheduled.after(call, v, o) : inner.after(call, v, o)),
    cancel: () => inner.cancel?.(),
    get why() {
      return inner.why;
    },
  };
}

/**
 * An `error` event with what the caller needs to know: `message`, and
 * where known the `error`, the `status`, and `delayMs` (the wait before the
 * next try; absent when the connection is closed for good).
 * @param {{ message: string, error?: unknown, status?: number, delayMs?: number }} info
 */
export const errorEvent = (info) => Object.assign(new Event('error'), info);

/**
 * One connect of a long-lived connection: a call of `job` (started from
 * the break `broke`, when it reconnects) through the gate's lane when the
 * options name one, else the plain schedule. Resolves with the job's
 * result; rejects as the engine's calls do (aborted, the deadline, the
 * attempts spent on failures).
 * @param {any} c the call's options
 * @param {import('../engine/loop.js').Job} job
 * @param {string} url the gate's key is the URL's
 * @param {AbortSignal} signal
 * @param {import('../engine/loop.js').Outcome} [broke]
 */
export function connect(c, job, url, signal, broke) {
  const call = new Call(c, signal);
  const lane = c.gate ? c.gate.lane(call, url, undefined) : scheduled;
  return drive(call, job, broke ? reconnecting(lane) : lane, broke);
}

/** The message of a connect that failed for good. @param {unknown} error */
export const cannot = (error) => `cannot connect: ${String(/** @type {any} */ (error)?.message ?? error)}`;

/** Whether this runtime's MessageEvent has `lastEventId` and `origin` (workerd's throws when they are read). @type {boolean | undefined} */
let whole;

/**
 * A `message` (or named) event: a MessageEvent where the runtime's is
 * whole, else an Event with the same fields.
 * @param {string} type
 * @param {{ data: unknown, origin: string, lastEventId?: string }} init
 * @returns {MessageEvent}
 */
export function messageEvent(type, init) {
  if (whole === undefined) {
    try {
      whole = new MessageEvent('message', { lastEventId: 'x', origin: 'y' }).lastEventId + 'y' === 'xy';
    } catch {
      whole = false;
    }
  }
  const i = { lastEventId: '', ...init };
  return whole ? new MessageEvent(type, i) : /** @type {any} */ (Object.assign(new Event(type), i));
}
