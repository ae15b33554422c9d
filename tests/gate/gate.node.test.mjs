// The backoff gate in Node, on virtual time (the js/ sources, the kit's
// clock as tests/engine/clock.mjs installs it, and a scriptedFetch standing
// for the server): an origin down for a while under 50 concurrent calls
// (one probe per round, everything released in order), the bounded queue
// under both overflow policies, per-call limits, aborts, and the generic
// `run`; every round, release and refusal asserted at its virtual
// millisecond, with no timer left behind. Last, on real time, what only
// the runtime can show: a delay past the longest timer on Node's own
// timers, and one smoke of the package entry with Node's fetch against the
// real scripted server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { withBackoff as pkgWithBackoff } from 'wasm-backoff';
import { createGate as pkgCreateGate } from 'wasm-backoff/gate';
import { withBackoff, fetchWithBackoff } from '../../js/fetch/index.js';
import { createGate, Gate, GateOverflowError, GateTimeoutError } from '../../js/gate/index.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import { startScripted } from '../server/scripted.mjs';
import { eachTest, settled, T0 } from '../engine/clock.mjs';
import { until, timers } from '../support/wait.mjs';

// (each test on its own clock, checked after it for timers left behind)
const clock = eachTest();

// No jitter, so the rounds are exactly 20, 40, 80, 80, … ms (the outage test: 60, 120, 240, 240).
// (consecutive: 1: these scenarios test the gate's rounds, which start at the first failure)
const ROUNDS = { baseMs: 20, maxDelayMs: 80, jitter: 'none', consecutive: 1 };
const ORIGIN = 'https://api.test';
/** The `i` of a request's query. */
const iOf = (u) => new URL(u).searchParams.get('i');
/** Each call `server` was made, as `i@ms` (virtual ms). */
const sends = (server) => server.calls.map((c) => `${iOf(c.url)}@${c.at - T0}`);

/**
 * A server down (503) while `down(n)` (n = requests so far), logging each
 * request with its `i`, time and state; up, it answers the `i`.
 */
function outage(down) {
  const log = [];
  const server = scriptedFetch((call) => {
    const i = Number(iOf(call.url));
    const d = down(log.length);
    log.push({ i, down: d, at: clock.now() });
    return d ? { status: 503 } : { status: 200, body: String(i) };
  });
  return Object.assign(server, { log });
}

/** `p`, stamped with the virtual ms it settled at: `{ at, value }` or `{ at, error }`. */
const stamped = (p) =>
  p.then(
    (value) => ({ at: clock.now(), value }),
    (error) => ({ at: clock.now(), error }),
  );

test('50 calls in flight, origin down for a while: one probe per round, all succeed in order', async () => {
  // Down for the 50 first tries and 4 more requests: the probes of 4 rounds.
  const server = outage((n) => n < 54);
  const gate = createGate({ ...ROUNDS, baseMs: 60, maxDelayMs: 240 });
  const gated = withBackoff(server, { gate, maxAttempts: Infinity });
  const res = await clock.run(Promise.all(Array.from({ length: 50 }, (_, i) => gated(`${ORIGIN}/outage?i=${i}`))));
  assert.deepEqual(
    await Promise.all(res.map((r) => r.text())),
    res.map((_, i) => String(i)),
  );
  // The 50 first tries fail together: one round, not 50; then the oldest held call (i = 0) probes once per
  // round, at 60, 180, 420 and 660 (rounds of 60, 120, 240, 240 ms), fails, and at 900 succeeds; the other
  // 49 follow it at once, in order.
  const later = server.log.slice(50).map((r) => `${r.i}@${r.at}`);
  assert.deepEqual(later, ['0@60', '0@180', '0@420', '0@660', '0@900', ...Array.from({ length: 49 }, (_, i) => `${i + 1}@900`)]);
  assert.deepEqual(
    server.log.slice(0, 50).map((r) => r.at),
    Array(50).fill(0),
  );
  assert.deepEqual(gate.stats(), { evictions: 0, rounds: 5, probes: 5, timeouts: 0, held: 0, inFlight: 0, targets: 0 });
  assert.equal(clock.now(), 900);
});

