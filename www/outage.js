// The outage model, shared by the demo (in outage-worker.js) and the
// benchmark (bench/outage.mjs, which writes bench/OUTAGE.md): how hard do
// retrying clients hit an origin that is down, and how fast do they drain
// once it is back?
//
// Real code, virtual time: the shipped package (the wasm calculator and
// gate, the JavaScript fetch driver) runs unchanged; only `setTimeout`,
// `clearTimeout` and `Date.now` are replaced by a virtual clock during a run
// (errors carry no stack trace meanwhile), and `fetch` by a fake origin that
// answers after a fixed round trip. Each timer fires at its exact virtual
// time, with every promise reaction run before the next one (`settle`: a
// macrotask), so a simulated minute takes a fraction of a second and results
// do not depend on the machine.
//
// The model: C clients each have K calls in flight to the origin when it
// goes down at t = 0 (those first tries were sent before the outage; they
// are counted apart). The origin answers 503 to every request that reaches
// it before t = T and 200 after; a round trip is RTT ms (the request reaches
// the origin halfway). Measured per policy: requests sent during the outage
// (retries, or the gate's probes), everything the origin received before T
// (first tries included), requests arriving per BIN_MS at the origin, and
// the drain: the time from T until the last call has succeeded (and the
// median call's). A call that ends otherwise (a policy that gives up or
// fails fast) is counted in `failed`.
import { Heap } from './storm.js';

export const RTT_MS = 50;
export const BIN_MS = 100;
/** The benchmark's first point, the demo's default view. */
export const DEFAULT_POINT = { C: 100, K: 20, T: 10_000 };
export const DEFAULT_RUNS = 10;

/** Call k's options: its seed (seed + k), or none for fresh random seeds. */
const callSeed = (seed, k) => (seed === undefined ? undefined : { seed: seed + k });

/** A client whose calls go through one gate with `options` (over the schedule): `withBackoff(origin, { gate })`. */
const gated =
  (options) =>
  ({ withBackoff, createGate }, origin, schedule, seed) => {
    const gate = createGate({ ...schedule, maxQueued: Infinity, seed, ...options });
    const f = withBackoff(origin, { ...schedule, maxAttempts: Infinity, gate });
    return (url, k) => f(url, undefined, callSeed(seed, k));
  };

/**
 * The policies compared, one row each in the demo's outage view and in
 * bench/OUTAGE.md, in this order (the first is the baseline of the ratios).
 * A row: `id`; `name` (as shown); `modules`, the package subpaths it imports
 * ('' = the main entry, 'gate' = wasm-backoff/gate); and `client(lib,
 * origin, schedule, seed, counts)` making one client: it gets the modules'
 * exports merged (`lib`), the fake origin (a fetch function), the schedule's
 * timing options (the package default, or a policy of the demo), the client's
 * seed (undefined: fresh random seeds) and the run's counts (to add to
 * `failedFast`), and returns `(url, k) => Promise<Response>`
 * sending the client's k-th call.
 */
export const OUTAGE_POLICIES = [
  {
    id: 'per-request',
    name: 'per-request backoff',
    modules: [''],
    client: ({ withBackoff }, origin, schedule, seed) => {
      const f = withBackoff(origin, { ...schedule, maxAttempts: Infinity });
      return (url, k) => f(url, undefined, callSeed(seed, k));
    },
  },
  { id: 'gate-1', name: 'gate, trips at the 1st failure', modules: ['', 'gate'], client: gated({ consecutive: 1 }) },
  { id: 'gate', name: 'gate (default: trips after 5)', modules: ['', 'gate'], client: gated({}) },
  {
    // A breaker in fail-fast mode: a call that finds the circuit open ends at
    // once (its last 503, or a BrokenCircuitError); the caller, like a UI's
    // "try again", calls again when the error says the next probe is due (at
    // least one round trip later). Each such ending counts as failed fast.
    id: 'fail-fast',
    name: "breaker, mode: 'fail-fast'",
    modules: ['', 'gate'],
    client: (lib, origin, schedule, seed, counts) => {
      const send = gated({ mode: 'fail-fast' })(lib, origin, schedule, seed);
      const later = (ms) => new Promise((r) => setTimeout(r, Math.max(ms, RTT_MS)));
      return async (url, k) => {
        for (;;) {
          try {
            const res = await send(url, k);
            if (res.status === 200) return res;
            counts.failedFast++;
          } catch (e) {
            if (!(e instanceof lib.BrokenCircuitError)) throw e;
            counts.failedFast++;
            await later(e.retryAfterMs);
          }
        }
      };
    },
  },
];

/** The exports of every module the rows need, merged; `load(subpath)` imports one ('' = the main entry). */
export async function loadLib(load, policies = OUTAGE_POLICIES) {
  const subpaths = [...new Set(policies.flatMap((p) => p.modules))];
  return Object.assign({}, ...(await Promise.all(subpaths.map(load))));
}

