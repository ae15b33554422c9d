// @ts-check
// chaos: faults injected around any fetch, as Polly's Simmy strategies do
// (outcome, fault and latency injection): with probability `rate` a call is
// answered by a fault (a status, or a reset) without reaching the fetch
// wrapped, and every call may wait `latencyMs` first (on the global timers:
// virtual while a clock is installed). Seeded: the same seed faults the same
// calls in every runtime; the calls that fault depend only on `seed` and
// `rate` (one draw each, as the scripted server's `failRate`).
import { must, readAll, required, spec, num, fn, own } from '../options.js';
import { isStatus, reset, signalOf, sleep } from './faults.js';
import { mulberry32 } from './random.js';

/** A share: a number in [0, 1]. @param {number} v */
const share = (v) => v >= 0 && v <= 1;
/** @param {unknown} v */
const isNum = (v) => typeof v === 'number';

/** chaos()'s options (ChaosOptions), in the order they are checked. */
export const CHAOS_OPTIONS = {
  rate: required(num('a number in [0, 1]', share)),
  status: num('an integer HTTP status in [200, 599]', isStatus, 503),
  statuses: spec(
    Array.isArray,
    'a non-empty array of integer HTTP statuses in [200, 599]',
    (v) => v.length > 0 && v.every(isStatus),
    undefined,
    (v) => [...v],
  ),
  // (true: every fault a reset, false: none)
  reset: spec(
    (v) => typeof v === 'boolean' || isNum(v),
    'a boolean or a number in [0, 1]',
    (v) => typeof v === 'boolean' || share(v),
    /** @type {boolean | number} */ (false),
  ),
  // (kept as the range [lo, hi])
  latencyMs: spec(
    (v) => isNum(v) || (Array.isArray(v) && v.length === 2 && v.every(isNum)),
    'a finite number >= 0 or a range [min, max] of them',
    (v) => (Array.isArray(v) ? v[0] >= 0 && v[0] <= v[1] && v[1] < Infinity : v >= 0 && v < Infinity),
    [0, 0],
    (v) => (Array.isArray(v) ? [v[0], v[1]] : [v, v]),
  ),
  // (a bad one throws Headers' TypeError now, not per call)
  headers: spec(
    () => true,
    'a HeadersInit',
    undefined,
    undefined,
    (v) => (new Headers(v), v),
  ),
  seed: num('a safe integer', Number.isSafeInteger, 1),
};

/**
 * `fetchFn` with faults injected (see types/testing/index.d.ts).
 * @param {typeof fetch} fetchFn
 * @param {{ rate: number, status?: number, statuses?: readonly number[], reset?: boolean | number, latencyMs?: number | readonly [number, number], headers?: HeadersInit, seed?: number }} options
 */
export function chaos(fetchFn, options) {
  must(fetchFn, 'fetch', required(fn()));
  const c = readAll(own(options), CHAOS_OPTIONS);
  const { rate, headers, seed } = c;
  const statuses = c.statuses ?? [c.status];
  const resets = Number(c.reset);
  const [lo, hi] = c.latencyMs;
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