test('without the gate, the same outage sees every call retry on its own', async () => {
  const server = outage((n) => n < 60);
  const plain = withBackoff(server, { ...ROUNDS, maxAttempts: Infinity });
  await clock.run(Promise.all(Array.from({ length: 20 }, (_, i) => plain(`${ORIGIN}/nogate?i=${i}`))));
  // Each call retries on its own schedule (a 503: 10 × baseMs, capped at 80 ms): all 20 at 0, at 80, at 160.
  assert.deepEqual(
    server.log.slice(0, 60).map((r) => r.at),
    [...Array(20).fill(0), ...Array(20).fill(80), ...Array(20).fill(160)],
  );
  assert.equal(new Set(server.log.slice(20, 60).map((r) => r.i)).size, 20, 'the retries came from every call, not one probe');
});

async function overflowRun(overflow) {
  let down = true;
  // The first failure asks for a 1 s round (its Retry-After).
  const server = scriptedFetch((call, n) =>
    down ? { status: 503, headers: n ? {} : { 'retry-after': '1' } } : { status: 200, body: iOf(call.url) },
  );
  const gate = createGate({ ...ROUNDS, baseMs: 30, maxQueued: 5, overflow, seed: 1 });
  const gated = withBackoff(server, { gate, maxAttempts: Infinity, seed: 1 });
  const results = [];
  const call = (i) =>
    gated(`${ORIGIN}/overflow?i=${i}`).then(
      (r) => r.text().then((t) => (results[i] = `${t}@${clock.now()}`)),
      (e) => (results[i] = e),
    );
  const all = [call(0)];
  await clock.tick(0);
  // The round: the Retry-After's 1 s and the gate's jitter above it (up to 10 %, seeded).
  assert.deepEqual(gate.state(ORIGIN), { state: 'open', probing: false, held: 1, inFlight: 0, retryAfterMs: 1082 }, 'the first failure');
  for (let i = 1; i <= 10; i++) all.push(call(i));
  await clock.tick(0);
  assert.equal(gate.state(ORIGIN).held, 5, 'the queue is bounded');
  const refused = results.map((r, i) => (r instanceof Error ? i : -1)).filter((i) => i >= 0);
  down = false;
  await clock.run(Promise.all(all));
  assert.equal(clock.now(), 1082, 'the rest went when the round ended');
  return { results, refused, stats: gate.stats(), sends: sends(server) };
}

test("maxQueued with overflow 'evict-oldest': the oldest are evicted at once, counted, and reject with GateOverflowError", async () => {
  const { results, refused, stats, sends: sent } = await overflowRun('evict-oldest');
  assert.deepEqual(refused, [0, 1, 2, 3, 4, 5], 'evicted at 0 ms, as the newer arrived');
  for (const i of refused) {
    assert.ok(results[i] instanceof GateOverflowError);
    assert.equal(results[i].name, 'GateOverflowError');
  }
  assert.deepEqual(results.slice(6), ['6@1082', '7@1082', '8@1082', '9@1082', '10@1082']);
  assert.deepEqual(sent, ['0@0', '6@1082', '7@1082', '8@1082', '9@1082', '10@1082']);
  assert.equal(stats.evictions, 6);
});

test("maxQueued with overflow 'reject-newest': the newest are refused at once, counted", async () => {
  const { results, refused, stats, sends: sent } = await overflowRun('reject-newest');
  assert.deepEqual(refused, [5, 6, 7, 8, 9, 10], 'refused at 0 ms');
  assert.deepEqual(results.slice(0, 5), ['0@1082', '1@1082', '2@1082', '3@1082', '4@1082']);
  assert.ok(results.slice(5).every((r) => r instanceof GateOverflowError && r.name === 'GateOverflowError'));
  assert.deepEqual(sent, ['0@0', '0@1082', '1@1082', '2@1082', '3@1082', '4@1082']);
  assert.equal(stats.evictions, 6);
});