/** A macrotask: every pending promise reaction has run when it resolves (setImmediate where there is one). */
export function macrotask() {
  if (typeof globalThis.setImmediate === 'function') {
    const setImmediate = globalThis.setImmediate;
    return () => new Promise((r) => setImmediate(r));
  }
  const ch = new MessageChannel();
  const waiting = [];
  ch.port1.onmessage = () => waiting.shift()();
  return () => new Promise((r) => (waiting.push(r), ch.port2.postMessage(0)));
}

/** The seed of run `r` (0-based), client `i`; its call k adds k. */
const seedOf = (r, i) => (r + 1) * 2 ** 32 + i * 2 ** 16;

/**
 * One run of `policy` at the point {C, K, T} with the virtual clock.
 * `seeded`: run r's seeds (reproducible, the same in every runtime), or
 * fresh random ones when false. Resolves to the counts and the requests per
 * bin (index 0 = [0, BIN_MS) after the outage began). `down(url, at)`:
 * whether a request to `url` arriving at `at` finds its origin down
 * (default: before T; bench/failover.mjs has two hosts).
 */
export async function outageRun(
  { C, K, T },
  policy,
  lib,
  {
    run = 0,
    seeded = true,
    schedule = {},
    settle = macrotask(),
    down = (/** @type {string} */ _url, /** @type {number} */ at) => at < T,
  } = {},
) {
  const real = { setTimeout: globalThis.setTimeout, clearTimeout: globalThis.clearTimeout, now: Date.now };
  // (no stack traces while it runs: no result reads one, and capturing one for each of a fail-fast
  // run's ~33,000 BrokenCircuitErrors was a third of its time, in Node and in Chromium)
  const traces = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  let now = 0;
  let seq = 0;
  const heap = new Heap(); // of [at, seq, fn]: earliest first, FIFO among equal times
  const cancelled = new Set();
  globalThis.setTimeout = (fn, ms = 0, ...args) => {
    const id = ++seq;
    heap.push([now + Math.max(0, Number(ms) || 0), id, () => fn(...args)]);
    return id;
  };
  globalThis.clearTimeout = (id) => id !== undefined && cancelled.add(id);
  Date.now = () => now;
  try {
    const c = { sentDuring: 0, receivedDown: 0, sent: 0, failed: 0, failedFast: 0 };
    const bins = [];
    const firsts = new Set();
    const origin = (input) => {
      // The first try of each call was sent before the outage.
      if (!firsts.has(input)) firsts.add(input);
      else if (now < T) c.sentDuring++;
      c.sent++;
      const arrives = now + RTT_MS / 2;
      const b = Math.floor(arrives / BIN_MS);
      bins[b] = (bins[b] ?? 0) + 1;
      const no = down(String(input), arrives);
      if (no) c.receivedDown++;
      return new Promise((resolve) => setTimeout(() => resolve(new Response(null, { status: no ? 503 : 200 })), RTT_MS));
    };
    const finished = [];
    let pending = C * K;
    const done = (ok) => (ok ? finished.push(now) : c.failed++, pending--);
    for (let i = 0; i < C; i++) {
      const send = policy.client(lib, origin, schedule, seeded ? seedOf(run, i) : undefined, c);
      for (let k = 0; k < K; k++) {
        send(`http://origin.test/item?c=${i}&k=${k}`, k).then(
          (res) => done(res.status === 200),
          () => done(false),
        );
      }
    }
    // Timers in time order, every promise reaction run between two, until every call has ended.
    await settle();
    while (pending > 0) {
      if (!heap.size) throw new Error(`outage simulation stalled: ${pending} calls neither ended nor scheduled`);
      const [at, id, fn] = heap.pop();
      if (cancelled.delete(id)) continue;
      now = at;
      fn();
      await settle();
    }
    finished.sort((a, b) => a - b);
    return {
      ...c,
      drain: finished.length ? finished.at(-1) - T : NaN,
      median: finished.length ? finished[finished.length >> 1] - T : NaN,
      bins: Array.from(bins, (v) => v ?? 0),
    };
  } finally {
    globalThis.setTimeout = real.setTimeout;
    globalThis.clearTimeout = real.clearTimeout;
    Date.now = real.now;
    Error.stackTraceLimit = traces;
  }
}

export const COUNTS = ['sentDuring', 'receivedDown', 'drain', 'median', 'sent', 'failed', 'failedFast'];

/** The means of runs (outageRun's results): the counts, and the requests per bin. */
export function meanOf(all) {
  const out = Object.fromEntries(COUNTS.map((k) => [k, all.reduce((s, x) => s + x[k], 0) / all.length]));
  const n = Math.max(...all.map((x) => x.bins.length));
  out.bins = Array.from({ length: n }, (_, b) => all.reduce((s, x) => s + (x.bins[b] ?? 0), 0) / all.length);
  return out;
}

/** The means of `runs` runs (run 0, 1, …) of `policy` at `point`. */
export async function outageMeans(point, policy, lib, { runs = DEFAULT_RUNS, ...opts } = {}) {
  const all = [];
  for (let run = 0; run < runs; run++) all.push(await outageRun(point, policy, lib, { ...opts, run }));
  return meanOf(all);
}
