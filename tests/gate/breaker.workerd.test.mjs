// The gate as a circuit breaker and adaptive limiter in real workerd
// (miniflare; the worker is tests/workerd/breaker.mjs), against the scripted
// server on 127.0.0.1: fail-fast, a breaker's state carried between incoming
// requests in a KV namespace (toJSON in one, restore in the next), every
// state change with its key and reason, and the limiter's server-named wait.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { workerOptions } from '../support/workerd.mjs';
import { sleep } from '../support/wait.mjs';
import { assertLimiterAlone, assertThrottledGap, roundOver } from './breaker-asserts.mjs';
import { startScripted } from '../server/scripted.mjs';

let mf, srv;
before(async () => {
  srv = await startScripted();
  mf = new Miniflare({ ...workerOptions('breaker.mjs', { ORIGIN: srv.url }), kvNamespaces: ['BREAKER'] });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

/** The JSON answer of the worker's `route` for the server path `p` (and more query `q`). */
async function call(route, p, q = '') {
  const res = await mf.dispatchFetch(`http://worker.test${route}?p=${encodeURIComponent(p)}${q}`);
  const body = await res.json();
  assert.equal(res.status, 200, body.thrown);
  return body;
}

/** The carried breaker's round (CARRIED in tests/workerd/breaker.mjs: no jitter). */
const ROUND_MS = 10_000;

/** When the server saw each request to `p` (ms, its clock). */
const arrivals = (p) => srv.requests.filter((r) => r.path === p).map((r) => r.at);

test('fail-fast: past the threshold, calls are refused with a BrokenCircuitError naming the wait; nothing is sent', async () => {
  srv.script('/ff', { status: 503 });
  const r = await call('/failfast', '/ff');
  assert.equal(r.key, srv.url, 'the default key: the origin');
  assert.equal(r.first.status, 503);
  assert.equal(r.afterOne, 'closed', 'one failure is below consecutive: 2');
  assert.equal(r.second.status, 503);
  assert.equal(r.afterTwo, 'open');
  for (const { error } of r.refused) {
    assert.ok(error, 'refused');
    assert.equal(error.name, 'BrokenCircuitError');
    assert.ok(error.broken, 'instanceof the BrokenCircuitError that pkg/gate/workerd.js exports');
    assert.equal(error.key, srv.url);
    assert.equal(error.isolated, false);
    assert.ok(error.retryAfterMs > 0 && error.retryAfterMs <= 400, `retryAfterMs ${error.retryAfterMs}`);
  }
  assert.equal(srv.count('/ff'), 2, 'the refused calls sent nothing');
  assert.equal(r.stats.rounds, 1);
  assert.equal(r.stats.probes, 0);
});

test('a breaker restored from toJSON() (in KV) in later requests stays open, then its first call after the round probes and closes it', async () => {
  srv.script('/carry', [{ status: 503 }, { status: 200, body: 'probe ok' }]);
  const kv = await mf.getKVNamespace('BREAKER');

  // Request 1: one 503 trips it (consecutive: 1); its state goes to KV.
  const one = await call('/trip', '/carry');
  assert.equal(one.res.status, 503);
  assert.deepEqual(one.changes, ['closed>open:tripped']);
  assert.deepEqual(one.keys, [srv.url]);
  assert.deepEqual(Object.keys(one.saved.targets), [srv.url]);
  const saved = one.saved.targets[srv.url];
  assert.equal(saved.state, 'open');
  assert.equal(saved.round, 1);
  const round = saved.untilMs - one.saved.savedAt;
  assert.ok(round > ROUND_MS - 500 && round <= ROUND_MS, `the round ends in ${round} ms (baseMs ${ROUND_MS}, no jitter)`);
  assert.deepEqual(JSON.parse(await kv.get('gate')), one.saved, 'what request 1 stored');

  // Request 2, a fresh gate: restored open; its call is refused without
  // reaching the server, and the round ends when it would have in request 1.
  await sleep(100);
  const sent = Date.now();
  const two = await call('/resume', '/carry');
  assert.equal(two.before, 'closed', 'a fresh gate');
  assert.equal(two.restored, 'open');
  assert.equal(two.res.error?.name, 'BrokenCircuitError', JSON.stringify(two.res));
  assert.ok(two.res.error.broken);
  assert.equal(two.res.error.key, srv.url);
  assert.ok(two.res.error.retryAfterMs > 0 && two.res.error.retryAfterMs <= ROUND_MS, `retryAfterMs ${two.res.error.retryAfterMs}`);
  assert.ok(
    two.res.error.retryAfterMs <= saved.untilMs - sent + 2,
    `retryAfterMs ${two.res.error.retryAfterMs}: the round ends ${saved.untilMs - sent} ms after request 2 was sent (not a new round)`,
  );
  assert.equal(srv.count('/carry'), 1, 'request 2 sent nothing');
  assert.deepEqual(two.changes, ['closed>open:restored']);
  assert.equal(two.after, 'open');
  assert.equal(two.saved.targets[srv.url]?.untilMs, saved.untilMs, 'saved again, the same round');

  // Request 3, once the round is over: restored with the probe due; its call
  // is the probe, which succeeds and closes the circuit. (the round is not
  // waited out: the state in KV is made one saved a round earlier, its untilMs just past)
  await kv.put('gate', JSON.stringify(roundOver(JSON.parse(await kv.get('gate')), srv.url)));
  const three = await call('/resume', '/carry');
  assert.equal(three.restored, 'half-open', 'the round ended between the requests: the next call probes');
  assert.equal(three.res.status, 200, JSON.stringify(three.res));
  assert.equal(three.res.body, 'probe ok');
  assert.equal(srv.count('/carry'), 2, 'one probe');
  assert.deepEqual(three.changes, ['closed>open:restored', 'open>half-open:round-over', 'half-open>closed:probe-succeeded']);
  assert.deepEqual(three.keys, [srv.url, srv.url, srv.url]);
  assert.equal(three.after, 'closed');
  assert.deepEqual(three.saved.targets, {}, 'closed and clean: nothing to carry');
  assert.deepEqual(JSON.parse(await kv.get('gate')).targets, {});
});

test('onStateChange in workerd: open → half-open → closed, with the key and the reasons', async () => {
  srv.script('/changes', [{ status: 503 }, { status: 503 }, { status: 200, body: 'back' }]);
  const r = await call('/changes', '/changes');
  assert.equal(r.res.body, 'back');
  // The first 503 retried on the call's own 1 ms schedule; the second tripped (consecutive: 2).
  assert.deepEqual(r.changes, ['closed>open:tripped', 'open>half-open:round-over', 'half-open>closed:probe-succeeded']);
  assert.deepEqual(r.keys, [srv.url, srv.url, srv.url]);
  assert.deepEqual([r.stats.rounds, r.stats.probes], [1, 1]);
  const at = arrivals('/changes');
  assert.equal(at.length, 3);
  assert.ok(at[2] - at[1] >= 145, `the probe went ${(at[2] - at[1]).toFixed(0)} ms after the trip (round: 150 ms)`);
});

test("limit: 'adaptive' in workerd — a 429 naming a wait (retry-after-ms) pauses no other call: the next first attempt waits a token at most", async (t) => {
  // Without the limiter, the next call goes at once.
  srv.script('/unlimited', [
    { status: 429, headers: { 'retry-after-ms': '1000' } },
    { status: 200, body: 'ok' },
  ]);
  const u = await call('/limited', '/unlimited', '&limit=none');
  assert.deepEqual([u.throttled.status, u.next.status], [429, 200]);
  const at = arrivals('/unlimited');
  assert.ok(at[1] - at[0] < 800, `without the limiter: ${(at[1] - at[0]).toFixed(0)} ms`);

  // With it: 30 calls 20 ms apart, a 429 naming 1 s, then a new call. The
  // named wait is that call's (its retry's); the next call waits one token
  // at most at the throttled rate, a share of what the server took: the
  // warm-up keeps that token short (issue 24: pausing every call on a named
  // wait cost half the goodput or more in bench/overload.mjs's matrix).
  let n = 0;
  srv.script('/limited', () => (n++ === 30 ? { status: 429, headers: { 'retry-after-ms': '1000' } } : { status: 200, body: 'ok' }));
  const r = await call('/limited', '/limited', '&warm=30');
  assertThrottledGap(r, arrivals('/limited'), t);
});

test('AdaptiveLimiter alone in workerd: off until throttled; a wait is asked for (a token, not the named wait); refused and aborted acquires give the token back', async () => {
  const r = await call('/limiter', '');
  assertLimiterAlone(r);
});