test('per-call limits: maxAttempts counts the failed rounds a call waited through; maxElapsedMs bounds the wait', async () => {
  const server = outage(() => true);
  const gate = createGate(ROUNDS);
  let doneA;
  const a = stamped(withBackoff(server, { gate, maxAttempts: 4, onDone: (d) => (doneA = d) })(`${ORIGIN}/limits?i=1`));
  await clock.tick(0);
  assert.equal(gate.state(ORIGIN).held, 1, 'A held');
  // B arrives during the backoff: it is never sent while A probes, and gives
  // up after two failed rounds (its two attempts, made by proxy).
  const b = stamped(withBackoff(server, { gate, maxAttempts: 2 })(`${ORIGIN}/limits?i=2`));
  // C may wait 50 ms: the rounds at 20, then 40 ms, would wake it too late.
  const c = stamped(withBackoff(server, { gate, maxElapsedMs: 50, maxAttempts: Infinity })(`${ORIGIN}/limits?i=3`));
  const [ra, rb, rc] = await clock.run(Promise.all([a, b, c]));
  // Rounds of 20, 40, 80 ms: A probes at 20, 60 and 140.
  assert.ok(rb.error instanceof GateTimeoutError && rb.error.reason === 'exhausted', String(rb.error));
  assert.equal(rb.at, 60, 'B: out when the round after its second starts');
  assert.ok(rc.error instanceof GateTimeoutError && rc.error.reason === 'deadline', String(rc.error));
  assert.equal(rc.at, 20, 'C: out when the round that outlasts its deadline starts');
  // A ran out of its own attempts as the probe: its last response, as fetch would.
  assert.equal(ra.value.status, 503);
  assert.equal(ra.at, 140);
  assert.deepEqual([doneA.attempts, doneA.reason], [4, 'exhausted']);
  assert.deepEqual(sends(server), ['1@0', '1@20', '1@60', '1@140'], 'only A reached the server');
  assert.equal(gate.stats().timeouts, 2);
  // The target is still backing off (nothing held: no timer).
  assert.equal(gate.state(ORIGIN).state, 'open');
});

test('an aborted held call leaves the queue at once, with no listener or timer left', async () => {
  let down = true;
  const server = outage(() => down);
  const gate = createGate({ ...ROUNDS, baseMs: 60 });
  const gated = withBackoff(server, { gate, maxAttempts: Infinity, maxElapsedMs: 5000 });
  const a = gated(`${ORIGIN}/abort?i=1`);
  await clock.tick(0);
  assert.equal(gate.state(ORIGIN).held, 1, 'A held');
  const ac = new AbortController();
  let doneB;
  const b = withBackoff(server, { gate, maxAttempts: Infinity, maxElapsedMs: 5000, onDone: (d) => (doneB = d) })(`${ORIGIN}/abort?i=2`, {
    signal: ac.signal,
  });
  b.catch(() => {});
  await clock.tick(10);
  assert.equal(gate.state(ORIGIN).held, 2, 'B held');
  const reason = new Error('stop');
  ac.abort(reason);
  assert.equal(await settled(b), true, 'at once');
  await assert.rejects(b, (e) => e === reason);
  assert.equal(doneB.reason, 'aborted');
  assert.deepEqual([doneB.elapsedMs, clock.now()], [10, 10]);
  assert.equal(gate.state(ORIGIN).held, 1);
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  down = false;
  assert.equal((await clock.run(a)).status, 200);
  assert.deepEqual(sends(server), ['1@0', '1@60'], 'B never sent; A probes at the round’s end');
});

test('a hung probe times out into the next round (probeTimeoutMs): the next held call probes', async () => {
  const server = scriptedFetch([503, { hang: true }, { status: 200, body: 'ok' }]);
  const gate = createGate({ ...ROUNDS, probeTimeoutMs: 100, seed: 1 });
  const gated = withBackoff(server, { gate, maxAttempts: Infinity, timeoutMs: 600, seed: 1 });
  const order = [];
  const a = gated(`${ORIGIN}/hung?i=1`).then((r) => (order.push(`a@${clock.now().toFixed(2)}`), r.status));
  await clock.tick(0);
  assert.equal(gate.state(ORIGIN).held, 1, 'A held');
  const b = gated(`${ORIGIN}/hung?i=2`).then((r) => (order.push(`b@${clock.now().toFixed(2)}`), r.status));
  // A probes at 20 and hangs; 100 ms on, its probe counts as failed: the next round (40 ms) starts, and B
  // probes at 160. A's own timeout (600 ms) ends its hung attempt at 620; it retries after its own backoff
  // (149.42 ms: the default schedule's full jitter, seeded), the target healthy by then.
  assert.equal(await clock.run(b), 200);
  assert.deepEqual(order, ['b@160.00']);
  assert.equal(await clock.run(a), 200);
  assert.deepEqual(sends(server), ['1@0', '1@20', '2@160', '1@769']);
  assert.deepEqual(order, ['b@160.00', 'a@769.42']);
  assert.equal(gate.stats().rounds, 2);
});

