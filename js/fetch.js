// @ts-check
// The fetch driver: fetchWithBackoff / withBackoff.
//
// I/O lives here (promises, timers, AbortSignal, fetch itself: JavaScript's
// own objects, and the headers' strings); timing and arithmetic come from
// the wasm core (the schedule, and the jitter above a server-named wait).
// Timers and fetch are the globals, never `window`, so this runs in pages,
// workers, Service Workers, workerd, Deno, Bun and Node alike.
//
// A call whose first attempt succeeds makes no wasm call at all: its
// schedule is made at its first retry.
import { w, own, load, check, fn, number } from './wasm.js';
import { plan } from './backoff.js';
import { parseRetryAfter } from './retry-after.js';
import { MAX_TIMER } from './gen/boundary.js';

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const RETRY_ON = [408, 429, 500, 502, 503, 504];
const RETRY_ON_MSG = 'retryOn must be an array of integer HTTP statuses (100-599)';

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
 * The options of a call, read once (own properties only) and checked now
 * rather than at the first failure.
 * @param {unknown} [options]
 */
function retryConfig(options) {
  const o = own(options);
  // The schedule's options, as a record the first retry of every call
  // loads (with a fresh seed unless the options name one).
  const rec = plan(o);
  let retryOn = RETRY_ON;
  if (o.retryOn !== undefined) {
    if (!Array.isArray(o.retryOn)) throw new TypeError(RETRY_ON_MSG);
    for (const s of o.retryOn) if (!(Number.isInteger(s) && s >= 100 && s <= 599)) throw new RangeError(RETRY_ON_MSG);
    retryOn = o.retryOn;
  }
  const rni = o.retryNonIdempotent;
  if (rni !== undefined && typeof rni !== 'boolean') throw new TypeError('retryNonIdempotent must be a boolean');
  const budget = o.budget;
  if (budget !== undefined && !(typeof budget?.deposit === 'function' && typeof budget.withdraw === 'function')) {
    throw new TypeError('budget must be a RetryBudget');
  }
  const gate = o.gate;
  if (gate !== undefined && gate !== false && typeof gate?.enter !== 'function') {
    throw new TypeError("gate must be a Gate (createGate from 'wasm-backoff/gate')");
  }
  return {
    rec,
    seeded: o.seed !== undefined,
    retryOn: new Set(retryOn),
    retryNonIdempotent: rni === true,
    timeoutMs: ms(o, 'timeoutMs', undefined, true),
    maxElapsedMs: ms(o, 'maxElapsedMs', Infinity, false),
    maxRetryAfterMs: ms(o, 'maxRetryAfterMs', 60000, false),
    onRetry: fn(o, 'onRetry'),
    onDone: fn(o, 'onDone'),
    shouldRetry: fn(o, 'shouldRetry'),
    budget,
    gate: gate || undefined,
  };
}

export { parseRetryAfter };

function timeoutError() {
  return new DOMException('The attempt timed out (timeoutMs)', 'TimeoutError');
}

