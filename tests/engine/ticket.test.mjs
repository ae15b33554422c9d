// A gate's lane (the Ticket of js/gate/ticket.js: pass, after, cancel) under the
// one loop, with a real Gate (the core's decisions, from the full module js/load/dev.js loads)
// on fake time: rounds held and released in order, a held call that runs
// out of time or attempts (GateTimeoutError), fail-fast (BrokenCircuitError),
// an abort of a held call; nothing left pending afterwards. Then what an
// outside harness found (issue 34): held calls behind a probe cut by its
// deadline, a request fetch refuses to send, a fleet's stale failure.
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createGate, BrokenCircuitError, GateTimeoutError } from '../../js/gate/index.js';
import { withBackoff } from '../../js/fetch/index.js';
import { sharedGate } from '../../js/fleet/shared-gate.js';
import { GateHub } from '../../js/fleet/hub.js';
import { END_REASONS } from '../../js/gen/policy.js';
import { GAVE_UP } from '../../js/policy.js';
import { ENDED, OWN_VETOED } from '../../js/gen/boundary.js';
import { already, install, settled } from './clock.mjs';

// What Node's fetch rejects with for a request it refuses to send (undici
// refuses `Expect: 100-continue` before connecting): taken before any test
// installs the fake clock.
const refusal = await fetch('http://127.0.0.1:59999/', { headers: { expect: '100-continue' } }).catch((e) => e);

/** @type {ReturnType<typeof install>} */
let clock;
beforeEach(() => (clock = install()));
afterEach(() => clock.off());

// No jitter, so the rounds are exactly 100, 200, 400, 400, … ms; the circuit
// opens at the first failure.
const ROUNDS = { baseMs: 100, maxDelayMs: 400, jitter: 'none', consecutive: 1 };

/**
 * A target that is down until `upAt` (fake ms): a task for `gate.run` that
 * logs `name@ms` per attempt and fails while the target is down.
 */
function target(upAt = Infinity) {
  const log = [];
  const down = () => clock.now() < upAt;
  const task = (name) => () => {
    log.push(`${name}@${clock.now()}`);
    if (down()) return Promise.reject(new Error(`${name}: down`));
    return Promise.resolve(name);
  };
  return { log, task, up: (ms) => (upAt = ms) };
}

/** Catches `p` now (so it is never an unhandled rejection), to be checked later. */
const caught = (p) => {
  p.catch(() => {});
  return p;
};

test('a failure starts a round: calls are held, then released in order, one probe first', async () => {
  const gate = createGate(ROUNDS);
  const t = target(100);
  const a = caught(gate.run('k', t.task('a')));
  await clock.tick(0);
  assert.deepEqual(t.log, ['a@0']);
  assert.deepEqual(
    gate.state('k'),
    { state: 'open', probing: false, held: 1, inFlight: 0, retryAfterMs: 100 },
    'a failed: it is held for the round',
  );
  await clock.tick(10);
  const b = caught(gate.run('k', t.task('b')));
  const c = caught(gate.run('k', t.task('c')));
  await clock.tick(0);
  assert.deepEqual(
    gate.state('k'),
    { state: 'open', probing: false, held: 3, inFlight: 0, retryAfterMs: 90 },
    'b and c arrive during the round: held',
  );
  await clock.to(99);
  assert.deepEqual(t.log, ['a@0'], 'nothing is sent during the round');
  await clock.to(100);
  assert.deepEqual(await already(Promise.all([a, b, c]), 'a, b and c at 100'), ['a', 'b', 'c']);
  assert.deepEqual(t.log, ['a@0', 'a@100', 'b@100', 'c@100'], 'a probes at the round’s end; b and c follow it in order');
  assert.deepEqual(gate.state('k'), { state: 'closed', probing: false, held: 0, inFlight: 0, retryAfterMs: 0 });
  assert.equal(clock.timers(), 0, 'no timer left');
  gate.free();
});

test('a failed probe starts a longer round; the held calls wait it out', async () => {
  const gate = createGate(ROUNDS);
  const t = target(300);
  const a = caught(gate.run('k', t.task('a'), { maxAttempts: 10 }));
  await clock.tick(0);
  const b = caught(gate.run('k', t.task('b'), { maxAttempts: 10 }));
  assert.deepEqual(await clock.run(Promise.all([a, b])), ['a', 'b']);
  // rounds: 0 → 100 (probe fails) → 300 (200 ms; probe succeeds, b follows)
  assert.deepEqual(t.log, ['a@0', 'a@100', 'a@300', 'b@300']);
  assert.equal(clock.timers(), 0);
  gate.free();
});