test('what the target says decides: a 404 is no failure; a failed POST starts a round but is not retried', async () => {
  const server = scriptedFetch((call) =>
    iOf(call.url) === 'missing' ? 404 : server.count <= 3 ? 503 : { status: 200, body: iOf(call.url) },
  );
  const gate = createGate(ROUNDS);
  const infos = [];
  const dones = [];
  const gated = withBackoff(server, { gate, maxAttempts: Infinity, onRetry: (i) => infos.push(i), onDone: (d) => dones.push(d) });
  // A 404 reaches the target: returned as is, the target stays healthy.
  assert.equal((await clock.run(gated(`${ORIGIN}/methods?i=missing`))).status, 404);
  assert.equal(gate.state(ORIGIN).state, 'closed');
  // A POST's 503 starts a round, but the POST itself is not retried.
  const post = await clock.run(gated(`${ORIGIN}/methods?i=post`, { method: 'POST', body: 'x' }));
  assert.equal(post.status, 503);
  assert.equal(dones.at(-1).reason, 'not-idempotent');
  assert.equal(gate.state(ORIGIN).state, 'open');
  // A GET arriving now is held (never sent during the round), then probes at 20: the 503 (second failure)
  // starts the next round (40 ms), whose probe at 60 succeeds.
  const res = await clock.run(gated(`${ORIGIN}/methods?i=get`));
  assert.equal(await res.text(), 'get');
  assert.deepEqual(
    infos.map((i) => [i.status, i.delayMs]),
    [[503, 40]],
  );
  assert.deepEqual(sends(server), ['missing@0', 'post@0', 'get@20', 'get@60']);
});

test('gate.run supervises any async work: one probe per round, released in order', async () => {
  const gate = createGate({ ...ROUNDS, concurrency: 4 });
  const sent = [];
  let maxInFlight = 0,
    inFlight = 0;
  let failures = 0;
  const work = (i) => async () => {
    sent.push(`${i}@${clock.now()}`);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((r) => setTimeout(r, 1));
    inFlight--;
    // Down for the 4 first tries and 3 probes.
    if (failures++ < 7) throw new Error('down');
    return i;
  };
  const out = await clock.run(Promise.all(Array.from({ length: 20 }, (_, i) => gate.run('db', work(i), { maxAttempts: Infinity }))));
  assert.deepEqual(
    out,
    Array.from({ length: 20 }, (_, i) => i),
  );
  // 4 first tries (the concurrency limit) fail at 1; then one probe per round (20, 40, 80, 80 ms, each 1 ms
  // long), then the 19 others released four at a time. (Once timers nest more than 5 deep, a task's 1 ms is
  // 4 ms: the HTML clamp the clock applies, as browsers do.)
  const st = gate.stats();
  assert.deepEqual([st.probes, st.rounds], [4, 4]);
  assert.deepEqual(sent.slice(0, 8), ['0@0', '1@0', '2@0', '3@0', '0@21', '0@62', '0@143', '0@227']);
  assert.deepEqual(
    sent.slice(8).map((s) => Number(s.split('@')[0])),
    Array.from({ length: 19 }, (_, i) => i + 1),
    'released in order',
  );
  assert.deepEqual(
    sent.slice(8).map((s) => Number(s.split('@')[1])),
    [231, 231, 231, 231, 235, 235, 235, 235, 239, 239, 239, 239, 243, 243, 243, 243, 247, 247, 247],
  );
  assert.equal(maxInFlight, 4);
  // A task's own limits: maxAttempts tries, then its last error.
  let tries = 0;
  await assert.rejects(
    clock.run(
      gate.run(
        'other',
        async () => {
          tries++;
          throw new Error('nope');
        },
        { maxAttempts: 3 },
      ),
    ),
    /nope/,
  );
  assert.equal(tries, 3);
  // A rejection that `retryable` says is not the target's fault is returned at once.
  const g2 = createGate({ ...ROUNDS, retryable: (e) => e.message !== 'bad input' });
  let n = 0;
  const t = clock.now();
  await assert.rejects(
    clock.run(
      g2.run('x', async () => {
        n++;
        throw new Error('bad input');
      }),
    ),
    /bad input/,
  );
  assert.deepEqual([n, clock.now() - t], [1, 0]);
  assert.equal(g2.state('x').state, 'closed');
  gate.free();
  g2.free();
});

