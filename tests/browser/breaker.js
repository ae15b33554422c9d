// The gate as a circuit breaker and adaptive limiter in this page, for
// tests/gate/breaker.chromium.test.mjs, which drives it through window.bt
// against the scripted server (its URL and path are passed to each
// scenario). Each scenario answers JSON. The breaker's state is carried
// between pages (and reloads) of this origin in localStorage.
import { withBackoff } from '/pkg/index.js';
import { BrokenCircuitError, createGate, createLimiter } from '/pkg/gate/index.js';
import { limiterAlone, roundOver } from '/tests/gate/breaker-checks.mjs';

/**
 * The breaker whose state trip() saves and resume() takes up (one round: 10 s, no jitter:
 * it must outlast, on a loaded machine, everything between the trip and the
 * next restore that must find it open; the test ends the round by moving the
 * saved times back, not by waiting it out).
 */
const CARRIED = { consecutive: 1, mode: 'fail-fast', baseMs: 10_000, maxDelayMs: 10_000, jitter: 'none' };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What the test needs of a rejection (JSON has no Infinity: retryAfterMs as a string then). */
const describe = (e) => ({
  name: e?.name,
  broken: e instanceof BrokenCircuitError,
  key: e?.key,
  retryAfterMs: Number.isFinite(e?.retryAfterMs) ? e.retryAfterMs : String(e?.retryAfterMs),
  isolated: e?.isolated,
  message: String(e?.message ?? e),
});

/** Calls `f(url)`: {status, body} or {error}. */
async function attempt(f, url) {
  try {
    const res = await f(url);
    return { status: res.status, body: await res.text() };
  } catch (e) {
    return { error: describe(e) };
  }
}

/** A gate with `options` whose state changes go to `log` (`from>to:reason`, and the keys). */
function watched(options, log = { changes: [], keys: [] }) {
  const gate = createGate({
    ...options,
    onStateChange: (c) => {
      log.changes.push(`${c.from}>${c.to}:${c.reason}`);
      log.keys.push(c.key);
    },
  });
  return Object.assign(gate, { log });
}

/** Lets the queued onStateChange calls run. */
const settled = () => sleep(0);

/** The isolation scenario's gate and held call, between its two steps. */
let iso;

window.bt = {
  // Fail-fast after `consecutive: 2` (the first 503 leaves it closed), the
  // refused calls, then the round's probe. (A 10 s round, ended by moving
  // its times back once the refused calls are made: with a round short
  // enough to wait out, reading the trip's answer on a loaded machine could
  // outlast it, and the first "refused" call would be the probe.)
  async failFast(server, p) {
    const gate = watched({ consecutive: 2, mode: 'fail-fast', baseMs: 10_000, maxDelayMs: 10_000, jitter: 'none' });
    const f = withBackoff(fetch, { gate, maxAttempts: 1 });
    const url = `${server}${p}`;
    const first = await attempt(f, url);
    const afterOne = gate.state(server).state;
    const second = await attempt(f, url);
    const afterTwo = gate.state(server).state;
    const refused = [await attempt(f, url), await attempt(f, url)];
    gate.restore(roundOver(gate.toJSON(), server));
    const over = gate.state(server).state;
    const probe = await attempt(f, url);
    await settled();
    return { first, afterOne, second, afterTwo, refused, roundOver: over, probe, after: gate.state(server).state, ...gate.log };
  },

  // Isolation by hand, step 1: a hold-mode gate isolates the server's
  // origin; a call is held (left pending); a fail-fast gate refuses one.
  async isolate(server, p) {
    const gate = watched({});
    gate.isolate(server);
    const f = withBackoff(fetch, { gate });
    const held = attempt(f, `${server}${p}`);
    const ff = createGate({ mode: 'fail-fast' });
    ff.isolate(server);
    const refused = await attempt(withBackoff(fetch, { gate: ff }), `${server}${p}`);
    iso = { gate, held, ff };
    await sleep(50);
    return { state: gate.state(server), refused };
  },

  // Step 2: release both; the held call goes out; the fail-fast gate passes again.
  async release(server, p) {
    const { gate, held, ff } = iso;
    const before = gate.state(server);
    gate.release(server);
    const res = await held;
    ff.release(server);
    const passed = await attempt(withBackoff(fetch, { gate: ff }), `${server}${p}`);
    await settled();
    return { before, res, passed, after: gate.state(server), ...gate.log };
  },

  // A carried breaker, in the first page: one 503 trips it; its state goes to localStorage.
  async trip(server, p) {
    const gate = watched(CARRIED);
    const sentAt = Date.now();
    const res = await attempt(withBackoff(fetch, { gate, maxAttempts: 1 }), `${server}${p}`);
    await settled();
    const text = JSON.stringify(gate);
    localStorage.setItem('breaker', text);
    return { res, sentAt, saved: JSON.parse(text), ...gate.log };
  },

  // In a later page: a fresh gate takes up the state in localStorage, makes
  // one call, and saves its state back.
  async resume(server, p) {
    const gate = watched(CARRIED);
    const before = gate.state(server).state;
    gate.restore(JSON.parse(localStorage.getItem('breaker')));
    const restored = gate.state(server).state;
    const res = await attempt(withBackoff(fetch, { gate, maxAttempts: 1 }), `${server}${p}`);
    await settled();
    const text = JSON.stringify(gate);
    localStorage.setItem('breaker', text);
    return { before, restored, res, after: gate.state(server).state, saved: JSON.parse(text), ...gate.log };
  },

  // The adaptive limiter: `warm` calls 20 ms apart (the send rate it
  // measures), one answered 429 with a named wait, then a new call (a
  // first attempt). limit 'none': the same gate without the limiter.
  async limited(server, p, warm, limit) {
    const gate = createGate({ limit, consecutive: Infinity });
    const f = withBackoff(fetch, { gate, maxAttempts: 1 });
    const url = `${server}${p}`;
    const statuses = [];
    for (let i = 0; i < warm; i++) {
      statuses.push((await attempt(f, url)).status);
      await sleep(20);
    }
    const throttled = await attempt(f, url);
    const t0 = performance.now();
    const next = await attempt(f, url);
    return { warm: statuses, throttled, next, pageMs: performance.now() - t0 };
  },

  // The limiter alone, without sleeping through its waits: a free acquire()
  // settles on microtasks; a throttling answer naming 300 ms; the wait then
  // asked for, as maxWaitMs reports it; a refused or aborted acquire() gives
  // its token back.
  limiter: () => limiterAlone(createLimiter),
};

document.getElementById('status').textContent = 'ready';
document.body.dataset.ready = '1';