test('a held call whose deadline falls inside the next round ends with GateTimeoutError (deadline), unsent', async () => {
  const gate = createGate(ROUNDS);
  const t = target();
  const a = caught(gate.run('k', t.task('a'), { maxAttempts: Infinity }));
  await clock.tick(0);
  const b = caught(gate.run('k', t.task('b'), { maxElapsedMs: 150 }));
  await clock.tick(0);
  assert.equal(gate.state('k').held, 2, 'b can wait for the round at 100: held');
  await clock.to(99);
  assert.equal(await settled(b), false);
  await clock.to(100); // a's probe fails: the next round ends at 300, past b's deadline (150)
  await assert.rejects(already(b, 'b at 100'), (e) => e instanceof GateTimeoutError && e.reason === 'deadline' && e.key === 'k');
  assert.equal(clock.now(), 100, 'b is let go as soon as the round that would outlast it starts');
  assert.deepEqual(t.log, ['a@0', 'a@100'], 'b was never sent');
  assert.equal(gate.state('k').held, 1, 'a is still held');
  gate.free();
  await assert.rejects(already(a, 'a once the gate is freed'), /freed/);
  assert.equal(clock.timers(), 0, 'freeing the gate leaves no timer');
});

test('a held call that runs out of attempts (each round it waits through costs one) ends with GateTimeoutError (exhausted)', async () => {
  const gate = createGate(ROUNDS);
  const t = target();
  const a = caught(gate.run('k', t.task('a'), { maxAttempts: Infinity }));
  await clock.tick(0);
  const b = caught(gate.run('k', t.task('b'), { maxAttempts: 2 }));
  await clock.to(100); // round 2 starts: b has spent 1 of 2
  assert.equal(await settled(b), false);
  await clock.to(300); // round 3 starts: b has spent its 2
  await assert.rejects(already(b, 'b at 300'), (e) => e instanceof GateTimeoutError && e.reason === 'exhausted');
  assert.deepEqual(t.log, ['a@0', 'a@100', 'a@300'], 'b was never sent');
  gate.free();
  await assert.rejects(already(a, 'a once the gate is freed'), /freed/);
  assert.equal(clock.timers(), 0);
});

test("fail-fast: while the circuit is open a call is refused at once with BrokenCircuitError, its retryAfterMs the round's rest", async () => {
  const gate = createGate({ ...ROUNDS, mode: 'fail-fast' });
  const t = target(100);
  const e1 = new Error('a: down');
  // a fails: the circuit opens, and a's own retry is refused too (the call ends with its error)
  const a = caught(gate.run('k', () => (t.log.push(`a@${clock.now()}`), Promise.reject(e1)), { maxAttempts: 5 }));
  await assert.rejects(already(a, 'a at 0'), (e) => e === e1);
  await clock.to(30);
  const b = caught(gate.run('k', t.task('b')));
  await assert.rejects(already(b, 'b at once'), (e) => e instanceof BrokenCircuitError && e.retryAfterMs === 70 && e.isolated === false);
  assert.deepEqual(t.log, ['a@0'], 'b was never sent');
  await clock.to(100);
  assert.equal(await clock.run(gate.run('k', t.task('c'))), 'c', 'after the round a call probes, and passes');
  assert.deepEqual(t.log, ['a@0', 'c@100']);
  assert.equal(clock.timers(), 0);
  gate.free();
});

test('an abort of a held call rejects with its reason at once and leaves the others held', async () => {
  const gate = createGate(ROUNDS);
  const t = target(100);
  const a = caught(gate.run('k', t.task('a')));
  await clock.tick(0);
  const ac = new AbortController();
  const b = caught(gate.run('k', t.task('b'), { signal: ac.signal }));
  await clock.tick(0);
  assert.equal(gate.state('k').held, 2);
  const reason = new Error('stop');
  ac.abort(reason);
  await assert.rejects(already(b, 'b at once'), (e) => e === reason);
  assert.equal(gate.state('k').held, 1, 'b left the queue');
  assert.equal(await clock.run(a), 'a');
  assert.deepEqual(t.log, ['a@0', 'a@100']);
  assert.equal(clock.timers(), 0);
  gate.free();
});

