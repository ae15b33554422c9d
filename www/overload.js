// The overload model, shared by the benchmark (bench/overload.mjs, the
// scenario matrix of bench/RESULTS.md §7a) and the demo (overload-worker.js):
// a server of a given capacity (a token bucket; 429 beyond it, with
// `Retry-After: 1` or without) and callers in closed loops sharing one
// adaptive limiter — ours (a gate with `limit: 'adaptive'` behind
// withBackoff) or the AWS SDK's (@smithy/util-retry's AdaptiveRetryStrategy,
// i.e. its DefaultRateLimiter, as its retry middleware runs it).
//
// Real code, virtual time: the package and the SDK run unchanged under
// @sinonjs/fake-timers (`setTimeout`, `clearTimeout` and `Date` faked), which
// the caller passes in (`FakeTimers`: the Node package in the benchmark, its
// bundle www/gen/overload-deps.js in the page). With a `seed`, a run is
// reproducible in every runtime: Math.random (the SDK's jitter) is a seeded
// generator during the run, and each of our calls names its seed.

import { mulberry32 } from './storm.js';

/** Server time per request (ms). */
export const LATENCY_MS = 20;

/** The demo's shape: §7a's step row with `Retry-After: 1` (capacity 200, 100 from 10 s, 200 from 20 s; 20 callers on one limiter). */
export const STEP_ROW = 'step 200→100→200 req/s, shared ×20, RA';
export const stepCap = (t) => (t >= 10 && t < 20 ? 100 : 200);
export const STEP_SPEC = { groups: 1, callers: 20, cap: stepCap, ra: true, step: true, seconds: 30 };
/** The demo's seed (the benchmark's `--seed=1`). */
export const DEFAULT_SEED = 1;

/** The p-th percentile of xs (NaN for none). */
export const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};

/** Runs virtual time for `seconds`, then on until every loop ended (calls still waiting at the end: their clients stop after them). */
export async function runOut(clock, loops, seconds) {
  let done = false;
  const all = Promise.all(loops).then(() => (done = true));
  await clock.tickAsync(seconds * 1000);
  while (!done) await clock.tickAsync(1000);
  await all;
}

/** The server of a row: a token bucket of cap(t) req/s (burst cap/10), 429 beyond. */
export function bucketServer(cap) {
  const t0 = Date.now();
  let tokens = Math.max(1, cap(0) / 10);
  let at = t0;
  const s = { ok: 0, throttled: 0, throttledAt: [] };
  s.handle = () => {
    const now = Date.now();
    const rate = cap((now - t0) / 1000);
    tokens = Math.min(Math.max(1, rate / 10), tokens + ((now - at) / 1000) * rate);
    at = now;
    if (tokens >= 1) {
      tokens -= 1;
      s.ok++;
      return 200;
    }
    s.throttled++;
    s.throttledAt.push(now - t0);
    return 429;
  };
  return s;
}

/** Times each call's wait before its first send (a call's id is its URL's `c`), on clock `now`. */
export function firstSends(now) {
  const started = new Map(); // call id -> start, until its first send
  const w = {
    longest: 0,
    start: (id) => started.set(id, now()),
    end: (id) => started.delete(id),
    sent: (input) => {
      const id = new URL(typeof input === 'string' ? input : input.url).searchParams.get('c');
      const t = started.get(id);
      if (t === undefined) return;
      w.longest = Math.max(w.longest, now() - t);
      started.delete(id);
    },
  };
  return w;
}

/**
 * Runs one row (`spec`: { groups, callers per group, cap(t s), ra, deadline?,
 * latency?, seconds? }) for one client kind in virtual time.
 * `make(fetchFn, hubs, seed)` returns a group's call function
 * `(url, deadline) => Promise<boolean>`; `seed` is the group's (undefined
 * unless the run is seeded). Resolves to the row's figures, with the
 * successes and 429s per second.
 */
