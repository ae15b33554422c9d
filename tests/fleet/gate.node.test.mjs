// A fleet's shared gate on virtual time, in Node: isolates (each a
// sharedGate of the js/ sources, as each Worker's module-level gate is)
// share their circuits through objects in this process (GateHub, the code
// a GateObject runs, behind a structured-clone RPC: tests/support/objects.mjs),
// against an origin answered by the kit's scriptedFetch. The fleet's rounds,
// probes, reports, the object's fault paths and the shared limiter, asserted
// to the millisecond: what gate.fleet.test.mjs and gate.fleet-faults.test.mjs
// ran in real workerd on real time (those keep the Durable Objects' smokes).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff } from '../../js/fetch/index.js';
import { sharedGate } from '../../js/fleet/shared-gate.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import { T0, install } from '../engine/clock.mjs';
import { objects } from '../support/objects.mjs';

const ORIGIN = 'https://origin.test';
const NAMES = ['a', 'b', 'c', 'd', 'e'];
// The calls' own schedule, without jitter: a 503's retry waits 10 ms, 20, … (the throttling base,
// 10 × baseMs) while the object has not tripped. The object's rounds: 50, 100, 200, 400, 800 ms.
const CALLS = { baseMs: 1, jitter: 'none' };
const ROUNDS = { baseMs: 50, maxDelayMs: 1000, jitter: 'none', consecutive: 3, pollMs: 2000 };

/**
 * A fleet for test `t`: the clock, the objects, the origin answering
 * `script` (scriptedFetch's; each call's `by` is its isolate), and
 * `isolate(name)`: that isolate's shared gate of `options` (made at its
 * first use, as at a Worker's first request) over its own view of the
 * objects, whose `fault` the test may set.
 */
function fleet(t, script, options) {
  const clock = install();
  const objs = objects();
  const origin = scriptedFetch(script);
  const made = new Map();
  t.after(() => {
    for (const i of made.values()) i.gate.free();
    objs.free();
    clock.off();
  });
  const isolate = (name) => {
    if (!made.has(name)) {
      const ns = objs.view();
      made.set(name, { name, ns, gate: sharedGate(ns, options) });
    }
    return made.get(name);
  };
  /**
   * `n` concurrent calls of isolate `name` to `path` (each: its status, or its error's name and
   * retryAfterMs, and when it ended); `abortMs`: the first is aborted that long after it started.
   * Then, unless `flush` is false, waits for the isolate's reports (what a Worker hands to waitUntil).
   */
  const calls = async (name, path, n, { max = 20, ms = 10_000, abortMs, flush = true } = {}) => {
    const { gate } = isolate(name);
    const api = withBackoff(origin, { gate, ...CALLS, maxAttempts: max, maxElapsedMs: ms, attemptHeader: 'x-attempt' });
    const out = Array.from({ length: n }, async (_, i) => {
      const start = clock.now();
      // (AbortSignal.timeout's timer is the runtime's own, not the clock's: a controller, with its reason)
      const ac = new AbortController();
      if (i === 0 && abortMs !== undefined) setTimeout(() => ac.abort(new DOMException('timed out', 'TimeoutError')), abortMs);
      const signal = i === 0 && abortMs !== undefined ? ac.signal : undefined;
      try {
        const res = await api(`${ORIGIN}${path}?by=${name}&i=${i}`, { signal });
        await res.body?.cancel();
        return { status: res.status, at: clock.now(), ms: clock.now() - start };
      } catch (e) {
        return { error: e.name, retryAfterMs: e.retryAfterMs, at: clock.now(), ms: clock.now() - start };
      }
    });
    const done = await Promise.all(out);
    if (flush) await gate.flush();
    return done;
  };
  /** The requests the origin saw: `by`, `i`, attempt, when. */
  const sent = (path) =>
    origin.calls
      .filter((c) => new URL(c.url).pathname === path)
      .map((c) => {
        const q = new URL(c.url).searchParams;
        return {
          by: q.get('by'),
          i: Number(q.get('i')),
          attempt: Number(/attempt=(\d+)/.exec(c.headers['x-attempt'])?.[1]),
          at: c.at - T0,
        };
      });
  return { clock, objs, origin, isolate, calls, sent, state: () => objs.hub(ORIGIN).gate?.state(ORIGIN) };
}