test("fetchWithBackoff({ gate }) takes a Gate from 'wasm-backoff/gate'; bad options name the option", async () => {
  const server = scriptedFetch([503, { status: 200, body: 'ok' }]);
  const real = globalThis.fetch;
  globalThis.fetch = server; // (fetchWithBackoff sends through the global fetch)
  try {
    const shared = createGate({ consecutive: 1, jitter: 'none' });
    const res = await clock.run(fetchWithBackoff(`${ORIGIN}/shared`, undefined, { gate: shared }));
    assert.equal(await res.text(), 'ok');
    assert.equal(shared.stats().rounds, 1, 'the 503 started a round of the shared gate');
    assert.equal(server.calls[1].at - server.calls[0].at, 100, 'its retry waited the round (baseMs 100)');
    for (const [o, name, Err] of [
      [{ consecutive: 0 }, 'consecutive', RangeError],
      [{ consecutive: 2, failureRatio: 0.5 }, 'consecutive', RangeError],
      [{ failureRatio: 1.5 }, 'failureRatio', RangeError],
      [{ failureRatio: '0.5' }, 'failureRatio', TypeError],
      [{ failureRatio: 0.5, windowMs: 0 }, 'windowMs', RangeError],
      [{ failureRatio: 0.5, minCalls: 0.5 }, 'minCalls', RangeError],
      [{ mode: 'open' }, 'mode', RangeError],
      [{ limit: 'cubic' }, 'limit', RangeError],
      [{ throttleOn: [429, 1000] }, 'throttleOn', RangeError],
      [{ onStateChange: 'log' }, 'onStateChange', TypeError],
    ]) {
      assert.throws(
        () => createGate(o),
        (e) => e instanceof Err && e.message.startsWith(name),
        JSON.stringify(o),
      );
    }
    // The main entry carries no gate: `true` and gate options are refused by name.
    await assert.rejects(
      fetchWithBackoff(`${ORIGIN}/shared`, undefined, { gate: true }),
      (e) => e instanceof TypeError && /^gate must be a Gate/.test(e.message),
    );
    assert.throws(
      () => createGate({ maxQueued: -1 }),
      (e) => e instanceof RangeError && /^maxQueued/.test(e.message),
    );
    assert.throws(
      () => createGate({ maxQueued: '5' }),
      (e) => e instanceof TypeError && /^maxQueued/.test(e.message),
    );
    assert.throws(
      () => createGate({ overflow: 'drop' }),
      (e) => e instanceof RangeError && /^overflow/.test(e.message),
    );
    assert.throws(
      () => createGate({ concurrency: 0 }),
      (e) => e instanceof RangeError && /^concurrency/.test(e.message),
    );
    assert.throws(
      () => createGate({ probeTimeoutMs: 0 }),
      (e) => e instanceof RangeError && /^probeTimeoutMs/.test(e.message),
    );
    assert.throws(
      () => createGate({ key: 'origin' }),
      (e) => e instanceof TypeError && /^key/.test(e.message),
    );
    assert.throws(
      () => createGate({ baseMs: -1 }),
      (e) => e instanceof RangeError && /^baseMs/.test(e.message),
    );
    assert.throws(() => createGate(5), TypeError);
    assert.throws(
      () => withBackoff(server, { gate: 'yes' }),
      (e) => e instanceof TypeError && /^gate/.test(e.message),
    );
    await assert.rejects(fetchWithBackoff(`${ORIGIN}/shared`, undefined, { gate: { maxQueued: 10 } }), TypeError);
    assert.throws(
      () => createGate({ maxQueued: 1.5 }),
      (e) => e instanceof RangeError && /^maxQueued/.test(e.message),
    );
    const gate = createGate();
    await assert.rejects(gate.run('k', 'not a function'), (e) => e instanceof TypeError && /^task/.test(e.message));
    await assert.rejects(
      gate.run('k', async () => 1, { maxAttempts: 0 }),
      (e) => e instanceof RangeError && /^maxAttempts/.test(e.message),
    );
    await assert.rejects(
      gate.run('k', async () => 1, { signal: {} }),
      (e) => e instanceof TypeError && /^signal/.test(e.message),
    );
    assert.equal(server.count, 2, 'nothing refused was sent');
    shared.free();
    gate.free();
  } finally {
    globalThis.fetch = real;
  }
});

