// wasm-backoff/auth in Node. Its invariants, attacked on virtual time (the
// js/ sources, the kit's clock as tests/engine/clock.mjs installs it, and a
// fake API that answers 401 to any token but the current one):
//   - a refresh never runs twice at once, and 50 calls meeting a 401 share one;
//   - no call waits forever on a refresh (it fails, it hangs past timeoutMs,
//     its caller aborts, its deadline passes), and a failed refresh rejects
//     the calls waiting on it with an error that carries its own;
//   - a second 401 of a call is returned as it is (no loop);
//   - the refresh is no retry (no onRetry, no budget, the same attempt);
//   - a token never reaches another origin (failover's rule, and stricter
//     for a header failover does not know).
// Then the runtime smokes of auth-checks.mjs against the real scripted
// server (Node's fetch), as Chromium runs them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { withBackoff } from '../../js/fetch/index.js';
import { auth, AuthRefreshError } from '../../js/auth/index.js';
import { hedge } from '../../js/fetch/hedge.js';
import { failover } from '../../js/fetch/failover.js';
import { RetryBudget } from '../../js/budget.js';
import * as pkg from 'wasm-backoff';
import * as pkgAuth from 'wasm-backoff/auth';
import { install } from '../engine/clock.mjs';
import { startScripted } from '../server/scripted.mjs';
import { control } from '../fetch/fetch-checks.mjs';
import { SMOKES, authSmokes } from './auth-checks.mjs';

const A = 'https://a.test';
const B = 'https://b.test';

/** The virtual clock for test `t` (uninstalled when it ends, however it ends). */
function virtual(t) {
  const clock = install();
  t.after(() => clock.off());
  return clock;
}

/**
 * A token store and an API that accepts only its current token (`valid`:
 * the client's `t0` has expired, the first refresh gives `t1`): each
 * request answers after `latencyMs` (virtual), 200 for `Bearer <valid>`,
 * else 401 (or what `answer` says). `sent`: every request (origin, its
 * authorization, virtual ms, attempt header). `refresh` takes `refreshMs`
 * and makes a new token; `active`/`most` count refreshes running at once.
 */
function world(clock, { latencyMs = 10, refreshMs = 50, answer } = {}) {
  const w = {
    token: 't0',
    valid: 't1',
    n: 0,
    active: 0,
    most: 0,
    refreshes: 0,
    sent: [],
    fail: undefined,
    hang: false,
  };
  w.fetch = (input, init) => {
    const req = new Request(input, { ...init, signal: null });
    const u = new URL(req.url);
    const h = req.headers;
    const rec = { to: u.origin, auth: h.get('authorization'), key: h.get('x-api-key'), at: clock.now(), attempt: h.get('x-attempt') };
    w.sent.push(rec);
    return new Promise((resolve, reject) => {
      const signal = init?.signal;
      const onAbort = () => (clearTimeout(t), reject(signal?.reason));
      const t = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        const status = answer ? answer(rec, w) : rec.auth === `Bearer ${w.valid}` ? 200 : 401;
        resolve(new Response(status === 200 ? 'ok' : 'no', { status }));
      }, latencyMs);
      signal?.addEventListener('abort', onAbort);
    });
  };
  w.refresh = async () => {
    w.refreshes++;
    w.most = Math.max(w.most, ++w.active);
    try {
      if (w.hang) await new Promise(() => {});
      await new Promise((r) => setTimeout(r, refreshMs));
      if (w.fail) throw w.fail;
      w.token = `t${++w.n}`;
      w.valid = w.token;
    } finally {
      w.active--;
    }
  };
  w.header = () => `Bearer ${w.token}`;
  return w;
}

// ---- single flight