test('a healthy target: every call goes straight out, no round trip to the object', async (t) => {
  const f = fleet(t, { status: 200, body: 'ok' }, ROUNDS);
  const out = await f.clock.run(Promise.all(NAMES.map((n) => f.calls(n, '/up', 10))));
  for (const o of out)
    assert.deepEqual(
      o.map((x) => [x.status, x.at]),
      Array(10).fill([200, 0]),
    );
  for (const n of NAMES) assert.deepEqual(f.isolate(n).gate.rpcs, { report: 0, admit: 0, probed: 0, lease: 0 }, n);
  assert.equal(f.objs.all.size, 0, 'no object was even made');
  assert.equal(f.origin.count, 50);
});

test('five isolates, one down origin: one probe per round fleet-wide (at 50, 150, 350, 750, 1550), then every call succeeds once', async (t) => {
  const f = fleet(t, (call) => (call.at - T0 < 1500 ? 503 : { status: 200, body: 'ok' }), ROUNDS);
  const out = await f.clock.run(Promise.all(NAMES.map((n) => f.calls(n, '/down', 10, { max: 100, ms: 20_000 }))));
  for (const o of out)
    assert.deepEqual(
      o.map((x) => [x.status, x.at]),
      Array(10).fill([200, 1550]),
    );
  const reqs = f.sent('/down');
  assert.deepEqual(
    reqs.filter((r) => r.at === 0).map((r) => r.attempt),
    Array(50).fill(1),
    'the 50 first tries at 0, before anyone knew',
  );
  // After them, the fleet's probes alone, one per round of the object's gate (50, 100, 200, 400, 800 ms).
  const probes = reqs.filter((r) => r.at > 0 && r.at < 1550);
  assert.deepEqual(
    probes.map((r) => r.at),
    [50, 150, 350, 750],
    'one failed probe per round, for the whole fleet (a gate per isolate: one per isolate per round)',
  );
  // At 1550 the fifth probe succeeds and every held call is released: each call once.
  const ok = reqs.filter((r) => r.at === 1550);
  assert.equal(ok.length, 50);
  assert.deepEqual(new Set(ok.map((r) => `${r.by}${r.i}`)).size, 50, 'each call once');
  const obj = f.objs.stats(ORIGIN);
  assert.deepEqual([obj.gate.rounds, obj.gate.probes], [5, 5]);
  // Round trips: one report per isolate (its first failures, batched); each probe reported once.
  for (const n of NAMES) assert.equal(f.isolate(n).gate.rpcs.report, 1, n);
  assert.equal(
    NAMES.reduce((s, n) => s + f.isolate(n).gate.rpcs.probed, 0),
    5,
  );
  assert.equal(obj.rpcs.probed, 5);
});

test("fail-fast through the object: past the fleet's threshold every isolate refuses at once with the round's exact remaining wait, nothing sent; at its end one probe closes it", async (t) => {
  let up = false;
  const f = fleet(t, () => (up ? { status: 200, body: 'ok' } : 503), { ...ROUNDS, baseMs: 3000, maxDelayMs: 3000, mode: 'fail-fast' });
  // a sees 3 failures (the fleet's threshold): its report trips the object, for a round of 3 s.
  const tripped = await f.clock.run(f.calls('a', '/ff', 3, { max: 1 }));
  assert.deepEqual(
    tripped.map((o) => o.status),
    [503, 503, 503],
  );
  assert.equal(f.state().state, 'open');
  // b–e have seen nothing: their first call goes out at 1000 (no round trip while healthy); its
  // failure's report answers the object's state, and the call's retry (10 ms later, its own wait,
  // decided before the answer came) is refused with what is left of the round.
  await f.clock.to(1000);
  const learn = await f.clock.run(Promise.all(NAMES.slice(1).map((n) => f.calls(n, '/ff', 1, { max: 5 }))));
  for (const [l] of learn) assert.deepEqual([l.error, l.retryAfterMs, l.at], ['BrokenCircuitError', 1990, 1010]);
  assert.equal(f.origin.count, 3 + 4, 'one request from each of b–e');
  // Every isolate now refuses at once, with what is left of the object's round.
  await f.clock.to(2999);
  const refused = await f.clock.run(Promise.all(NAMES.map((n) => f.calls(n, '/ff', 2, { max: 5 }))));
  for (const o of refused.flat()) assert.deepEqual([o.error, o.retryAfterMs, o.at], ['BrokenCircuitError', 1, 2999]);
  assert.equal(f.origin.count, 7, 'nothing sent while open');
  // At the round's end: one probe (from a) closes the shared circuit; then b–e go straight out.
  up = true;
  await f.clock.to(3000);
  const [probe] = await f.clock.run(f.calls('a', '/ff', 1, { max: 5 }));
  assert.deepEqual([probe.status, probe.at], [200, 3000]);
  assert.equal(f.isolate('a').gate.rpcs.probed, 1, 'a was the fleet probe');
  const rest = await f.clock.run(Promise.all(NAMES.slice(1).map((n) => f.calls(n, '/ff', 1, { max: 5 }))));
  for (const [r] of rest) assert.deepEqual([r.status, r.at], [200, 3000]);
  assert.equal(f.objs.stats(ORIGIN).gate.probes, 1);
  assert.equal(f.origin.count, 7 + 1 + 4);
  assert.equal(f.state().state, 'closed');
});

