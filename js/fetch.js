// The fetch driver: fetchWithBackoff / withBackoff / RetryBudget.
//
// I/O lives here (promises, timers, AbortSignal, fetch itself: JavaScript's
// own objects); timing and arithmetic come from the wasm core (the schedule,
// Retry-After parsing, the jitter above a Retry-After, the budget). Timers and
// fetch are the globals, never `window`, so this runs in pages, workers,
// Service Workers, workerd, Deno, Bun and Node alike.
import { RawBudget, retry_after, input_buffer } from './wasm_backoff.js';
import { rawBackoff, memory, fn, MAX_TIMER } from './backoff.js';
import { gateOption, ms as positive } from './gate.js';

const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);
const RETRY_ON = [408, 429, 500, 502, 503, 504];
const RETRY_ON_MSG = 'retryOn must be an array of integer HTTP statuses (100-599)';

function retryConfig(options, own) {
  if (options == null) options = {};
  else if (typeof options !== 'object') throw new TypeError('options must be an object');
  const o = options;
  // The schedule's options, checked now rather than at the first failure;
  // maxElapsedMs is the driver's wall-clock deadline, not a sum of delays.
  const schedule = { ...o, maxElapsedMs: undefined };
  rawBackoff(schedule, 5, () => 0).free();
  let retryOn = RETRY_ON;
  if (o.retryOn !== undefined) {
    if (!Array.isArray(o.retryOn)) throw new TypeError(RETRY_ON_MSG);
    for (const s of o.retryOn) if (!(Number.isInteger(s) && s >= 100 && s <= 599)) throw new RangeError(RETRY_ON_MSG);
    retryOn = o.retryOn;
  }
  const rni = o.retryNonIdempotent;
  if (rni !== undefined && typeof rni !== 'boolean') throw new TypeError('retryNonIdempotent must be a boolean');
  const budget = o.budget;
  if (budget !== undefined && !(budget instanceof RetryBudget)) throw new TypeError('budget must be a RetryBudget');
  return {
    schedule,
    retryOn: new Set(retryOn),
    retryNonIdempotent: rni === true,
    timeoutMs: positive(o, 'timeoutMs', undefined, true),
    maxElapsedMs: positive(o, 'maxElapsedMs', Infinity, false),
    maxRetryAfterMs: positive(o, 'maxRetryAfterMs', 60000, false),
    onRetry: fn(o, 'onRetry'),
    onDone: fn(o, 'onDone'),
    shouldRetry: fn(o, 'shouldRetry'),
    budget,
    gate: gateOption(o.gate, schedule, own),
  };
}

/** The wait a Retry-After header asks for, in ms; undefined if absent, invalid or past. */
export function parseRetryAfter(value, nowMs = Date.now()) {
  if (value == null) return undefined;
  const s = String(value);
  if (s.length > 64) return undefined;
  const p = input_buffer();
  const mem = new Uint8Array(memory.buffer); // a fresh view: memory can grow
  for (let i = 0; i < s.length; i++) mem[p + i] = s.charCodeAt(i) & 0xff;
  const ms = retry_after(nowMs, s.length);
  return ms < 0 ? undefined : ms;
}

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
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.min(ms, MAX_TIMER));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Lets go of a response we will not return, so its connection and memory are freed. */
function discard(res) {
  res?.body?.cancel().catch(() => {});
}