test('50 concurrent calls meeting a 401: one refresh, then each sent once more with the new token', async (t) => {
  const clock = virtual(t);
  const w = world(clock);
  const a = auth({ header: w.header, refresh: w.refresh });
  const dones = [];
  const api = withBackoff(w.fetch, {
    auth: a,
    attemptHeader: 'x-attempt',
    onDone: (d) => dones.push(d),
    onRetry: () => assert.fail('no retry'),
  });
  const res = await clock.run(Promise.all(Array.from({ length: 50 }, (_, i) => api(`${A}/items/${i}`))));
  assert.deepEqual(
    res.map((r) => r.status),
    Array(50).fill(200),
  );
  assert.equal(w.refreshes, 1, 'one refresh for the 50');
  assert.equal(a.refreshes, 1);
  assert.equal(w.most, 1);
  assert.equal(w.sent.length, 100, 'each call: its request and one more');
  assert.deepEqual(new Set(w.sent.slice(0, 50).map((s) => s.auth)), new Set(['Bearer t0']));
  assert.deepEqual(new Set(w.sent.slice(50).map((s) => s.auth)), new Set(['Bearer t1']));
  // (the 401s at 10 ms, the refresh 50 ms, the second requests at 60 answered at 70)
  assert.deepEqual(new Set(w.sent.slice(50).map((s) => s.at)), new Set([60]));
  assert.equal(clock.now(), 70);
  assert.deepEqual(new Set(w.sent.map((s) => s.attempt)), new Set(['attempt=1; max=5']), 'one attempt each: the refresh is not a retry');
  assert.ok(dones.every((d) => d.attempts === 1 && d.reason === 'success' && d.refreshed === true));
  assert.equal(clock.timers(), 0);
});

test('a 401 for a token read before a refresh that has since ended: sent again with no second refresh', async (t) => {
  const clock = virtual(t);
  // The first call's 401 comes at 10; the second's request (sent at 0) is slow: its 401 comes at 200, after the refresh (10..60).
  const w = world(clock);
  const slow = { ...w };
  let k = 0;
  const f = (input, init) => (k++ === 1 ? new Promise((r) => setTimeout(r, 190)).then(() => w.fetch(input, init)) : w.fetch(input, init));
  const a = auth({ header: w.header, refresh: w.refresh });
  const api = withBackoff(f, { auth: a });
  assert.ok(slow);
  const res = await clock.run(Promise.all([api(`${A}/one`), api(`${A}/two`)]));
  assert.deepEqual(
    res.map((r) => r.status),
    [200, 200],
  );
  assert.equal(w.refreshes, 1);
  assert.deepEqual(
    w.sent.map((s) => `${s.auth}@${s.at}`),
    ['Bearer t0@0', 'Bearer t1@60', 'Bearer t0@190', 'Bearer t1@200'],
  );
});

test('a refresh never runs twice at once: 200 calls at random times and latencies, refreshes that take 0–80 ms', async (t) => {
  const clock = virtual(t);
  let seed = 42;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const w = world(clock, { latencyMs: 0 });
  // (the API rotates its token every 300 ms on its own: 401s keep coming)
  const f = (input, init) =>
    new Promise((r) => setTimeout(r, rnd() * 40)).then(() => {
      if (clock.now() % 300 < 20) w.valid = `${w.valid}'`;
      return w.fetch(input, init);
    });
  const refresh = async () => {
    w.most = Math.max(w.most, ++w.active);
    w.refreshes++;
    await new Promise((r) => setTimeout(r, rnd() * 80));
    w.token = w.valid = `r${w.refreshes}`;
    w.active--;
  };
  const a = auth({ header: w.header, refresh });
  const api = withBackoff(f, { auth: a });
  const calls = [];
  for (let i = 0; i < 200; i++) {
    calls.push(api(`${A}/r/${i}`));
    await clock.tick(rnd() * 20);
  }
  await clock.run(Promise.all(calls));
  assert.equal(w.most, 1, 'never two refreshes at once');
  assert.ok(w.refreshes >= 2, `${w.refreshes} refreshes`);
  assert.equal(a.refreshes, w.refreshes);
});

// ---- a second 401, the refresh is no retry