test('a probe its caller aborts: the next call (this isolate or another) probes at that moment, not after its poll', async (t) => {
  const n = { a: 0, b: 0 };
  const f = fleet(
    t,
    (call) => {
      const by = new URL(call.url).searchParams.get('by');
      const i = n[by]++;
      if (by === 'a') return i < 3 ? 503 : i === 3 ? { hang: true } : { status: 200, body: 'ok' };
      return i === 0 ? 503 : { status: 200, body: 'ok' };
    },
    { ...ROUNDS, baseMs: 100, maxDelayMs: 2000, pollMs: 5000 },
  );
  await f.clock.run(f.calls('a', '/ab', 3, { max: 1 }));
  // a's first call probes at the round's end (100) and hangs until its signal aborts it at 800; a's second is held.
  const a = f.calls('a', '/ab', 2, { max: 10, abortMs: 800 });
  // b fails once (at 10), learns of the open circuit and waits at the object.
  await f.clock.to(10);
  const b = f.calls('b', '/ab', 1, { max: 10 });
  const [ra, [rb]] = await f.clock.run(Promise.all([a, b]));
  assert.deepEqual([ra[0].error, ra[0].at], ['TimeoutError', 800], 'the aborted probe');
  assert.deepEqual(
    f.sent('/ab').map((r) => `${r.by}@${r.at}`),
    ['a@0', 'a@0', 'a@0', 'b@10', 'a@100', 'b@800', 'a@800'],
    "the next probe (b's, waiting at the object) went at 800, the abort, and a's held call after it",
  );
  assert.deepEqual([ra[1].status, ra[1].at, rb.status, rb.at], [200, 800, 200, 800]);
  const obj = f.objs.stats(ORIGIN);
  assert.deepEqual([obj.gate.probes, obj.rpcs.probed], [2, 2], 'the aborted probe reported (cancelled), and the next');
  assert.equal(f.state().state, 'closed');
});

test('an object whose every RPC throws: each isolate goes on with its local gate; every call completes', async (t) => {
  const f = fleet(t, (call) => (call.at - T0 < 400 ? 503 : { status: 200, body: 'ok' }), { ...ROUNDS, baseMs: 50 });
  for (const n of ['a', 'b']) f.isolate(n).ns.fault = () => 'reject';
  const out = await f.clock.run(Promise.all(['a', 'b'].map((n) => f.calls(n, '/bk', 3, { max: 50 }))));
  for (const [k, n] of ['a', 'b'].entries()) {
    assert.deepEqual(
      out[k].map((x) => [x.status, x.at]),
      Array(3).fill([200, 642]),
      n,
    );
    assert.ok(f.isolate(n).gate.rpcs.report >= 1, 'the failures were reported (and the reports failed)');
    assert.equal(f.isolate(n).gate.state(ORIGIN).state, 'closed');
  }
  // No circuit (the local gate trips only when the object says so): each call retries on its own
  // schedule (10, 20, 40, 80 ms, …), each retry after the report its failure made (sent on a timer:
  // nested, the clock clamps it to 4 ms, as browsers and workerd do) has failed.
  const sent = f.sent('/bk');
  assert.deepEqual([...new Set(sent.map((r) => r.at))], [0, 10, 30, 70, 154, 318, 642]);
  assert.equal(sent.length, 6 * 7, 'the six calls at each');
});

