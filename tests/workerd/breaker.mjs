// A Cloudflare Worker (run by miniflare's real workerd) using the gate as a
// circuit breaker and an adaptive limiter, against the scripted server at
// env.ORIGIN (?p= names the path). Each route answers JSON for the test to
// check (tests/gate/breaker.workerd.test.mjs); the breaker's state is carried
// between incoming requests in the KV namespace env.BREAKER, as a Worker
// would carry it between invocations.
import { withBackoff } from '../../pkg/workerd.js';
import { BrokenCircuitError, createGate, createLimiter } from '../../pkg/gate/workerd.js';
import { limiterAlone } from '../gate/breaker-checks.mjs';

/**
 * The breaker whose state /trip saves and /resume takes up (one round: 10 s, no jitter:
 * it must outlast, on a loaded machine, everything between the trip and the
 * next restore that must find it open; the test ends the round by moving the
 * saved times back, not by waiting it out).
 */
const CARRIED = { consecutive: 1, mode: 'fail-fast', baseMs: 10_000, maxDelayMs: 10_000, jitter: 'none' };

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

/** A gate with `options` whose state changes go to `changes` (strings `from>to:reason`, and the keys). */
function watched(options, changes, keys) {
  return createGate({
    ...options,
    onStateChange: (c) => {
      changes.push(`${c.from}>${c.to}:${c.reason}`);
      keys.push(c.key);
    },
  });
}

/** Lets the queued onStateChange calls run. */
const settled = () => new Promise((r) => setTimeout(r, 0));

const routes = {
  // Fail-fast after `consecutive: 2`: two 503s (the first leaves the circuit
  // closed), then calls refused with a BrokenCircuitError, nothing sent.
  async '/failfast'(env, p) {
    const gate = createGate({ consecutive: 2, mode: 'fail-fast', baseMs: 400, maxDelayMs: 400, jitter: 'none' });
    const f = withBackoff(fetch, { gate, maxAttempts: 1 });
    const url = `${env.ORIGIN}${p}`;
    const key = new URL(url).origin;
    const first = await attempt(f, url);
    const afterOne = gate.state(key).state;
    const second = await attempt(f, url);
    const afterTwo = gate.state(key).state;
    const refused = [await attempt(f, url), await attempt(f, url)];
    return { key, first, afterOne, second, afterTwo, refused, stats: gate.stats() };
  },

  // Request 1 of a carried breaker: one 503 trips it; its state goes to KV.
  async '/trip'(env, p) {
    const changes = [];
    const keys = [];
    const gate = watched(CARRIED, changes, keys);
    const f = withBackoff(fetch, { gate, maxAttempts: 1 });
    const res = await attempt(f, `${env.ORIGIN}${p}`);
    await settled();
    const text = JSON.stringify(gate);
    await env.BREAKER.put('gate', text);
    return { res, saved: JSON.parse(text), changes, keys };
  },

  // Later requests: a fresh gate takes up the state in KV, makes one call,
  // and saves its state back.
  async '/resume'(env, p) {
    const changes = [];
    const keys = [];
    const gate = watched(CARRIED, changes, keys);
    const key = env.ORIGIN;
    const before = gate.state(key).state;
    gate.restore(await env.BREAKER.get('gate', 'json'));
    const restored = gate.state(key).state;
    const f = withBackoff(fetch, { gate, maxAttempts: 1 });
    const res = await attempt(f, `${env.ORIGIN}${p}`);
    await settled();
    const after = gate.state(key).state;
    const text = JSON.stringify(gate);
    await env.BREAKER.put('gate', text);
    return { before, restored, res, after, saved: JSON.parse(text), changes, keys };
  },

  // Every change of one outage in hold mode, inside one request: a failure
  // below the threshold retries on its own schedule, the second trips, the
  // round's probe succeeds.
  async '/changes'(env, p) {
    const changes = [];
    const keys = [];
    const gate = watched({ consecutive: 2, baseMs: 150, maxDelayMs: 150, jitter: 'none' }, changes, keys);
    const f = withBackoff(fetch, { gate, baseMs: 1, jitter: 'none' });
    const res = await attempt(f, `${env.ORIGIN}${p}`);
    await settled();
    return { res, changes, keys, stats: gate.stats() };
  },

  // The adaptive limiter: `?warm=N` calls 20 ms apart (the send rate it
  // measures: the throttled rate is a share of it), then one answered 429
  // with a named wait, then a new call (a first attempt). ?limit=none: the
  // same gate without the limiter.
  async '/limited'(env, p, q) {
    const gate = createGate({ limit: q.get('limit') ?? 'adaptive', consecutive: Infinity });
    const f = withBackoff(fetch, { gate, maxAttempts: 1 });
    const url = `${env.ORIGIN}${p}`;
    const warm = [];
    for (let i = Number(q.get('warm') ?? 0); i > 0; i--) {
      warm.push((await attempt(f, url)).status);
      await new Promise((r) => setTimeout(r, 20));
    }
    const throttled = await attempt(f, url);
    const t0 = Date.now();
    const next = await attempt(f, url);
    return { warm, throttled, next, workerMs: Date.now() - t0 };
  },

  // The limiter alone, without sleeping through its waits: a free acquire()
  // settles on microtasks; a throttling answer naming 300 ms; the wait it then
  // asks for, as maxWaitMs reports it; a refused or aborted acquire() gives
  // its token back.
  '/limiter': () => limiterAlone(createLimiter),
};

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const route = routes[url.pathname];
    if (!route) return new Response('no such route', { status: 404 });
    try {
      return Response.json(await route(env, url.searchParams.get('p'), url.searchParams));
    } catch (e) {
      return Response.json({ thrown: String(e?.stack ?? e) }, { status: 500 });
    }
  },
};
