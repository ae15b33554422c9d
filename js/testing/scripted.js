// @ts-check
// scriptedFetch: a `fetch` that answers from a script instead of a network,
// with the failures a real one meets (statuses and headers, answers after a
// delay, resets, hangs, bodies that stall or are cut), each on the global
// timers: virtual while a clock is installed. The vocabulary of a step is
// the scripted HTTP server's (tests/server/scripted.mjs).
import { own, readAll, spec, num, ms, flag } from '../options.js';
import { abortable, cut, isStatus, reset, signalOf, sleep } from './faults.js';

/** The fields of an outcome (OutcomeInit), checked in this order (each message begins with where it is: `script[2].`). */
export const OUTCOME_FIELDS = {
  status: num('an integer HTTP status in [200, 599]', isStatus, 200),
  statusText: spec((v) => typeof v === 'string', 'a string', undefined, ''),
  delayMs: ms(0, false, true),
  size: num('an integer >= 0', (v) => Number.isSafeInteger(v) && v >= 0),
  stallAfter: num('an integer >= 0', (v) => Number.isSafeInteger(v) && v >= 0),
  cutAfter: num('an integer >= 0', (v) => Number.isSafeInteger(v) && v >= 0),
  reset: flag(),
  hang: flag(),
  // (what Response takes, checked by it)
  headers: spec(() => true, 'a HeadersInit'),
  body: spec(() => true, 'a body'),
};

/**
 * One outcome of a script, checked: a number is a status, 'reset' a reset,
 * a Response is returned as is; `where` names it in the error.
 * @param {unknown} step
 * @param {string} where
 * @returns {Record<string, any> | Response}
 */
function check(step, where) {
  if (typeof step === 'number') step = { status: step };
  else if (step === 'reset') step = { reset: true };
  if (typeof Response === 'function' && step instanceof Response) return step;
  if (step === null || typeof step !== 'object' || Array.isArray(step))
    throw new TypeError(`${where} must be an outcome: a status, 'reset', a Response or an object`);
  const s = own(step, where);
  for (const k of Object.keys(s)) if (!Object.hasOwn(OUTCOME_FIELDS, k)) throw new TypeError(`${where}: unknown field '${k}'`);
  readAll(s, OUTCOME_FIELDS, `${where}.`);
  if (s.stallAfter !== undefined && s.cutAfter !== undefined) throw new TypeError(`${where}: stallAfter and cutAfter exclude each other`);
  return s;
}

/**
 * A script as a function (call, n) => outcome, n counting its calls from 0.
 * @param {unknown} script
 * @param {string} where
 * @returns {(call: any) => Promise<Record<string, any> | Response>}
 */
function compile(script, where) {
  let n = 0;
  if (typeof script === 'function') return async (call) => check(await script(call, n), `${where}(call ${n++})`);
  const steps = (Array.isArray(script) ? script : [script]).map((s, i) => check(s, `${where}[${i}]`));
  if (steps.length === 0) throw new TypeError(`${where} must have at least one outcome`);
  return async () => steps[Math.min(n++, steps.length - 1)];
}

/** The body of `size` bytes the scripted server sends (byte i = i * 7 % 251). @param {number} size */
const pattern = (size) => Uint8Array.from({ length: size }, (_, i) => (i * 7) % 251);

/**
 * A Response of step `s` for the request to `url`: its body stalls or is cut
 * after `stallAfter` / `cutAfter` bytes; a stalled one errors with the
 * signal's reason when it aborts, as a real body does.
 * @param {Record<string, any>} s
 * @param {string} url
 * @param {AbortSignal | undefined} signal
 */
async function respond(s, url, signal) {
  const headers = new Headers(s.headers);
  /** @type {any} */
  let body = s.size !== undefined ? pattern(s.size) : s.body;
  const plain = typeof body !== 'object' || body === null || ArrayBuffer.isView(body) || body instanceof ArrayBuffer;
  const native = plain || body instanceof Blob || body instanceof ReadableStream || body instanceof URLSearchParams;
  if (!native && !(typeof FormData === 'function' && body instanceof FormData)) {
    body = JSON.stringify(body);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  }
  const after = s.stallAfter ?? s.cutAfter;
  if (after !== undefined) {
    const bytes = new Uint8Array(await new Response(body).arrayBuffer()).subarray(0, after);
    let sent = false;
    body = new ReadableStream(
      {
        start(c) {
          signal?.addEventListener('abort', () => c.error(signal.reason), { once: true });
        },
        pull(c) {
          if (!sent && bytes.length > 0) return void ((sent = true), c.enqueue(bytes));
          if (s.cutAfter !== undefined) c.error(cut());
          else return new Promise(() => {});
        },
      },
      { highWaterMark: 0 },
    );
  }
  const res = new Response(body ?? null, { status: s.status ?? 200, statusText: s.statusText, headers });
  Object.defineProperty(res, 'url', { value: url });
  return res;
}

/**
 * A fetch that answers from `script` (see types/testing/index.d.ts).
 * @param {unknown} script
 */
export function scriptedFetch(script) {
  if (script == null) throw new TypeError('script must be an outcome, a list or function of outcomes, or an object of paths');
  /** @type {Map<string, (call: any) => Promise<any>>} */
  const paths = new Map();
  // An object whose keys are paths ('/…', or '*' for the others) is a map of scripts.
  const keys = typeof script === 'object' && !Array.isArray(script) ? Object.keys(script) : [];
  const byPath = keys.length > 0 && keys.every((k) => k === '*' || k.startsWith('/'));
  if (byPath) for (const k of keys) paths.set(k, compile(/** @type {any} */ (script)[k], `script['${k}']`));
  else paths.set('*', compile(script, 'script'));
  const notFound = async () => ({ status: 404 });
  /** @type {any[]} */
  const calls = [];
  /** Response outcomes given out: the next repeat gets a clone kept aside. @type {WeakMap<Response, Response>} */
  const spare = new WeakMap();

  /**
   * @param {RequestInfo | URL} input
   * @param {RequestInit} [init]
   */
  async function fetch(input, init) {
    const signal = signalOf(input, init);
    // (a URL, method or header fetch refuses throws fetch's own TypeError here)
    const request = new Request(input, init);
    const { method, url } = request;
    /** @type {Record<string, string>} */
    const headers = {};
    request.headers.forEach((v, k) => {
      headers[k] = v;
    });
    const call = { method, url, headers, body: /** @type {string | null} */ (null), at: Date.now() };
    calls.push(call);
    signal?.throwIfAborted();
    if (request.body) call.body = await abortable(request.text(), signal);
    const path = new URL(url).pathname;
    const step = await (paths.get(path) ?? paths.get('*') ?? notFound)(call);
    if (step instanceof Response) {
      const out = spare.get(step) ?? step;
      spare.set(step, out.clone());
      return out;
    }
    if (step.delayMs) await sleep(step.delayMs, signal);
    if (step.hang) await abortable(new Promise(() => {}), signal);
    signal?.throwIfAborted();
    if (step.reset) throw reset();
    return respond(step, url, signal);
  }
  /** @type {{ (input: RequestInfo | URL, init?: RequestInit): Promise<Response>, readonly calls: any[], readonly count: number }} */
  const scripted = Object.defineProperties(/** @type {any} */ (fetch), {
    calls: { value: calls, enumerable: true },
    count: { get: () => calls.length, enumerable: true },
  });
  return scripted;
}
