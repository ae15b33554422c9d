// @ts-check
// chaos: faults injected around any fetch, as Polly's Simmy strategies do
// (outcome, fault and latency injection): with probability `rate` a call is
// answered by a fault (a status, or a reset) without reaching the fetch
// wrapped, and every call may wait `latencyMs` first (on the global timers:
// virtual while a clock is installed). Seeded: the same seed faults the same
// calls in every runtime; the calls that fault depend only on `seed` and
// `rate` (one draw each, as the scripted server's `failRate`).
import { fn, number, own } from '../options.js';
import { isStatus, reset, signalOf, sleep } from './faults.js';
import { mulberry32 } from './random.js';

/**
 * `fetchFn` with faults injected (see types/testing/index.d.ts).
 * @param {typeof fetch} fetchFn
 * @param {{ rate: number, status?: number, statuses?: readonly number[], reset?: boolean | number, latencyMs?: number | readonly [number, number], headers?: HeadersInit, seed?: number }} options
 */
export function chaos(fetchFn, options) {
  fn({ fetch: fetchFn }, 'fetch', true);
  const o = own(options);
  const share = (/** @type {number} */ v) => v >= 0 && v <= 1;
  const rate = /** @type {number} */ (number(o, 'rate', undefined, share, 'a number in [0, 1]'));
  if (rate === undefined) throw new TypeError('rate must be a number in [0, 1]');
  const status = number(o, 'status', 503, isStatus, 'an integer HTTP status in [200, 599]');
  let statuses = [status];
  if (o.statuses !== undefined) {
    const msg = 'statuses must be a non-empty array of integer HTTP statuses in [200, 599]';
    if (!Array.isArray(o.statuses)) throw new TypeError(msg);
    if (o.statuses.length === 0 || !o.statuses.every(isStatus)) throw new RangeError(msg);
    statuses = [...o.statuses];
  }
  const resets = o.reset === true ? 1 : o.reset === false ? 0 : number(o, 'reset', 0, share, 'a boolean or a number in [0, 1]');
  let [lo, hi] = [0, 0];
  const lat = o.latencyMs;
  const latWhat = 'a finite number >= 0 or a range [min, max] of them';
  const latMsg = `latencyMs must be ${latWhat}`;
  if (Array.isArray(lat)) {
    if (lat.length !== 2 || !lat.every((v) => typeof v === 'number')) throw new TypeError(latMsg);
    [lo, hi] = lat;
    if (!(lo >= 0 && lo <= hi && hi < Infinity)) throw new RangeError(latMsg);
  } else lo = hi = /** @type {number} */ (number(o, 'latencyMs', 0, (v) => v >= 0 && v < Infinity, latWhat));
  const headers = o.headers;
  if (headers !== undefined) new Headers(headers); // (a bad one throws Headers' TypeError now, not per call)
  const seed = number(o, 'seed', 1, Number.isSafeInteger, 'a safe integer');
  // Two streams: the fault draw alone in one (the calls that fault follow only seed and rate), the rest in the other.
  const faults = mulberry32(seed);
  const rest = mulberry32(seed ^ 0x5bd1e995);
  /** @type {{ fault?: number | 'reset', latencyMs: number }[]} */
  const injected = [];

  /**
   * @param {RequestInfo | URL} input
   * @param {RequestInit} [init]
   */
  async function chaotic(input, init) {
    const signal = signalOf(input, init);
    const hit = faults() < rate;
    const [kind, pick, span] = [rest(), rest(), rest()];
    const fault = !hit ? undefined : kind < resets ? 'reset' : statuses[Math.floor(pick * statuses.length)];
    const latencyMs = lo + span * (hi - lo);
    injected.push(fault === undefined ? { latencyMs } : { fault, latencyMs });
    signal?.throwIfAborted();
    if (latencyMs > 0) await sleep(latencyMs, signal);
    if (fault === 'reset') throw reset();
    if (fault !== undefined) return new Response(null, { status: fault, headers });
    return fetchFn(input, init);
  }
  return Object.defineProperty(chaotic, 'injected', { value: injected, enumerable: true });
}