test('a retryable that throws: the target is told of the failure, the call rejects with what it threw (hook-error)', async () => {
  const boom = new Error('retryable threw');
  const gate = createGate({
    ...ROUNDS,
    retryable: () => {
      throw boom;
    },
  });
  const t = target();
  await assert.rejects(clock.run(gate.run('k', t.task('a'))), (e) => e === boom);
  assert.equal(gate.state('k').state, 'open', 'the failure counted');
  assert.deepEqual(t.log, ['a@0']);
  gate.free();
  assert.equal(clock.timers(), 0);
});

test('a gated fetch: held through the round, released in order; onDone says how each ended', async () => {
  const gate = createGate(ROUNDS);
  const sent = [];
  const send = async (input) => {
    sent.push(`${new URL(input).pathname}@${clock.now()}`);
    const down = new URL(input).host === 'a.test' && clock.now() < 100;
    return new Response(null, { status: down ? 503 : 200 });
  };
  const done = [];
  const f = withBackoff(send, { gate, maxAttempts: 5, onDone: (i) => done.push(i) });
  const a = caught(f('https://a.test/a'));
  await clock.tick(0);
  assert.deepEqual(
    gate.state('https://a.test'),
    { state: 'open', probing: false, held: 1, inFlight: 0, retryAfterMs: 100 },
    'keyed by origin',
  );
  const b = caught(f('https://a.test/b'));
  const other = caught(f('https://b.test/x'));
  const [ra, rb, rx] = await clock.run(Promise.all([a, b, other]));
  assert.deepEqual([ra.status, rb.status, rx.status], [200, 200, 200]);
  assert.deepEqual(sent, ['/a@0', '/x@0', '/a@100', '/b@100'], 'another origin is not held');
  assert.deepEqual(
    done.map((d) => [d.attempts, d.reason, d.elapsedMs]),
    [
      [1, 'success', 0],
      [2, 'success', 100],
      [1, 'success', 100],
    ],
  );
  assert.equal(clock.timers(), 0);
  gate.free();
});

test('a held call leaves no listener on its signal once released, or once out', async () => {
  const gate = createGate(ROUNDS);
  const t = target(100);
  const ac = new AbortController();
  const a = caught(gate.run('k', t.task('a'), { signal: ac.signal }));
  await clock.tick(0);
  const b = caught(gate.run('k', t.task('b'), { signal: ac.signal, maxElapsedMs: 50 }));
  await clock.tick(0);
  assert.equal(gate.state('k').held, 1, 'b cannot wait for the round (its deadline is before): out at once');
  await assert.rejects(already(b, 'b at once'), (e) => e instanceof GateTimeoutError && e.reason === 'deadline');
  assert.equal(getEventListeners(ac.signal, 'abort').length, 1, "a's, while it is held");
  assert.equal(await clock.run(a), 'a');
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0, 'none once it is released');
  assert.equal(clock.timers(), 0);
  gate.free();
});

test("a round's end answer is the policy's reason; a delay hook that gave up crosses as the core reads it", () => {
  assert.equal(END_REASONS[ENDED - ENDED], 'success', 'ENDED minus the wire order');
  assert.equal(OWN_VETOED, GAVE_UP, 'what Call.next answers when the delay hook gave up');
});

/** A fetch to a target that answers 503 to its first request, then each request after `slowMs`. */
function slowTarget(slowMs) {
  const sent = [];
  const send = (input, init) => {
    sent.push(`${new URL(input).search.slice(1)}@${clock.now()}`);
    const status = sent.length === 1 ? 503 : 200;
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve(new Response(null, { status })), sent.length === 1 ? 0 : slowMs);
      init?.signal?.addEventListener('abort', () => (clearTimeout(t), reject(init.signal.reason)), { once: true });
    });
  };
  return { sent, send };
}

test('20 held calls behind a slow probe, maxElapsedMs 300–490: the probe cut by its deadline starts the next round, the others end with GateTimeoutError', async () => {
  const gate = createGate(ROUNDS);
  const t = slowTarget(250);
  // The first call fails at 0 and gives up (maxAttempts 1): the round ends at 100.
  const first = caught(withBackoff(t.send, { gate, maxAttempts: 1 })('https://a.test/?first'));
  await clock.tick(0);
  const calls = Array.from({ length: 20 }, (_, i) =>
    caught(withBackoff(t.send, { gate, maxAttempts: 5, maxElapsedMs: 300 + 10 * i })(`https://a.test/?${i}`)),
  );
  await clock.tick(0);
  assert.equal(gate.state('https://a.test').held, 20);
  const out = await clock.run(Promise.allSettled([first, ...calls]));
  assert.equal(out[0].value.status, 503);
  // Call 0 probes at 100, and its deadline (300) cuts it in flight: its own TimeoutError, as without a gate.
  assert.equal(out[1].reason?.name, 'TimeoutError');
  // No answer in 200 ms: the probe timed out, the next round ends at 500, past every other deadline.
  for (const [i, r] of out.slice(2).entries()) {
    assert.ok(r.reason instanceof GateTimeoutError && r.reason.reason === 'deadline', `call ${i + 1}: ${r.reason}`);
  }
  assert.deepEqual(t.sent, ['first@0', '0@100'], 'the held calls were never sent one after another into the silence');
  assert.equal(clock.now(), 300, 'they are let go when the round that outlasts them starts');
  const { rounds, timeouts } = gate.stats();
  assert.deepEqual({ rounds, timeouts }, { rounds: 2, timeouts: 19 });
  gate.free();
  assert.equal(clock.timers(), 0);
});