async function run(fetchFn, input, init, c) {
  const isRequest = typeof Request !== 'undefined' && input instanceof Request;
  const signal = init?.signal ?? (isRequest ? input.signal : undefined);
  if (signal?.aborted) throw signal.reason;
  const method = String(init?.method ?? (isRequest ? input.method : 'GET')).toUpperCase();
  const idempotent =
    IDEMPOTENT.has(method) || c.retryNonIdempotent || new Headers(init?.headers ?? (isRequest ? input.headers : undefined)).has('idempotency-key');
  // A stream body can be read once: it is sent once and never retried.
  const replayable = !(typeof ReadableStream !== 'undefined' && init?.body instanceof ReadableStream);
  // The schedule (a wasm object and a fresh seed) is made at the first
  // retry: most calls succeed at once and never need one.
  let backoff;
  const schedule = () => (backoff ??= rawBackoff(c.schedule, 5));
  const start = Date.now();
  c.budget?.deposit(start);
  let attempts = 0;
  const done = (reason, res, error) => {
    backoff?.free();
    c.onDone?.({ attempts, elapsedMs: Date.now() - start, reason, status: res?.status, error });
  };
  // With a gate (gate.js) the waits are the target's: the call is held until
  // the gate lets it go, and its schedule only counts its attempts.
  const ticket = c.gate?.enter(c.gate.keyOf(input, init), signal, start + c.maxElapsedMs, () => schedule().next() >= 0);
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
        const hurt = retry || failed || c.retryOn.has(status);
        let ra = hurt && res ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
        // The call returns at once; the target's round still waits (up to maxRetryAfterMs).
        if (ra > c.maxRetryAfterMs) [retry, reason, ra] = [false, 'retry-after', c.maxRetryAfterMs];
        if (retry && c.budget && !c.budget.withdraw(Date.now())) [retry, reason] = [false, 'budget'];
        const why = ticket.settle(hurt, retry, ra);
        if (why) return finish(retry ? why : !failed && status < 400 ? 'success' : reason);
        c.onRetry?.({ attempt: attempts, delayMs: ticket.waitMs(), status, error, retryAfterMs: ra });
        discard(res);
        continue;
      }
    } catch (e) {
      ticket?.cancel();
      throw e;
    }
    if (!retry) return finish(!failed && status < 400 ? 'success' : reason);

    let delay = schedule().next();
    if (delay < 0) return finish('exhausted');
    const retryAfterMs = res ? parseRetryAfter(res.headers.get('retry-after')) : undefined;
    if (retryAfterMs !== undefined) {
      if (retryAfterMs > c.maxRetryAfterMs) return finish('retry-after');
      delay = backoff.hint(delay, retryAfterMs);
    }
    const now = Date.now();
    if (now - start + delay > c.maxElapsedMs) return finish('deadline');
    if (c.budget && !c.budget.withdraw(now)) return finish('budget');
    c.onRetry?.({ attempt: attempts, delayMs: delay, status, error, retryAfterMs });
    discard(res);
    try {
      await sleep(delay, signal);
    } catch (e) {
      done('aborted', undefined, e);
      throw e;
    }
  }
}

/**
 * `fetch` with retries: resolves with a Response whatever its status (after
 * the last try, the last response); rejects only where fetch would.
 */
/** The validated defaults, made at the first call that uses them. */
let defaults;

export function fetchWithBackoff(input, init, options) {
  let c;
  try {
    c = options === undefined ? (defaults ??= retryConfig()) : retryConfig(options);
  } catch (e) {
    return Promise.reject(e);
  }
  return run(globalThis.fetch, input, init, c);
}

/** Wraps a fetch function (validating `options` now); the result has fetch's signature. */
export function withBackoff(fetchFn, options) {
  if (typeof fetchFn !== 'function') throw new TypeError('fetchFn must be a function');
  const c = retryConfig(options, true);
  return (input, init) => run(fetchFn, input, init, c);
}

const BUDGET_MSG = ['', 'ttlMs must be a finite number > 0', 'minPerSec must be a finite number >= 0', 'retryRatio must be a finite number >= 0'];

/**
 * Retries limited to a fraction of recent traffic plus a small floor, shared
 * by every call given it (defaults of tower's TpsBudget).
 */
export class RetryBudget {
  #raw;

  constructor(options) {
    const o = options ?? {};
    if (typeof o !== 'object') throw new TypeError('options must be an object');
    const get = (key, dflt, code) => {
      const v = o[key];
      if (v === undefined) return dflt;
      if (typeof v !== 'number') throw new TypeError(BUDGET_MSG[code]);
      return v; // ranges (NaN included) are checked in wasm
    };
    const raw = new RawBudget(get('ttlMs', 10000, 1), get('minPerSec', 10, 2), get('retryRatio', 0.2, 3));
    const code = raw.op(0, 0);
    if (code) {
      raw.free();
      throw new RangeError(BUDGET_MSG[code]);
    }
    this.#raw = raw;
  }

  /** Records one request (a first attempt). */
  deposit(now = Date.now()) {
    this.#raw.op(1, now);
  }

  /** Takes one retry if the budget allows it. */
  withdraw(now = Date.now()) {
    return this.#raw.op(2, now) === 1;
  }

  /** Retries available now. */
  available(now = Date.now()) {
    return this.#raw.op(3, now);
  }
}