test('a throwing shouldRetry takes its call out of the gate; a throwing onRetry changes nothing', async () => {
  const bug = new Error('bug in a callback');
  // shouldRetry throws after the attempt: the call leaves, and with
  // concurrency 1 the next call is not blocked behind it.
  const s1 = scriptedFetch([503, { status: 200, body: 'ok' }]);
  const g1 = createGate({ ...ROUNDS, concurrency: 1 });
  let throws = true;
  const a = withBackoff(s1, {
    gate: g1,
    shouldRetry: () => {
      if (throws) throw bug;
    },
  });
  await assert.rejects(clock.run(a(`${ORIGIN}/throws-should`)), (e) => e === bug);
  assert.deepEqual(g1.state(ORIGIN), { state: 'closed', probing: false, held: 0, inFlight: 0, retryAfterMs: 0 });
  throws = false;
  assert.equal(await (await clock.run(a(`${ORIGIN}/throws-should`))).text(), 'ok');
  assert.equal(clock.now(), 0, 'not held');
  // onRetry is an observer: its error goes to the console, the call is held
  // and retried through the gate as if it had not thrown.
  const s2 = scriptedFetch([503, { status: 200, body: 'ok' }]);
  const g2 = createGate(ROUNDS);
  const b = withBackoff(s2, {
    gate: g2,
    onRetry: () => {
      throw bug;
    },
  });
  const logged = [];
  const error = console.error;
  console.error = (...args) => logged.push(args);
  try {
    assert.equal(await (await clock.run(b(`${ORIGIN}/throws-onretry`))).text(), 'ok');
  } finally {
    console.error = error;
  }
  assert.equal(logged.length, 1);
  assert.equal(logged[0][1], bug);
  assert.deepEqual(
    s2.calls.map((c) => c.at - T0),
    [0, 20],
    'retried when the round ended',
  );
  assert.deepEqual(g2.stats(), { evictions: 0, rounds: 1, probes: 1, timeouts: 0, held: 0, inFlight: 0, targets: 0 });
  g1.free();
  g2.free();
});

test('with concurrency, a hung call stops occupying its slot after probeTimeoutMs: the calls behind it go', async () => {
  const server = scriptedFetch((call, n) => (n === 0 ? { hang: true } : { status: 200, body: iOf(call.url) }));
  const gate = createGate({ concurrency: 1, probeTimeoutMs: 100, consecutive: 1 });
  const gated = withBackoff(server, { gate });
  const ac = new AbortController();
  const hung = gated(`${ORIGIN}/hung-slot?i=a`, { signal: ac.signal });
  hung.catch(() => {});
  await clock.tick(0);
  assert.equal(server.count, 1, 'A sent');
  const rest = Promise.all(['b', 'c'].map((i) => gated(`${ORIGIN}/hung-slot?i=${i}`).then((r) => r.text())));
  await clock.tick(0);
  assert.deepEqual(
    gate.state(ORIGIN),
    { state: 'closed', probing: false, held: 2, inFlight: 1, retryAfterMs: 0 },
    'held behind A (concurrency)',
  );
  await clock.tick(99);
  assert.equal(await settled(rest), false, 'still held 1 ms before the stall timeout');
  await clock.tick(1);
  assert.deepEqual(await clock.run(rest), ['b', 'c']);
  assert.deepEqual(sends(server), ['a@0', 'b@100', 'c@100'], 'B went when A stalled past probeTimeoutMs, C after it');
  // A still counts as in flight until it ends (here, aborted).
  assert.deepEqual(gate.state(ORIGIN), { state: 'closed', probing: false, held: 0, inFlight: 1, retryAfterMs: 0 });
  const reason = new Error('stop');
  ac.abort(reason);
  await assert.rejects(hung, (e) => e === reason);
  assert.equal(gate.stats().targets, 0);
  gate.free();
});

test('a Retry-After beyond maxRetryAfterMs returns the call at once, and still holds the target up to maxRetryAfterMs', async () => {
  const server = scriptedFetch([
    { status: 503, headers: { 'retry-after': '3600' } },
    { status: 200, body: 'ok' },
  ]);
  const gate = createGate({ ...ROUNDS, seed: 1 });
  const gated = withBackoff(server, { gate, maxRetryAfterMs: 600, seed: 1 });
  assert.equal((await clock.run(gated(`${ORIGIN}/long-retry-after`))).status, 503);
  assert.equal(clock.now(), 0, 'returned at once');
  assert.equal(server.count, 1, 'not retried');
  // The next call is held for the round the hint set: 600 ms (not 20) and the gate's jitter above it
  // (up to 10 %, seeded: 49 ms).
  const next = gated(`${ORIGIN}/long-retry-after`);
  await clock.tick(648);
  assert.equal(await settled(next), false, 'held 1 ms before the round ends');
  assert.equal(await (await clock.run(next)).text(), 'ok');
  assert.deepEqual(
    server.calls.map((c) => c.at - T0),
    [0, 649],
  );
  gate.free();
});