test('a second 401 for the same call is returned as it is: one refresh, two requests, no loop', async (t) => {
  const clock = virtual(t);
  const w = world(clock, { answer: () => 401 });
  let done;
  const a = auth({ header: w.header, refresh: w.refresh });
  const api = withBackoff(w.fetch, { auth: a, onDone: (d) => (done = d), retryOn: [401, 503] });
  const res = await clock.run(api(`${A}/never`, undefined, { shouldRetry: () => undefined }));
  assert.equal(res.status, 401);
  assert.equal(w.refreshes, 1);
  // (401 listed in retryOn: the loop retries it, but no attempt starts another refresh)
  assert.equal(done.attempts, 5);
  assert.equal(w.sent.length, 6, 'five attempts, and the first sent once more after the refresh');
  assert.equal(done.refreshed, true);
});

test('the refresh takes no budget, no attempt, and no onRetry: maxAttempts 1 and an empty budget still send once more', async (t) => {
  const clock = virtual(t);
  const w = world(clock);
  const budget = new RetryBudget({ ratio: 0, minPerSecond: 0 });
  const retries = [];
  let done;
  const api = withBackoff(w.fetch, {
    auth: auth({ header: w.header, refresh: w.refresh }),
    maxAttempts: 1,
    budget,
    onRetry: (i) => retries.push(i),
    onDone: (d) => (done = d),
  });
  const res = await clock.run(api(`${A}/x`));
  assert.equal(res.status, 200);
  assert.deepEqual(retries, []);
  assert.deepEqual([done.attempts, done.reason, done.refreshed], [1, 'success', true]);
});

test('a 403 starts no refresh unless listed in `on`; a request whose body cannot be sent again is not sent again', async (t) => {
  const clock = virtual(t);
  const w = world(clock, { answer: (r, ww) => (r.auth === `Bearer ${ww.valid}` ? 200 : 403) });
  const plain = withBackoff(w.fetch, { auth: auth({ header: w.header, refresh: w.refresh }) });
  assert.equal((await clock.run(plain(`${A}/f`))).status, 403);
  assert.equal(w.refreshes, 0);
  const listed = withBackoff(w.fetch, { auth: auth({ header: w.header, refresh: w.refresh, on: [401, 403] }) });
  assert.equal((await clock.run(listed(`${A}/f`))).status, 200);
  assert.equal(w.refreshes, 1);
  const w2 = world(clock);
  const api = withBackoff(w2.fetch, { auth: auth({ header: w2.header, refresh: w2.refresh }) });
  const body = new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array([1])), c.close()) });
  const res = await clock.run(api(`${A}/up`, { method: 'PUT', body, duplex: 'half' }));
  assert.equal(res.status, 401, 'a one-shot body: its 401 is returned');
  assert.equal(w2.refreshes, 0);
});

// ---- no call waits forever

test('a refresh that rejects rejects every call waiting on it with an AuthRefreshError carrying it; the next 401 starts a new one', async (t) => {
  const clock = virtual(t);
  const w = world(clock);
  w.fail = new Error('invalid_grant');
  const a = auth({ header: w.header, refresh: w.refresh });
  let done;
  const api = withBackoff(w.fetch, { auth: a, onDone: (d) => (done = d) });
  const errors = await clock.run(Promise.all(Array.from({ length: 5 }, (_, i) => api(`${A}/${i}`).catch((e) => e))));
  assert.equal(w.refreshes, 1);
  for (const e of errors) {
    assert.ok(e instanceof AuthRefreshError);
    assert.equal(e.name, 'AuthRefreshError');
    assert.equal(e.cause, w.fail);
    assert.match(e.message, /refresh\(\) failed: invalid_grant/);
  }
  assert.equal(errors[0], errors[4], 'one error for the calls of one refresh');
  assert.equal(done.reason, 'hook-error');
  w.fail = undefined;
  assert.equal((await clock.run(api(`${A}/again`))).status, 200);
  assert.equal(w.refreshes, 2);
  assert.equal(clock.timers(), 0);
});

