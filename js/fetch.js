// @ts-check
// The drivers: fetchWithBackoff / withBackoff, and retry(fn) for any async
// work; one loop (`run`) for both, with or without a gate.
//
// I/O lives here (promises, timers, AbortSignal, fetch itself, headers);
// the decisions are the pure functions of policy.js; timing and arithmetic
// come from the wasm core (the schedule, and the jitter above a
// server-named wait). Timers and fetch are the globals, never `window`, so
// this runs in pages, workers, Service Workers, workerd, Deno, Bun and Node.
//
// A call whose first attempt succeeds makes no wasm call at all: its
// schedule is made at its first retry.
import { w, own, load, check, fn, number } from './wasm.js';
import { plan } from './backoff.js';
import { parseRetryAfter, serverWait } from './retry-after.js';
import { METHODS, RETRY_ON, isNetworkError, replayable, timing, verdict } from './policy.js';
import { abortable, deadline, observe, signalOf, sleep } from './hooks.js';

export { parseRetryAfter, serverWait };

/**
 * A number option in ms: > 0 (`positive`) or >= 0.
 * @template T
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {T} dflt
 * @param {boolean} positive
 */
const ms = (o, key, dflt, positive) => number(o, key, dflt, (v) => (positive ? v > 0 : v >= 0), `a number ${positive ? '> 0' : '>= 0'}`);

/**
 * A list option as a Set: `dflt` (a Set) when undefined, else an array
 * whose entries pass `ok` (mapped by `map`).
 * @param {Record<string, any>} o
 * @param {string} key
 * @param {Set<any>} dflt
 * @param {(v: any) => boolean} ok
 * @param {string} what
 * @param {(v: any) => any} [map]
 */
function list(o, key, dflt, ok, what, map = (v) => v) {
  const v = o[key];
  if (v === undefined) return dflt;
  const msg = `${key} must be an array of ${what}`;
  if (!Array.isArray(v)) throw new TypeError(msg);
  for (const x of v) if (!ok(x)) throw new RangeError(msg);
  return new Set(v.map(map));
}

/**
 * A boolean option.
 * @param {Record<string, any>} o
 * @param {string} key
 */
function flag(o, key) {
  const v = o[key];
  if (v !== undefined && typeof v !== 'boolean') throw new TypeError(`${key} must be a boolean`);
  return v === true;
}

const RETRY_SET = new Set(RETRY_ON);
const METHOD_SET = new Set(METHODS);