test('free() while calls are held or in flight: held calls reject, in-flight calls end with their own outcome, no timer spins', async () => {
  const server = scriptedFetch([503, { status: 503, delayMs: 60 }]);
  const gate = createGate({ ...ROUNDS, baseMs: 2000, maxDelayMs: 2000 });
  const reasons = [];
  const f = withBackoff(server, { gate, maxAttempts: 3, onDone: (d) => reasons.push(d.reason) });
  const first = f(`${ORIGIN}/freed`); // fails at once: a round starts, and the call is held
  first.catch(() => {});
  await clock.tick(0);
  assert.equal(gate.state(ORIGIN).held, 1, 'the first call held');
  let inFlight;
  const run = gate.run('other', () => new Promise((r) => (inFlight = r)));
  await clock.tick(0);
  assert.equal(typeof inFlight, 'function', 'the task started');
  assert.equal(clock.timers(), 1, "the round's wake-up");
  gate.free();
  assert.equal(await settled(first), true, 'at once');
  await assert.rejects(first, (e) => e instanceof TypeError && /freed/.test(e.message), 'a held call rejects');
  assert.deepEqual(reasons, ['freed'], "onDone says why: 'freed', not 'aborted'");
  assert.equal(clock.timers(), 0, 'no timer armed by a freed gate');
  inFlight('late'); // the in-flight task settles after the gate is gone
  assert.equal(await clock.run(run), 'late');
  await clock.tick(60_000);
  assert.equal(server.count, 1);
  assert.throws(() => gate.enter('x'), TypeError);
  // A hadoop schedule's attempt rule is the schedule's, not the gate's per-call limit.
  assert.ok(createGate({ preset: 'hadoop', maxAttempts: Infinity }));
});

test('a call let through after its deadline passed is not sent, and leaves no unhandled rejection', async () => {
  // A gate whose tickets pass 60 ms late (as a limiter's wait that ends just
  // after the call's deadline): the driver must check the deadline, not only
  // the caller's signal, before it sends.
  class Late extends Gate {
    enter(...args) {
      const t = super.enter(...args);
      const pass = t.pass.bind(t);
      t.pass = async () => {
        await pass();
        await new Promise((r) => setTimeout(r, 60));
      };
      return t;
    }
  }
  const seen = [];
  const onUnhandled = (r) => seen.push(r);
  process.on('unhandledRejection', onUnhandled);
  const server = scriptedFetch(200);
  const real = globalThis.fetch;
  globalThis.fetch = server; // (fetchWithBackoff sends through the global fetch)
  const gate = new Late({ consecutive: Infinity });
  try {
    const e = await clock.run(fetchWithBackoff(`${ORIGIN}/late`, undefined, { gate, maxElapsedMs: 30 }).catch((x) => x));
    assert.equal(e?.name, 'TimeoutError');
    assert.equal(clock.now(), 60, 'when the ticket passed, past the deadline (30)');
    await clock.tick(1000);
    await new Promise((r) => setImmediate(r)); // (a real turn: Node reports unhandled rejections after it)
  } finally {
    globalThis.fetch = real;
    process.off('unhandledRejection', onUnhandled);
    gate.free();
  }
  assert.equal(server.count, 0, 'nothing sent');
  assert.deepEqual(seen.map(String), []);
});

test('record(key, ok, failed): outcomes of calls sent elsewhere count against the threshold in one batch', () => {
  const gate = createGate({ consecutive: 2000 });
  // A batch larger than a replay could count (a fleet's burst): 5 000 failures trip a threshold of 2 000.
  gate.record('fleet', 10, 1999);
  assert.equal(gate.state('fleet').state, 'closed', 'below the threshold');
  gate.record('fleet', 0, 5000);
  assert.equal(gate.state('fleet').state, 'open');
  assert.equal(gate.stats().rounds, 1);
  // Successes break a run; bad counts count as nothing.
  gate.record('other', 0, 1999);
  gate.record('other', 1, 0);
  gate.record('other', -5, Number.NaN);
  gate.record('other', 0, 1999);
  assert.equal(gate.state('other').state, 'closed');
  gate.free();
});