test('a request fetch refuses to send (Expect: 100-continue) never counts against its target, through gate.run or a gated fetch', async () => {
  assert.equal(refusal?.cause?.code, 'UND_ERR_NOT_SUPPORTED', 'what undici answers');
  const gate = createGate({ ...ROUNDS, key: () => 'k' });
  let tries = 0;
  const refused = () => (tries++, Promise.reject(refusal));
  await assert.rejects(clock.run(gate.run('k', refused, { maxAttempts: 5 })), (e) => e === refusal);
  assert.equal(tries, 1, 'not retried: it would be refused again');
  assert.equal(gate.state('k').state, 'closed', 'gate.run: the target is not tripped by a request never sent');
  let done;
  const f = withBackoff(refused, { gate, onDone: (d) => (done = d) });
  await assert.rejects(clock.run(f('https://a.test/', { headers: { expect: '100-continue' } })), (e) => e === refusal);
  assert.deepEqual([tries, done.reason, gate.state('k').state], [2, 'not-retryable', 'closed'], 'a gated fetch');
  assert.equal(gate.stats().rounds, 0);
  gate.free();
});

/** A namespace of GateHubs in this process, answering at once (the bench's fakeNamespace, without its RPC time). */
function hubs() {
  const all = new Map();
  const get = (name) => {
    if (!all.has(name)) all.set(name, new GateHub());
    const hub = all.get(name);
    const call =
      (m) =>
      async (...args) =>
        structuredClone(await hub[m](...structuredClone(args)));
    return Object.fromEntries(['report', 'admit', 'probed', 'lease'].map((m) => [m, call(m)]));
  };
  return { all, namespace: { idFromName: (name) => name, get } };
}

test('a fleet: a failure of an attempt sent before the round, answered after the probe closed the circuit, starts no second round', async () => {
  const { all, namespace } = hubs();
  const gate = sharedGate(namespace, { ...ROUNDS, key: () => 'k' });
  const log = [];
  const task = (name, ms, ok) => () => {
    log.push(`${name}@${clock.now()}`);
    return new Promise((resolve, reject) => setTimeout(() => (ok ? resolve(name) : reject(new Error(`${name}: 503`))), ms));
  };
  // a and b go out while the target is healthy; a fails at once and the fleet's circuit opens (until 100).
  const a = caught(gate.run('k', task('a', 0, false), { maxAttempts: 1 }));
  const b = caught(gate.run('k', task('b', 300, false), { maxAttempts: 1 }));
  await clock.tick(0);
  await assert.rejects(already(a, 'a at 0'), /a: 503/);
  assert.equal(gate.state('k').state, 'open', 'the isolate follows the object');
  // After the round, c probes and succeeds: the circuit closes, fleet-wide.
  await clock.to(100);
  assert.equal(await clock.run(gate.run('k', task('c', 10, true))), 'c');
  const hub = all.get('k');
  assert.equal(hub.gate.state('k').state, 'closed');
  // b, sent before the round, fails at 300: stale news, which the isolate does not report.
  await assert.rejects(clock.run(b), /b: 503/);
  await clock.run(gate.flush());
  assert.deepEqual(log, ['a@0', 'b@0', 'c@100']);
  assert.equal(hub.gate.state('k').state, 'closed', 'no second round');
  assert.equal(hub.gate.stats().rounds, 1);
  assert.equal(gate.state('k').state, 'closed');
  gate.free();
  hub.gate.free();
});