test('a refresh that never settles: its waiting calls reject at timeoutMs (TimeoutError cause), and the next 401 starts another', async (t) => {
  const clock = virtual(t);
  const w = world(clock);
  w.hang = true;
  let signal;
  const a = auth({ header: w.header, refresh: ({ signal: s }) => ((signal = s), w.refresh()), timeoutMs: 1000 });
  const api = withBackoff(w.fetch, { auth: a });
  const e = await clock.run(api(`${A}/h`).catch((x) => x));
  assert.ok(e instanceof AuthRefreshError);
  assert.equal(e.cause.name, 'TimeoutError');
  assert.equal(clock.now(), 1010, 'the 401 at 10, then timeoutMs');
  assert.equal(signal.aborted, true, "the refresh's signal aborted at its timeout");
  w.hang = false;
  assert.equal((await clock.run(api(`${A}/h2`))).status, 200);
  assert.equal(a.refreshes, 2);
});

test("a caller's abort ends its wait at once, never the refresh the others wait on; its deadline too", async (t) => {
  const clock = virtual(t);
  const w = world(clock, { refreshMs: 500 });
  const a = auth({ header: w.header, refresh: w.refresh });
  const api = withBackoff(w.fetch, { auth: a });
  const ac = new AbortController();
  const gone = api(`${A}/gone`, { signal: ac.signal });
  const late = api(`${A}/late`, undefined, { maxElapsedMs: 200 });
  const stays = api(`${A}/stays`);
  await clock.tick(100);
  assert.equal(w.active, 1, 'the refresh runs');
  ac.abort(new Error('left'));
  assert.equal((await gone.catch((e) => e)).message, 'left');
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0, 'no listener left on the caller’s signal');
  const timedOut = await clock.run(late.catch((e) => e));
  assert.equal(timedOut.name, 'TimeoutError');
  assert.equal(clock.now(), 200);
  assert.equal((await clock.run(stays)).status, 200, 'the refresh went on for the one still waiting');
  assert.equal(w.refreshes, 1);
});

// ---- credentials stay with their origin

test('a token never reaches another origin: failover drops Authorization there unless credentials: true; another name is dropped always', async (t) => {
  const clock = virtual(t);
  const w = world(clock, { answer: (r) => (r.to === A ? 503 : r.auth || r.key ? 200 : 401) });
  const run = async (options, eps) => {
    w.sent.length = 0;
    const api = withBackoff(w.fetch, { baseMs: 1, jitter: 'none', endpoints: failover(eps), ...options });
    const res = await clock.run(api(`${A}/data`));
    return [res.status, w.sent.map((s) => `${s.to === A ? 'a' : 'b'}:${s.auth ?? s.key ?? '-'}`)];
  };
  const bearer = auth({ header: w.header, refresh: w.refresh });
  assert.deepEqual(await run({ auth: bearer, maxAttempts: 2 }, [A, B]), [401, ['a:Bearer t0', 'b:-']]);
  assert.equal(w.refreshes, 0, 'a 401 from where the token did not go starts no refresh');
  assert.deepEqual(await run({ auth: bearer, maxAttempts: 2 }, [A, { url: B, credentials: true }]), [200, ['a:Bearer t0', 'b:Bearer t0']]);
  const key = auth({ name: 'x-api-key', header: () => 'k-secret', refresh: w.refresh });
  assert.deepEqual(await run({ auth: key, maxAttempts: 2 }, [A, { url: B, credentials: true }]), [401, ['a:k-secret', 'b:-']]);
  assert.equal(w.refreshes, 0);
});

test('a hedged call: both racers meet the 401, one refresh, the call answers', async (t) => {
  const clock = virtual(t);
  const w = world(clock, { latencyMs: 100 });
  const a = auth({ header: w.header, refresh: w.refresh });
  let done;
  const api = withBackoff(w.fetch, { auth: a, hedge: hedge({ delayMs: 30 }), onDone: (d) => (done = d) });
  assert.equal((await clock.run(api(`${A}/h`))).status, 200);
  assert.equal(w.refreshes, 1);
  // (the first racer at 0 and its hedge at 30 meet 401s at 100 and 130: both wait on the one refresh
  // (100..150) and go again at 150; the first answers first)
  assert.deepEqual(
    w.sent.map((s) => `${s.auth}@${s.at}`),
    ['Bearer t0@0', 'Bearer t0@30', 'Bearer t1@150', 'Bearer t1@150'],
  );
  // (onDone tells both features: the race's winner and the refresh)
  assert.deepEqual([done.won, done.hedges, done.attempts, done.refreshed], [1, 1, 2, true]);
});