test('restore(): a round longer than this gate could start is cut to its longest (maxDelayMs, or a minute), not days', () => {
  const gate = createGate({ baseMs: 100, maxDelayMs: 1000, jitter: 'none' });
  // A state as toJSON() makes it (a tripped target), its round pushed 20 days out.
  gate.record('t', 0, 1);
  const saved = gate.toJSON();
  const now = saved.savedAt;
  const day = 86_400_000;
  const target = { ...saved.targets.t, state: 'open', untilMs: now + 20 * day };
  gate.release('t');
  gate.restore({ version: 1, savedAt: now, targets: { t: target } });
  assert.equal(gate.state('t').state, 'open');
  const until = gate.toJSON().targets.t.untilMs;
  assert.ok(until - now <= 60_000 + 5, `the round ends ${until - now} ms after it was saved`);
  gate.free();
});

test("toJSON() keeps a target keyed '__proto__', and restore() takes it up", () => {
  const gate = createGate({ consecutive: 1 });
  gate.record('__proto__', 0, 1);
  const text = JSON.stringify(gate);
  assert.ok(Object.hasOwn(JSON.parse(text).targets, '__proto__'), text);
  const other = createGate({ consecutive: 1 });
  other.restore(JSON.parse(text));
  assert.equal(other.state('__proto__').state, 'open');
  gate.free();
  other.free();
});

// ---- the runtime: Node's own timers, Node's fetch and the real scripted server, real time

test("a held call whose deadline is beyond the longest timer keeps waiting when that timer fires (Node's timers)", async () => {
  // Real time: the subject is Node's setTimeout, which fires a delay past 2^31 − 1 ms at once (1 ms)
  // where the virtual clock wraps it as browsers do; the gate must clamp B's deadline timer to the
  // longest one and, fired early, re-arm it rather than reject B.
  clock.off(); // (real time from here)
  const before = timers();
  // (a round of 1 s: B must find A's round still running, or B would go as its probe)
  const gate = createGate({ ...ROUNDS, baseMs: 1000, maxDelayMs: 1000 });
  let n = 0;
  const a = gate.run('far', async () => {
    if (n++ === 0) throw new Error('down');
    return 'a';
  });
  await until('A held', () => gate.state('far').held === 1, 1000, 2);
  // B's deadline (40 days) is past the longest timer (24.8 days): its timer is
  // clamped; made to fire at once here, it must re-arm, not reject B.
  const real = globalThis.setTimeout;
  const delays = [];
  globalThis.setTimeout = (f, ms, ...x) => (delays.push(ms), real(f, 1, ...x));
  let b;
  try {
    b = gate.run('far', async () => 'b', { maxElapsedMs: 40 * 86400e3 });
  } finally {
    globalThis.setTimeout = real;
  }
  assert.deepEqual(delays, [2147483647]);
  assert.deepEqual(await Promise.all([a, b]), ['a', 'b']);
  assert.equal(gate.stats().timeouts, 0);
  assert.equal(timers(), before, 'a timer was left behind');
  gate.free();
});

test("Node's fetch, real server, real time: an outage under 20 calls, one probe per round, all released in order (outcomes and order only)", async () => {
  // Real time: Node's fetch, sockets and timers with the package entry are the subject; outages are
  // counted in requests and no window is asserted, so a loaded machine cannot shift them.
  clock.off(); // (real time from here)
  const srv = await startScripted();
  try {
    const before = timers();
    let n = 0;
    srv.script('/outage', (req) =>
      n++ < 23 ? { status: 503 } : { status: 200, body: new URL(req.url, 'http://x').searchParams.get('i') },
    );
    const gate = pkgCreateGate(ROUNDS);
    const calls = [];
    const send = (input, init) => (calls.push(Number(new URL(String(input)).searchParams.get('i'))), fetch(input, init));
    const gated = pkgWithBackoff(send, { gate, maxAttempts: Infinity });
    const res = await Promise.all(Array.from({ length: 20 }, (_, i) => gated(`${srv.url}/outage?i=${i}`)));
    assert.deepEqual(
      await Promise.all(res.map((r) => r.text())),
      res.map((_, i) => String(i)),
    );
    const st = gate.stats();
    assert.equal(st.rounds, st.probes, 'each round sent exactly one probe');
    assert.deepEqual(
      calls.slice(20),
      [...Array(st.probes).fill(0), ...Array.from({ length: 19 }, (_, i) => i + 1)],
      'the oldest probes, the rest in order',
    );
    assert.equal(srv.count('/outage'), 20 + st.probes + 19);
    gate.free();
    assert.equal(timers(), before, 'a timer was left behind');
  } finally {
    await srv.close();
  }
});