test('the object becomes unreachable mid-outage (stubs that reject, or cannot be had): the isolates probe on their own', async (t) => {
  let phase = 'down';
  const f = fleet(
    t,
    (call) => {
      if (phase === 'down') return 503;
      // a's probe is slow: its stub breaks while it is out
      return new URL(call.url).searchParams.get('by') === 'a' ? { status: 200, body: 'ok', delayMs: 300 } : { status: 200, body: 'ok' };
    },
    { ...ROUNDS, baseMs: 100, maxDelayMs: 2000 },
  );
  await f.clock.run(f.calls('a', '/mid', 3, { max: 1 }));
  await f.clock.run(f.calls('b', '/mid', 1, { max: 1 }));
  assert.equal(f.state().state, 'open');
  assert.equal(f.isolate('b').gate.state(ORIGIN).state, 'open', 'b learned of it');
  f.isolate('b').ns.fault = () => 'reject';
  phase = 'up';
  const a = f.calls('a', '/mid', 2, { max: 10 });
  await f.clock.to(100);
  assert.equal(f.origin.count, 5, "a's probe is out");
  f.isolate('a').ns.fault = (m) => (m === 'get' ? 'throw' : undefined);
  const b = f.calls('b', '/mid', 2, { max: 10 });
  const [ra, rb] = await f.clock.run(Promise.all([a, b]));
  assert.deepEqual(
    ra.map((o) => [o.status, o.at]),
    [
      [200, 400],
      [200, 700],
    ],
    "a's probe (sent at 100, slow) answered at 400, then its held call",
  );
  assert.deepEqual(
    rb.map((o) => [o.status, o.at]),
    [
      [200, 100],
      [200, 100],
    ],
    'b, unable to ask, probed alone at its round’s end',
  );
  assert.equal(f.isolate('a').gate.rpcs.probed, 1, "a's probe was the fleet's: its report's stub threw");
  assert.ok(f.isolate('b').gate.rpcs.admit >= 1 && f.isolate('b').gate.rpcs.probed === 0, JSON.stringify(f.isolate('b').gate.rpcs));
  for (const n of ['a', 'b']) assert.equal(f.isolate(n).gate.state(ORIGIN).state, 'closed');
});

/**
 * One call of isolate a to `path` (one attempt, answered `status`) whose `method` RPC is never
 * answered (its Worker request ended first, no flush handed to waitUntil); the later ones are.
 */
async function lost(f, method, path, status) {
  const a = f.isolate('a');
  a.ns.fault = (m) => (m === method ? 'never' : undefined);
  const [cut] = await f.clock.run(f.calls('a', path, 1, { max: 1, flush: false }));
  assert.equal(cut.status, status);
  await f.clock.tick(0);
  assert.equal(a.gate.rpcs[method], 1, `its ${method} is out, unanswered`);
  a.ns.fault = () => undefined;
  return a;
}

test("a report that is never answered (a Worker request that ended first): the isolate's later calls end at their deadline (300) or abort (200); flush() gives it up at 1000; then calls go straight out", async (t) => {
  const f = fleet(t, { '/cut': 503, '/fine': { status: 200, body: 'ok' } }, { ...ROUNDS, baseMs: 100 });
  const a = await lost(f, 'report', '/cut', 503);
  const [[dl], [ab], flushed] = await f.clock.run(
    Promise.all([
      f.calls('a', '/fine', 1, { max: 1, ms: 300 }),
      f.calls('a', '/fine', 1, { max: 1, abortMs: 200 }),
      a.gate.flush().then(() => f.clock.now()),
    ]),
  );
  assert.deepEqual([dl.error, dl.at], ['GateTimeoutError', 300], 'the deadline');
  assert.deepEqual([ab.error, ab.at], ['TimeoutError', 200], 'the abort');
  assert.equal(flushed, 1000, 'flush() gives up the lost report a second after it was sent');
  const after = await f.clock.run(f.calls('a', '/fine', 2, { max: 1 }));
  assert.deepEqual(
    after.map((o) => [o.status, o.at]),
    [
      [200, 1000],
      [200, 1000],
    ],
    'straight out again',
  );
  assert.equal(f.origin.calls.filter((c) => c.url.includes('/fine')).length, 2, 'the calls cut by their deadline or abort sent nothing');
});