export async function overloadRun(spec, make, { FakeTimers, seconds: defaultSeconds = 30, pauseAll = false, seed } = {}) {
  const realRandom = Math.random;
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'Date'], now: 1_700_000_000_000 });
  if (seed !== undefined) Math.random = mulberry32(seed);
  try {
    const srv = bucketServer(spec.cap);
    const t0 = Date.now();
    const seconds = spec.seconds ?? defaultSeconds;
    const end = t0 + seconds * 1000;
    const lat = [];
    const okAt = [];
    let failed = 0;
    const waits = firstSends(Date.now);
    let pausedUntil = 0; // (pauseAll: the old rule, every call waits for a named wait)
    const fetchFn = async (input) => {
      waits.sent(input);
      if (pauseAll && Date.now() < pausedUntil) await new Promise((r) => setTimeout(r, pausedUntil - Date.now()));
      await new Promise((r) => setTimeout(r, spec.latency ?? LATENCY_MS));
      const status = srv.handle();
      if (status === 429 && spec.ra) pausedUntil = Math.max(pausedUntil, Date.now() + 1000);
      return new Response(null, { status, headers: status === 429 && spec.ra ? { 'retry-after': '1' } : {} });
    };
    const hubs = new Map();
    let n = 0;
    const loops = [];
    for (let g = 0; g < spec.groups; g++) {
      const call = make(fetchFn, hubs, seed === undefined ? undefined : seed * 2 ** 20 + g * 2 ** 16);
      for (let c = 0; c < spec.callers; c++) {
        loops.push(
          (async () => {
            while (Date.now() < end) {
              const id = String(n++);
              const t = Date.now();
              waits.start(id);
              const ok = await call(`http://origin/?c=${id}`, spec.deadline);
              waits.end(id);
              if (Date.now() > end) break;
              if (ok) {
                lat.push(Date.now() - t);
                okAt.push(Date.now() - t0);
              } else {
                failed++;
                // (a call refused at once, e.g. a token wait past its deadline: the caller
                // pauses a request time before the next, rather than spin without time passing)
                if (Date.now() === t) await new Promise((r) => setTimeout(r, LATENCY_MS));
              }
            }
          })(),
        );
      }
    }
    await runOut(clock, loops, seconds);
    const perSec = (xs) => Array.from({ length: seconds }, (_, i) => xs.filter((t) => t >= i * 1000 && t < (i + 1) * 1000).length);
    return {
      seconds,
      goodput: lat.length / seconds,
      throttled: srv.throttled,
      failed,
      p50: pct(lat, 50),
      p99: pct(lat, 99),
      longest: waits.longest,
      perSecond: perSec(okAt),
      throttledPerSecond: perSec(srv.throttledAt),
    };
  } finally {
    Math.random = realRandom;
    clock.uninstall();
  }
}

/**
 * A call of ours: a gate with `limit: 'adaptive'` (or the fleet's:
 * `gateOf(hubs, seed)`) behind withBackoff, 3 attempts; seeded, call k of
 * the group names seed + k.
 */
export function oursClient(withBackoff, gateOf) {
  return (f, hubs, seed) => {
    const gate = gateOf(hubs, seed);
    const g = withBackoff(f, { maxAttempts: 3, gate });
    let k = 0;
    return (url, deadline) => {
      const o = { ...(deadline ? { maxElapsedMs: deadline } : {}), ...(seed === undefined ? {} : { seed: seed + k++ }) };
      return g(url, undefined, Object.keys(o).length ? o : undefined).then(
        (r) => r.status === 200,
        () => false,
      );
    };
  };
}

/** Our gate for one limiter: `limit: 'adaptive'` alone (no breaker), seeded with the group's seed if any. */
export const adaptiveGate = (createGate) => (_hubs, seed) =>
  createGate({ limit: 'adaptive', consecutive: Infinity, ...(seed === undefined ? {} : { seed }) });

/** A call through the SDK: its AdaptiveRetryStrategy as its retry middleware runs it, 3 attempts. */
export function sdkClient(AdaptiveRetryStrategy) {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  return (f) => {
    const strategy = new AdaptiveRetryStrategy(async () => 3);
    return async (url, deadline) => {
      const end = deadline ? Date.now() + deadline : Infinity;
      // (the SDK has no deadline: its waits race one, and nothing is sent after it)
      const within = (p) => (end === Infinity ? p : Promise.race([p, sleep(Math.max(0, end - Date.now())).then(() => null)]));
      let token = await within(strategy.acquireInitialRetryToken('origin'));
      for (;;) {
        if (!token || Date.now() >= end) return false;
        const res = await f(url);
        if (res.status === 200) {
          strategy.recordSuccess(token);
          return true;
        }
        const ra = res.headers.get('retry-after');
        try {
          token = await within(
            strategy.refreshRetryTokenForRetry(token, {
              errorType: 'THROTTLING',
              retryAfterHint: ra ? new Date(Date.now() + Number(ra) * 1000) : undefined,
            }),
          );
        } catch {
          return false;
        }
        if (!token) return false;
        await within(sleep(token.getRetryDelay()));
      }
    };
  };
}

/**
 * The demo's two runs of STEP_SPEC, ours then the SDK's, with `seed`.
 * `lib`: { withBackoff, createGate, AdaptiveRetryStrategy, FakeTimers };
 * `each(kind, result)` sees each as it ends.
 */
export async function stepRuns(lib, { seed = DEFAULT_SEED, each = () => {} } = {}) {
  const out = {};
  for (const [kind, make] of [
    ['ours', oursClient(lib.withBackoff, adaptiveGate(lib.createGate))],
    ['sdk', sdkClient(lib.AdaptiveRetryStrategy)],
  ]) {
    out[kind] = await overloadRun(STEP_SPEC, make, { FakeTimers: lib.FakeTimers, seed });
    each(kind, out[kind]);
  }
  return out;
}
