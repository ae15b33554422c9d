// Virtual time for the fetch driver's timing and policy tests
// (tests/fetch/*.virtual.test.mjs), on the js/ sources: the clock of
// `wasm-backoff/testing` installed per test, and the kit's scriptedFetch as
// the global `fetch` (what fetchWithBackoff calls) — the scripted server's
// vocabulary, answered without a network. Nothing here sleeps for real:
// a test asserts the exact waits (`clock.asked`, onRetry's delayMs), the
// virtual time of each request (`at`) and the order of what happened.
// What differs between runtimes (their network failures, aborts reaching
// the network and the body, bodies, CORS, streams) stays on the real
// scripted server in every runtime: fetch-checks.mjs, stream-checks.mjs.
import { drain } from '../../js/testing/clock.js';
import { scriptedFetch, virtualClock } from '../../js/entries/testing.js';

/** The virtual epoch ms every test starts at: a whole second (an HTTP-date names whole seconds). */
export const T0 = Date.UTC(2026, 10, 2, 9, 0, 0);

/** The base of every URL a test asks for (the scripted fetch answers by path). */
export const ORIGIN = 'https://api.test';

/** Whether `delayMs` is a wait for a server's `ms`: at least it, at most 10 % (1 s at most) more (docs/fetch.md, "Server-named waits"). */
export const above = (delayMs, ms) => delayMs >= ms && delayMs <= ms + Math.min(ms / 10, 1000);

/**
 * The world of test `t`: a virtual clock (Date.now() = T0 until time moves)
 * and `server`, a scriptedFetch of `script` installed as the global fetch.
 * When the test ends: no timer of the code may be left pending, and the
 * real globals are back.
 * @param {import('node:test').TestContext} t
 * @param {unknown} [script] the scripted fetch's script (by path: `{ '/a': [503, 200] }`)
 */
export function world(t, script = 404) {
  const clock = virtualClock({ now: T0, performance: false });
  const real = globalThis.fetch;
  const server = scriptedFetch(script);
  globalThis.fetch = server;
  t.after(() => {
    const left = clock.pending();
    globalThis.fetch = real;
    clock.uninstall();
    if (left !== 0) throw new Error(`${left} timer(s) left pending when the test ended`);
  });
  /** The calls made to `path` (all calls without one). */
  const sent = (path) => server.calls.filter((c) => path === undefined || new URL(c.url).pathname === path);
  return {
    clock,
    server,
    /** The URL of `path` on the scripted origin. */
    url: (path) => ORIGIN + path,
    /** Virtual ms since T0, exact. */
    at: () => clock.elapsed(),
    /** Moves time timer by timer until `p` settles, then settles as it does. */
    run: (p, maxMs = 600_000) => clock.run(p, { maxMs, graceMs: 200 }),
    /** Moves time by `ms`. */
    tick: (ms) => clock.tick(ms),
    /** The requests sent to `path`, in order. */
    sent,
    /** How many requests reached `path`. */
    count: (path) => sent(path).length,
    /** The virtual ms since T0 at which each request to `path` was sent. */
    times: (path) => sent(path).map((c) => c.at - T0),
    /** Whether `p` has settled (no virtual time passes). */
    settled: (p) => clock.settled(p),
  };
}

/** Runs `f` with console.error captured; answers what was logged. */
export async function quiet(f) {
  const logged = [];
  const error = console.error;
  console.error = (...args) => logged.push(args);
  try {
    await f();
    await drain(); // (a rejected observer's promise is reported on a later turn)
  } finally {
    console.error = error;
  }
  return logged;
}

/**
 * Collects the process's unhandled rejections while `f` runs (and a few
 * macrotasks after it); answers them.
 */
export async function unhandled(f) {
  const seen = [];
  const on = (r) => seen.push(r);
  process.on('unhandledRejection', on);
  try {
    await f();
    await drain();
    await drain();
  } finally {
    process.off('unhandledRejection', on);
  }
  return seen;
}