test("an object that answers a report 60 s late: a call ends at its deadline (500) or its abort (300), not at the object's answer", async (t) => {
  const f = fleet(t, 503, { ...ROUNDS, baseMs: 100, maxDelayMs: 2000 });
  // The failure's report is out while the call's retry waits for it.
  for (const n of ['a', 'b']) f.isolate(n).ns.fault = (m) => (m === 'report' ? 60_000 : undefined);
  const [[dl], [ab]] = await f.clock.run(
    Promise.all([f.calls('a', '/slow', 1, { max: 5, ms: 500 }), f.calls('b', '/slow', 1, { max: 5, abortMs: 300 })]),
  );
  assert.deepEqual([dl.error, dl.ms], ['GateTimeoutError', 500], 'report: the deadline');
  assert.deepEqual([ab.error, ab.ms], ['TimeoutError', 300], 'report: the abort');
});

test('an object that answers an admit 5 s late: a held call ends at its deadline (500) or its abort (300)', async (t) => {
  const f = fleet(t, 503, { ...ROUNDS, baseMs: 100, maxDelayMs: 2000 });
  await f.clock.run(f.calls('a', '/slow', 3, { max: 1 }));
  await f.clock.run(f.calls('b', '/slow', 1, { max: 1 }));
  const start = f.clock.now();
  for (const n of ['a', 'b']) f.isolate(n).ns.fault = (m) => (m === 'admit' ? 5000 : undefined);
  const [[dl], [ab]] = await f.clock.run(
    Promise.all([f.calls('a', '/slow', 1, { max: 5, ms: 500 }), f.calls('b', '/slow', 1, { max: 5, abortMs: 300 })]),
  );
  assert.deepEqual([dl.error, dl.at - start], ['GateTimeoutError', 500], 'admit: the deadline');
  assert.deepEqual([ab.error, ab.at - start], ['TimeoutError', 300], 'admit: the abort');
  assert.ok(f.isolate('a').gate.rpcs.admit >= 1 && f.isolate('b').gate.rpcs.admit >= 1, 'both asked the object');
});

test('a probe whose outcome never reaches the object is let go once the fleet recovers: the object counts nothing in flight', async (t) => {
  let up = false;
  let bFailed = false;
  const f = fleet(
    t,
    (call) => {
      if (!up || (new URL(call.url).searchParams.get('by') === 'b' && !bFailed && (bFailed = true))) return 503;
      return { status: 200, body: 'ok' };
    },
    { ...ROUNDS, baseMs: 100, maxDelayMs: 2000, probeTimeoutMs: 300 },
  );
  await f.clock.run(f.calls('a', '/lost', 3, { max: 1 }));
  // a's probe is granted and succeeds, but its outcome is lost (its `probed` rejects).
  f.isolate('a').ns.fault = (m) => (m === 'probed' ? 'reject' : undefined);
  up = true;
  const [ra] = await f.clock.run(f.calls('a', '/lost', 1, { max: 5 }));
  f.isolate('a').ns.fault = () => undefined;
  assert.deepEqual([ra.status, ra.at], [200, 100]);
  assert.equal(f.isolate('a').gate.rpcs.probed, 1);
  assert.equal(f.objs.stats(ORIGIN).gate.inFlight, 1, 'the lost probe, in flight at the object');
  // b fails once (at 100) and learns of the circuit. The lost probe times out at 400 (300 ms after it
  // went) and counts as failed: the next round (200 ms) ends at 600, when b probes and closes it.
  const [rb] = await f.clock.run(f.calls('b', '/lost', 1, { max: 5 }));
  assert.deepEqual(
    f.sent('/lost').map((r) => `${r.by}@${r.at}`),
    ['a@0', 'a@0', 'a@0', 'a@100', 'b@100', 'b@600'],
  );
  assert.deepEqual([rb.status, rb.at], [200, 600]);
  assert.equal(f.isolate('b').gate.rpcs.probed, 1, 'b was the next probe');
  const obj = f.objs.stats(ORIGIN);
  assert.equal(f.state().state, 'closed');
  assert.deepEqual([obj.gate.inFlight, obj.gate.probes], [0, 2], 'the lost probe let go');
});