/** One try: its own AbortController, linked to the caller's signal and the per-attempt timeout. */
async function attempt(fetchFn, input, init, signal, timeoutMs) {
  // A Request is cloned for every try, so its body can be sent again.
  const req = input instanceof Request ? input.clone() : input;
  // Nothing can abort this try: hand fetch the caller's init untouched
  // (a fresh signal per try costs fetch measurable bookkeeping).
  if (!signal && timeoutMs === undefined) return fetchFn(req, init);
  const ac = new AbortController();
  const onAbort = () => ac.abort(signal.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => ac.abort(timeoutError()), Math.min(timeoutMs, MAX_TIMER));
  try {
    return await fetchFn(req, { ...init, signal: ac.signal });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Waits `ms`, or rejects with the signal's reason the moment it aborts; leaves no timer or listener. */
function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(ms, MAX_TIMER),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

async function run(fetchFn, input, init, c) {
  const isRequest = input instanceof Request;
  const signal = init?.signal ?? (isRequest ? input.signal : undefined);
  if (signal?.aborted) throw signal.reason;
  const method = String(init?.method ?? (isRequest ? input.method : 'GET')).toUpperCase();
  const idempotent =
    IDEMPOTENT.has(method) ||
    c.retryNonIdempotent ||
    new Headers(init?.headers ?? (isRequest ? input.headers : undefined)).has('idempotency-key');
  // A stream body can be read once: it is sent once and never retried.
  const replayable = !(init?.body instanceof ReadableStream);
  // The schedule (a handle and a fresh seed) is made at the first retry:
  // most calls succeed at once and never need one. Freed however the call ends.
  let h = 0;
  const schedule = () => h || (load(c.rec, c.seeded), (h = check(w.backoff_new())));
  try {
    const start = Date.now();
    c.budget?.deposit(start);
    let attempts = 0;
    const done = (reason, res, error) => {
      c.onDone?.({ attempts, elapsedMs: Date.now() - start, reason, status: res?.status, error });
    };
    // With a gate (gate.js) the waits are the target's: the call is held until
    // the gate lets it go, and its schedule only counts its attempts.
    const ticket = c.gate?.enter(c.gate.keyOf(input, init), signal, start + c.maxElapsedMs, () => w.backoff_next(schedule(), NaN) >= 0);
    for (;;) {
      if (ticket) {
        try {
          await ticket.pass();
        } catch (e) {
          done(ticket.why, undefined, e);
          throw e;
        }
      }
      attempts++;
      let res, error, status;
      let failed = false;
      try {
        res = await attempt(fetchFn, input, init, signal, c.timeoutMs);
        status = res.status;
      } catch (e) {
        if (signal?.aborted) {
          ticket?.cancel();
          done('aborted', undefined, signal.reason);
          throw signal.reason;
        }
        [failed, error] = [true, e];
      }
      const finish = (reason) => {
        done(reason, res, error);
        if (failed) throw error;
        return res;
      };
      let retry = failed || c.retryOn.has(status);
      let reason = retry ? '' : 'not-retryable';
      if (retry && !idempotent) [retry, reason] = [false, 'not-idempotent'];
      // A throwing shouldRetry or onRetry takes the call out of the gate (sent
      // or held again), or it would hold a slot or sit in the queue forever.
      try {
        const verdict = c.shouldRetry?.({ attempt: attempts, status, error, response: res });
        if (verdict === true) retry = true;
        else if (verdict === false) [retry, reason] = [false, 'vetoed'];
        if (retry && !replayable) [retry, reason] = [false, 'not-replayable'];
        if (ticket) {
          // The gate decides (Ticket.fetched in gate.js): a reason to end with, or '' when held again.
          const why = ticket.fetched(c, retry, failed, status, res, error, reason, attempts);
          if (why) return finish(why);
          continue;
        }
      } catch (e) {
        ticket?.cancel();
        throw e;
      }
      if (!retry) return finish(!failed && status < 400 ? 'success' : reason);

      const retryAfterMs = res ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
      // (the schedule lifts its delay to a server-named wait, with jitter above)
      const delay = w.backoff_next(schedule(), retryAfterMs ?? NaN);
      if (delay < 0) return finish('exhausted');
      if (retryAfterMs > c.maxRetryAfterMs) return finish('retry-after');
      const now = Date.now();
      if (now - start + delay > c.maxElapsedMs) return finish('deadline');
      if (c.budget && !c.budget.withdraw(now)) return finish('budget');
      c.onRetry?.({ attempt: attempts, delayMs: delay, status, error, retryAfterMs });
      res?.body?.cancel().catch(() => {}); // let go of a response we will not return: its connection and memory are freed
      try {
        await sleep(delay, signal);
      } catch (e) {
        done('aborted', undefined, e);
        throw e;
      }
    }
  } finally {
    if (h) w.backoff_free(h);
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
    c = options === undefined ? (defaults ??= retryConfig()) : retryConfig(options);
  } catch (e) {
    return Promise.reject(e);
  }
  return run(globalThis.fetch, input, init, c);
}

/**
 * Wraps a fetch function (validating `options` now); the result has fetch's signature.
 * @param {typeof fetch} fetchFn
 * @param {import('../pkg/index.js').RetryOptions} [options]
 */
export function withBackoff(fetchFn, options) {
  if (typeof fetchFn !== 'function') throw new TypeError('fetchFn must be a function');
  const c = retryConfig(options);
  return (/** @type {RequestInfo | URL} */ input, /** @type {RequestInit | undefined} */ init) => run(fetchFn, input, init, c);
}