test('header(): undefined sends none (its 401 refreshes), a non-string rejects, what it throws rejects', async (t) => {
  const clock = virtual(t);
  const w = world(clock);
  let token;
  const a = auth({ header: () => token && `Bearer ${token}`, refresh: async () => (token = w.valid) });
  const res = await clock.run(withBackoff(w.fetch, { auth: a })(`${A}/anon`));
  assert.equal(res.status, 200);
  assert.deepEqual(
    w.sent.map((s) => s.auth),
    [null, 'Bearer t1'],
  );
  const bad = withBackoff(w.fetch, { auth: auth({ header: () => 42, refresh: w.refresh }) });
  assert.match((await clock.run(bad(`${A}/x`).catch((e) => e))).message, /auth: header\(\) must return a string/);
  const boom = new Error('vault down');
  const thrower = withBackoff(w.fetch, {
    auth: auth({
      header: () => {
        throw boom;
      },
      refresh: w.refresh,
    }),
  });
  assert.equal(await clock.run(thrower(`${A}/x`).catch((e) => e)), boom);
});

test('bad options: a clear error naming the option', () => {
  const ok = { header: () => 'x', refresh: async () => {} };
  const cases = [
    [undefined, TypeError, /header must be a function/],
    [42, TypeError, /auth options must be an object/],
    [{ refresh: ok.refresh }, TypeError, /auth: header must be a function/],
    [{ header: ok.header }, TypeError, /auth: refresh must be a function/],
    [{ ...ok, name: 3 }, TypeError, /auth: name must be a header name/],
    [{ ...ok, name: 'bad name' }, RangeError, /auth: name must be a header name that fetch sends/],
    [{ ...ok, name: 'Host' }, RangeError, /auth: name must be a header name that fetch sends/],
    [{ ...ok, on: 401 }, TypeError, /auth: on must be an array of integer HTTP statuses/],
    [{ ...ok, on: [] }, RangeError, /auth: on must name at least one status/],
    [{ ...ok, on: [99] }, RangeError, /auth: on must be an array/],
    [{ ...ok, timeoutMs: 0 }, RangeError, /auth: timeoutMs must be a number > 0/],
    [{ ...ok, timeoutMs: '1' }, TypeError, /auth: timeoutMs must be a number > 0/],
  ];
  for (const [o, E, msg] of cases)
    assert.throws(
      () => auth(o),
      (e) => e instanceof E && msg.test(e.message),
      JSON.stringify(o),
    );
  assert.throws(() => withBackoff(fetch, { auth: { header: () => 'x' } }), /auth must be made by auth\(\) from 'wasm-backoff\/auth'/);
  const made = auth(ok);
  assert.ok(Object.isFrozen(made));
  assert.deepEqual([made.name, made.on, made.timeoutMs, made.refreshes], ['authorization', [401], 30000, 0]);
});

// ---- the package, against the real scripted server

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

test('the package exports auth and AuthRefreshError; the main entry takes it', () => {
  assert.equal(typeof pkgAuth.auth, 'function');
  assert.equal(typeof pkgAuth.AuthRefreshError, 'function');
  assert.equal(typeof pkg.withBackoff(fetch, { auth: pkgAuth.auth({ header: () => 'x', refresh: async () => {} }) }), 'function');
});

for (const name of Object.keys(SMOKES)) {
  test(`smoke (Node's fetch): ${name}`, async () => {
    const failures = await authSmokes({ ...pkg, ...pkgAuth }, control(srv.url), [name]);
    assert.deepEqual(failures, []);
  });
}