test("limit: 'adaptive': one limiter for the fleet, cut once however many isolates were throttled; idle isolates ask nothing", async (t) => {
  // A server with a capacity: a token bucket of 100 req/s (burst 10), 429 beyond it (no Retry-After: no pauses).
  let tokens = 10;
  let last = 0;
  let throttled = 0;
  const server = (call) => {
    const now = call.at - T0;
    tokens = Math.min(10, tokens + ((now - last) / 1000) * 100);
    last = now;
    if (tokens < 1) return (throttled++, 429);
    tokens--;
    return { status: 200, body: 'ok' };
  };
  const f = fleet(t, server, { limit: 'adaptive', consecutive: Infinity, name: (k) => `lim:${k}` });
  const busy = NAMES.slice(0, 4);
  const out = await f.clock.run(
    Promise.all(
      busy.map(async (n) => {
        // (a 429's retry on the schedule's base, 100 ms, as before the throttling base)
        const api = withBackoff(f.origin, { gate: f.isolate(n).gate, maxAttempts: 3, throttleBaseMs: 100 });
        const statuses = [];
        for (let i = 0; i < 40; i++) statuses.push((await api(`${ORIGIN}/busy?by=${n}`)).status);
        return statuses;
      }),
    ),
  );
  await f.clock.run(Promise.all(busy.map((n) => f.isolate(n).gate.flush())));
  const obj = f.objs.stats(`lim:${ORIGIN}`);
  const lim = obj.limiters[ORIGIN];
  assert.ok(throttled > 0, 'the fleet went over the capacity at first');
  assert.ok(out.flat().filter((s) => s === 200).length > 0);
  const leased = busy.filter((n) => f.isolate(n).gate.rpcs.lease > 0);
  assert.equal(lim.isolates, leased.length, 'every isolate that was throttled reported to it');
  assert.ok(lim.version >= 1 && lim.rate < Infinity, 'the fleet was throttled: a finite rate');
  // Isolates throttled by the same burst join the cut (grow) instead of cutting again, as one client's limiter cuts once per throttle.
  assert.ok(lim.version < obj.rpcs.lease, `${lim.version} cuts for ${obj.rpcs.lease} reports`);
  for (const n of leased) {
    const s = f.isolate(n).gate.share(ORIGIN);
    assert.ok(s.rate > 0 && s.rate <= s.fleet && s.alone === false, `a share of the fleet's rate: ${JSON.stringify(s)}`);
  }
  assert.deepEqual(f.isolate('e').gate.rpcs, { report: 0, admit: 0, probed: 0, lease: 0 }, 'an isolate with no calls asks nothing');
});

test("the fleet's limiter: a lease that is never answered is given up at 1000; the next throttle reports again", async (t) => {
  const f = fleet(t, 429, { limit: 'adaptive', consecutive: Infinity, name: (k) => `lim:${k}` });
  const a = await lost(f, 'lease', '/thr', 429);
  await f.clock.run(a.gate.flush());
  assert.equal(f.clock.now(), 1000, 'flush() gives up the lost lease a second after it was asked');
  const leases = a.gate.rpcs.lease;
  const [again] = await f.clock.run(f.calls('a', '/thr', 1, { max: 1 }));
  assert.equal(again.status, 429);
  await f.clock.run(a.gate.flush());
  assert.equal(a.gate.rpcs.lease, leases + 1, 'the next throttle asked again');
  const s = a.gate.share(ORIGIN);
  assert.ok(s.alone === false && s.rate < Infinity, `a share from the object: ${JSON.stringify(s)}`);
});

test('bad options and keys: TypeError or RangeError naming them', async (t) => {
  const f = fleet(t, 200, {});
  const ns = f.objs.view();
  const cases = [
    [() => sharedGate({}, {}), TypeError, /namespace must be a Durable Object namespace/],
    [() => sharedGate(ns, { pollMs: 0 }), RangeError, /^pollMs must be/],
    [() => sharedGate(ns, { pollMs: '5' }), TypeError, /^pollMs must be/],
    [() => sharedGate(ns, { name: 'x' }), TypeError, /^name must be a function/],
    [() => sharedGate(ns, { consecutive: 0 }), RangeError, /consecutive/],
    [() => sharedGate(ns, { baseMs: -1 }), RangeError, /baseMs/],
  ];
  for (const [make, type, re] of cases) assert.throws(make, (e) => e instanceof type && re.test(e.message), String(re));
  const g = sharedGate(ns);
  t.after(() => g.free());
  await assert.rejects(f.clock.run(g.run(42, () => 1)), (e) => e instanceof TypeError && /string keys/.test(e.message));
});