/** An HTTP token (RFC 9110 §5.6.2): a method or a header name. */
const TOKEN = /^[!#$%&'*+.^_`|~\w-]+$/;

/**
 * A deep enough copy of the options, taken when they are given (their
 * arrays and jitter object too): changing them later changes nothing.
 * @param {unknown} options
 */
function snapshot(options) {
  const o = own(options);
  for (const k in o) {
    const v = o[k];
    if (Array.isArray(v)) o[k] = [...v];
    else if (k === 'jitter' && typeof v === 'object' && v) o[k] = own(v);
  }
  return o;
}

/**
 * The options of a call, checked now rather than at the first failure.
 * @param {Record<string, any>} o from `snapshot`
 */
function config(o) {
  // The schedule's options, as a record the first retry of every call
  // loads (with a fresh seed unless the options name one).
  const [rec, max] = plan(o);
  const budget = o.budget;
  if (budget !== undefined && !(typeof budget?.deposit === 'function' && typeof budget.withdraw === 'function')) {
    throw new TypeError('budget must be a RetryBudget');
  }
  const gate = o.gate;
  if (gate !== undefined && gate !== false && typeof gate?.enter !== 'function') {
    throw new TypeError("gate must be a Gate (createGate from 'wasm-backoff/gate')");
  }
  const header = o.attemptHeader;
  if (header !== undefined && !(typeof header === 'string' && TOKEN.test(header))) {
    throw new (typeof header === 'string' ? RangeError : TypeError)('attemptHeader must be a header name');
  }
  return {
    rec,
    max,
    seeded: o.seed !== undefined,
    retryOn: list(o, 'retryOn', RETRY_SET, (s) => Number.isInteger(s) && s >= 100 && s <= 599, 'integer HTTP statuses (100-599)'),
    methods: list(
      o,
      'methods',
      METHOD_SET,
      (m) => typeof m === 'string' && TOKEN.test(m),
      'method names',
      (m) => m.toUpperCase(),
    ),
    retryNonIdempotent: flag(o, 'retryNonIdempotent'),
    idempotencyKey: flag(o, 'idempotencyKey'),
    attemptHeader: header,
    timeoutMs: ms(o, 'timeoutMs', undefined, true),
    maxElapsedMs: ms(o, 'maxElapsedMs', Infinity, false),
    maxRetryAfterMs: ms(o, 'maxRetryAfterMs', 60000, false),
    onRetry: fn(o, 'onRetry'),
    onDone: fn(o, 'onDone'),
    shouldRetry: fn(o, 'shouldRetry'),
    beforeRetry: fn(o, 'beforeRetry'),
    budget,
    gate: gate || undefined,
  };
}

/** @typedef {ReturnType<typeof config>} Config */

/**
 * One call: attempts until one is not retried, waits between them. With a
 * fetch function `send`, `input`/`init` are fetch's arguments; without, `input`
 * is retry(fn)'s function and `signal` its signal.
 * @param {Config} c
 * @param {any} input
 * @param {RequestInit | undefined} init
 * @param {typeof fetch | undefined} send
 * @param {AbortSignal} [signal]
 */
async function run(c, input, init, send, signal) {
  let isReq = input instanceof Request;
  if (send) signal = init?.signal ?? (isReq ? input.signal : undefined);
  if (signal?.aborted) throw signal.reason;
  const method = String(init?.method ?? (isReq ? input.method : 'GET')).toUpperCase();
  let headers = init?.headers ?? (isReq ? input.headers : undefined);
  // (a bad header throws here fetch's own TypeError, and nothing is sent)
  const keyed = () => new Headers(headers).has('idempotency-key');
  const key = send && c.idempotencyKey && !keyed() ? crypto.randomUUID() : undefined;
  const idempotent = !send || c.methods.has(method) || c.retryNonIdempotent || !!key || keyed();
  const body = replayable(init?.body);
  /** @type {Headers | undefined} headers changed by beforeRetry */
  let changed;
  const start = Date.now();
  let n = 0;
  let h = 0;
  // The schedule (a handle and a fresh seed) is made at the first retry:
  // most calls succeed at once and never need one. Freed however the call ends.
  const schedule = () => h || (load(c.rec, c.seeded), (h = check(w.backoff_new())));
  // The hard deadline: whatever runs at maxElapsedMs (an attempt, a hook) is aborted.
  const [dl, timer] = c.maxElapsedMs < Infinity ? deadline('maxElapsedMs', c.maxElapsedMs) : [];
  const ds = dl?.signal;
  // With a gate (gate.js) the waits are the target's: the call is held until
  // the gate lets it go, and its schedule only counts its attempts. (The
  // gate keeps the deadline of held calls itself.)
  const ticket =
    send && c.gate?.enter(c.gate.keyOf(input, init), signal, start + c.maxElapsedMs, (hint) => w.backoff_next(schedule(), hint ?? NaN));
  /** fetch's arguments for attempt `k` (its headers, and `sig`). */
  const args = (/** @type {number} */ k, /** @type {AbortSignal | undefined} */ sig) => {
    let o = init;
    if (key || c.attemptHeader || changed) {
      const hh = new Headers(changed ?? headers);
      if (key) hh.set('idempotency-key', key);
      if (c.attemptHeader) hh.set(c.attemptHeader, `attempt=${k}${c.max < Infinity ? `; max=${c.max}` : ''}`);
      o = { ...o, headers: hh };
    }
    if (sig !== signal) o = { ...o, signal: sig };
    return /** @type {[any, RequestInit | undefined]} */ ([isReq ? input.clone() : input, o]);
  };
  let why = '';
  let failed = false;
  let error, res, value, status;
  try {
    c.budget?.deposit(start);
    for (;;) {
      if (ticket) {
        await ticket.pass();
        // (released, then aborted or past the deadline before this ran: nothing is sent)
        if (signal?.aborted) throw signal.reason;
        if (ds?.aborted) throw ds.reason;
      }
      if (n && send && c.beforeRetry) await before();
      n++;
      failed = false;
      error = res = value = undefined;
      // The attempt's signal: the caller's, and the deadline's or (per
      // attempt, until the headers) its own timeout's, which the deadline
      // aborts too. Combined by AbortSignal.any only when the caller gave
      // one: it follows the caller's signal after the headers, for the body.
      let ac, t, sig, stop;
      if (c.timeoutMs !== undefined) {
        [ac, t] = deadline('timeoutMs', c.timeoutMs);
        ds?.addEventListener('abort', (stop = () => ac?.abort(ds?.reason)));
      }
      sig = ac?.signal ?? ds;
      sig = signal && sig ? AbortSignal.any([signal, sig]) : (sig ?? signal);
      try {
        if (!send) value = await (sig ? abortable(input({ attempt: n, signal: sig }), sig) : input({ attempt: n }));
        else if (sig === signal) res = await send(...args(n, sig));
        else res = await abortable(send(...args(n, sig)), sig);
      } catch (e) {
        if (signal?.aborted || ds?.aborted) throw e;
        [failed, error] = [true, e];
      } finally {
        clearTimeout(t);
        if (stop) ds?.removeEventListener('abort', stop);
      }
      status = res?.status;
      const hintMs = status >= 400 ? serverWait(res.headers) : undefined;
      let wants;
      if (c.shouldRetry && (failed || send)) {
        wants = await abortable(c.shouldRetry({ attempt: n, status, error, response: res }), signal, ds);
        if (wants !== undefined && typeof wants !== 'boolean') throw new TypeError('shouldRetry must return a boolean or undefined');
      }
      // (a plain success needs no verdict: the common case, kept cheap)
      why = !(failed || c.shouldRetry || status >= 400 || c.retryOn.has(status))
        ? 'success'
        : verdict({
            failed,
            network: !send || !!ac?.signal.aborted || isNetworkError(error),
            status,
            hintMs,
            retryOn: c.retryOn,
            idempotent,
            replayable: body,
            wants,
          });
      if (ticket) {
        // The gate decides (Ticket.fetched in gate.js): a reason to end with, or '' when held again.
        why = ticket.fetched(c, why, failed, status, res, error, hintMs, n);
        if (why) break;
        continue;
      }
      if (why) break;
      // (the schedule lifts its delay to a server-named wait, with jitter above)
      const delayMs = w.backoff_next(schedule(), hintMs ?? NaN);
      const now = Date.now();
      why = timing({ ...c, delayMs, hintMs, elapsedMs: now - start }) || (c.budget && !c.budget.withdraw(now) ? 'budget' : '');
      if (why) break;
      observe(c.onRetry, { attempt: n, delayMs, status, error, retryAfterMs: hintMs, response: res });
      res?.body?.cancel().catch(() => {}); // let go of a response we will not return: its connection and memory are freed
      await sleep(delayMs, signal, ds);
    }
  } catch (e) {
    // Aborted (by the caller, or by the deadline), held out by the gate, or a decision hook threw.
    ticket?.cancel();
    res?.body?.cancel().catch(() => {});
    why = signal?.aborted ? 'aborted' : ds?.aborted ? 'deadline' : (ticket?.why ?? 'hook-error');
    failed = true;
    error = signal?.aborted ? signal.reason : ds?.aborted ? ds.reason : e;
    res = undefined;
  } finally {
    clearTimeout(timer);
    if (h) w.backoff_free(h);
  }
  if (c.onDone) observe(c.onDone, { attempts: n, elapsedMs: Date.now() - start, reason: why, status: res?.status, error });
  if (failed) throw error;
  return send ? res : value;

  /** beforeRetry: may swap the request, or change its headers for this and later attempts. */
  async function before() {
    const request = new Request(...args(n + 1, undefined));
    const r = await abortable(c.beforeRetry({ attempt: n + 1, request, status, error, response: res, signal: signal ?? ds }), signal, ds);
    if (r instanceof Request) {
      [input, init, isReq, headers] = [r, signal && { signal }, true, r.headers];
      changed = undefined;
    } else if (r !== undefined) {
      if (typeof r !== 'object' || r === null) throw new TypeError('beforeRetry must return a Request, headers or undefined');
      changed = new Headers(changed ?? headers);
      new Headers(/** @type {HeadersInit} */ (r)).forEach((v, k) => {
        changed?.set(k, v);
      });
    }
  }
}

/** The validated defaults, made at the first call that uses them (not at import: no wasm work before it is needed). */
let defaults;

/**
 * `fetch` with retries: resolves with a Response whatever its status (after
 * the last try, the last response); rejects only where fetch would.
 * @param {RequestInfo | URL} input
 * @param {RequestInit} [init]
 * @param {import('../pkg/index.js').RetryOptions} [options]
 * @returns {Promise<Response>}
 */
export function fetchWithBackoff(input, init, options) {
  let c;
  try {
    c = options === undefined ? (defaults ??= config(own())) : config(snapshot(options));
  } catch (e) {
    return Promise.reject(e);
  }
  return run(c, input, init, globalThis.fetch);
}

/**
 * Wraps a fetch function (validating `options` now, on a copy); the result
 * has fetch's signature plus per-call options, and `extend(options)`.
 * @param {typeof fetch} fetchFn
 * @param {import('../pkg/index.js').RetryOptions} [options]
 * @returns {import('../pkg/index.js').FetchWithBackoff}
 */
export function withBackoff(fetchFn, options) {
  if (typeof fetchFn !== 'function') throw new TypeError('fetchFn must be a function');
  const base = snapshot(options);
  const c = config(base);
  const merged = (/** @type {unknown} */ more) => ({ ...base, ...snapshot(more) });
  const f = (/** @type {RequestInfo | URL} */ input, /** @type {RequestInit | undefined} */ init, /** @type {unknown} */ more) => {
    let cc = c;
    try {
      if (more !== undefined) cc = config(merged(more));
    } catch (e) {
      return Promise.reject(e);
    }
    return run(cc, input, init, fetchFn);
  };
  f.extend = (/** @type {unknown} */ more) => withBackoff(fetchFn, merged(more));
  return f;
}

/**
 * Runs `fn({ attempt, signal })` until it resolves, with the same
 * schedules, deadline, hooks and budget as the fetch driver: every
 * rejection is retried unless `shouldRetry` returns false.
 * @template T
 * @param {(ctx: { attempt: number, signal?: AbortSignal }) => T | PromiseLike<T>} fn
 * @param {import('../pkg/index.js').RetryFnOptions} [options]
 * @returns {Promise<T>}
 */
export function retry(fn, options) {
  let c, signal;
  try {
    if (typeof fn !== 'function') throw new TypeError('fn must be a function');
    if (options === undefined) c = defaults ??= config(own());
    else {
      const o = snapshot(options);
      signal = signalOf(o);
      c = config(o);
    }
  } catch (e) {
    return Promise.reject(e);
  }
  return run(c, fn, undefined, undefined, signal);
}