test('fail-fast, a gated fetch: the call that trips returns its last response; then refused until the probe, whose wait is whole ms', async () => {
  const statuses = [503, 503, 200];
  const sent = [];
  const send = async () => (sent.push(clock.now()), new Response(null, { status: statuses[sent.length - 1] }));
  // (jitter: the round ends at a fraction of a ms: 1000 ms with full jitter)
  const gate = createGate({ baseMs: 1000, consecutive: 2, mode: 'fail-fast', seed: 7, key: () => 'ff' });
  const f = withBackoff(send, { baseMs: 1, jitter: 'none', gate });
  const reasons = [];
  const res = await clock.run(f('https://a.test/', undefined, { onDone: (i) => reasons.push(i.reason) }));
  assert.equal(res.status, 503, 'the call that tripped the circuit returns its last response');
  assert.deepEqual(reasons, ['circuit-open']);
  await clock.tick(1);
  const err = await clock.run(f('https://a.test/').catch((e) => e));
  assert.ok(err instanceof BrokenCircuitError && err.key === 'ff' && !err.isolated, String(err));
  // Whole ms, rounded up (it was fractional: 608.64 waited as 608 in a browser was refused again, for 0.64).
  assert.ok(Number.isInteger(err.retryAfterMs) && err.retryAfterMs > 0, `retryAfterMs ${err.retryAfterMs}`);
  assert.equal(sent.length, 2, 'nothing sent while open');
  await clock.tick(err.retryAfterMs);
  assert.equal((await clock.run(f('https://a.test/'))).status, 200, 'exactly that long after, the round is over: this call probes');
  assert.equal(gate.state('ff').state, 'closed');
  assert.equal(clock.timers(), 0);
  gate.free();
});

test('fail-fast, gate.run: retryAfterMs is whole ms, rounded up — a call made exactly that long after probes', async () => {
  // Full jitter: the round ends at a fraction of a ms.
  const gate = createGate({ baseMs: 1000, consecutive: 1, mode: 'fail-fast', seed: 7, key: () => 'k' });
  await assert.rejects(clock.run(gate.run('k', () => Promise.reject(new Error('down')), { maxAttempts: 1 })), /down/);
  await clock.tick(1);
  const e = await clock.run(gate.run('k', () => Promise.resolve('sent')).catch((x) => x));
  assert.ok(e instanceof BrokenCircuitError, String(e));
  assert.ok(Number.isInteger(e.retryAfterMs) && e.retryAfterMs > 0, `retryAfterMs ${e.retryAfterMs}`);
  await clock.tick(e.retryAfterMs);
  assert.equal(await clock.run(gate.run('k', () => Promise.resolve('probe'))), 'probe', 'the round is over: this call probes');
  assert.equal(gate.state('k').state, 'closed');
  gate.free();
});

test("limit: 'adaptive' — the limiter's throttling statuses are the policy's (429, 503, 529) unless throttleOn names others", async () => {
  const run = async (throttleOn) => {
    const gate = createGate({ limit: 'adaptive', consecutive: Infinity, key: () => 'k', ...(throttleOn && { throttleOn }) });
    const sent = [];
    let status = 200;
    const f = withBackoff(async () => (sent.push(clock.now()), new Response(null, { status })), { gate, maxAttempts: 1 });
    for (let i = 0; i < 10; i++) await clock.run(f('https://a.test/'), 1000);
    status = 503; // (no named wait)
    await clock.run(f('https://a.test/'), 1000);
    status = 200;
    sent.length = 0;
    await clock.run(Promise.all(Array.from({ length: 5 }, () => f('https://a.test/'))));
    gate.free();
    return sent;
  };
  const paced = await run();
  assert.ok(paced.at(-1) > paced[0], `a 503 cut the rate: five calls paced, sent at ${paced}`);
  const free = await run([429]);
  assert.equal(new Set(free).size, 1, `throttleOn: [429]: a 503 without a named wait cuts nothing (sent at ${free})`);
});

test('below the threshold, a call whose own next wait would end past its deadline returns its last response, as without a gate', async () => {
  const gate = createGate({ consecutive: 5 });
  const send = async () => new Response(null, { status: 503 });
  for (const g of [gate, undefined]) {
    let done;
    const f = withBackoff(send, { gate: g, baseMs: 100, throttleBaseMs: 100, jitter: 'none', maxElapsedMs: 50, onDone: (d) => (done = d) });
    const res = await clock.run(f('https://a.test/'));
    assert.equal(res.status, 503, g ? 'through the gate' : 'without one');
    assert.deepEqual([done.attempts, done.reason], [1, 'deadline']);
  }
  assert.equal(gate.state('https://a.test').state, 'closed');
  gate.free();
  assert.equal(clock.timers(), 0);
});
