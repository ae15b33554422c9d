// The reconnect-storm model, shared by the demo's "Reconnect storm" view (in
// reconnect-worker.js) and the benchmark (bench/reconnect.mjs, which writes
// bench/RECONNECT.md): N clients hold a long-lived connection (an event
// stream) to one server, which restarts at t = 0, dropping every
// connection at once. The restarted server accepts at most C new
// connections in each second; past that, a connection is refused (503 after
// a round trip of RTT_MS). Each client waits by its policy after the drop
// and after each refusal. Measured: connection attempts reaching the server
// per second (the reconnect rate), its peak over whole seconds, and the
// time until every client is connected again, against the ideal: N / C,
// the server taking C a second from t = 0.
//
// The policies, as each documents its defaults (the server's `retry:` is R):
// - ours (wasm-backoff/sse, default options): each wait the calculator's
//   draw, exponential with full jitter on R as its base, capped at
//   max(30 s, R): U[0, R), then U[0, 2R)…, a fresh seed per client. These
//   are the waits of the real EventSource (tests/sse/sse.virtual.test.mjs
//   checks them draw by draw).
// - the native EventSource: R after every failure, the same for everyone (a
//   browser's would give up at the first 503, and stay disconnected; here
//   it is kept retrying, its best case).
// - reconnecting-eventsource 1.6.5 (defaults: max_retry_time 3000): it
//   wraps the native one, which reconnects after R when the connection
//   drops; when the native one gives up (the 503), it makes a new one after
//   round(3000 · Math.random()) ms, every time.
// - partysocket 1.3.0 (a reconnecting WebSocket; defaults:
//   minReconnectionDelay 3000, reconnectionDelayGrowFactor 1.3,
//   maxReconnectionDelay 10000): 3 s · 1.3^(k − 1) before try k, capped at
//   10 s, no jitter, R unknown to it.
import { Heap, mulberry32 } from './storm.js';

export const RTT_MS = 50;
/** The benchmark's scenario and the demo's default view: the server names a retry: of N / C + 10 %. */
export const DEFAULT_POINT = { N: 10_000, C: 1000, R: 11_000 };
/** Bins of the rate curve, ms (the peak is over whole seconds). */
export const BIN_MS = 250;

/**
 * The policies, one row each (the first is ours). `waits(Backoff, R, seed)`
 * makes one client's: a function giving the wait before each try, the
 * drop's first.
 */
export const RECONNECT_POLICIES = [
  {
    id: 'ours',
    name: 'wasm-backoff/sse (defaults)',
    waits: (Backoff, R, seed) => {
      const b = new Backoff({ baseMs: R, maxDelayMs: Math.max(30_000, R), seed });
      return Object.assign(() => b.next(), { free: () => b.free() });
    },
  },
  { id: 'native', name: 'native EventSource (fixed retry:)', waits: (_, R) => () => R },
  {
    id: 'reconnecting-eventsource',
    name: 'reconnecting-eventsource 1.6.5',
    waits: (_, R, seed) => {
      const random = mulberry32(seed);
      let first = true;
      return () => (first ? ((first = false), R) : Math.round(3000 * random()));
    },
  },
  {
    id: 'partysocket',
    name: 'partysocket 1.3.0',
    waits: () => {
      let k = 0;
      return () => Math.min(10_000, 3000 * 1.3 ** k++);
    },
  },
];

/**
 * One run of `policy` at {N, C, R} (run `run`: the seeds). Resolves the
 * counts: attempts per bin and per second, accepted per second, the peak
 * rate (attempts in a second), the time until all are back, the attempts.
 * @param {{ N: number, C: number, R: number }} point
 * @param {(typeof RECONNECT_POLICIES)[number]} policy
 * @param {any} Backoff the package's calculator
 */
export function reconnectRun({ N, C, R }, policy, Backoff, { run = 0, maxMs = 1_800_000 } = {}) {
  const heap = new Heap();
  const next = [];
  for (let i = 0; i < N; i++) {
    next.push(policy.waits(Backoff, R, (run + 1) * 100_000 + i));
    heap.push([next[i](), i]);
  }
  const bins = [];
  const perSecond = [];
  const accepted = [];
  let left = N;
  let attempts = 0;
  let backMs = 0;
  while (left > 0 && heap.items.length) {
    const [t, i] = heap.pop();
    if (t > maxMs) break;
    attempts++;
    const b = Math.floor(t / BIN_MS);
    const s = Math.floor(t / 1000);
    bins[b] = (bins[b] ?? 0) + 1;
    perSecond[s] = (perSecond[s] ?? 0) + 1;
    if ((accepted[s] ?? 0) < C) {
      accepted[s] = (accepted[s] ?? 0) + 1;
      backMs = t;
      left--;
    } else heap.push([t + RTT_MS + next[i](), i]);
  }
  for (const f of next) f.free?.();
  const dense = (a) => Array.from(a, (v) => v ?? 0);
  return {
    bins: dense(bins),
    perSecond: dense(perSecond),
    accepted: dense(accepted),
    peak: Math.max(0, ...dense(perSecond)),
    backMs: left ? Infinity : backMs,
    left,
    attempts,
    idealMs: (N / C) * 1000,
  };
}

/** The mean of runs' figures (peak, time back, attempts) and the first run's curves. @param {ReturnType<typeof reconnectRun>[]} runs */
export function meanOf(runs) {
  const mean = (k) => runs.reduce((s, r) => s + r[k], 0) / runs.length;
  return {
    ...runs[0],
    peak: mean('peak'),
    backMs: mean('backMs'),
    attempts: mean('attempts'),
    worstBackMs: Math.max(...runs.map((r) => r.backMs)),
  };
}
