// The backoff gate in Node against the real scripted server on 127.0.0.1:
// an origin down for a while under 50 concurrent calls (one probe per
// round, everything released in order), the bounded queue under both
// overflow policies, per-call limits, aborts, and the generic `run`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { withBackoff, fetchWithBackoff } from 'wasm-backoff';
import { createGate, Gate, GateOverflowError, GateTimeoutError } from 'wasm-backoff/gate';
import { startScripted } from '../server/scripted.mjs';
import { until, timers, sleep } from '../support/wait.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

let unique = 0;
const path = (name) => `/${name}-${unique++}`;
// No jitter, so the rounds are exactly 20, 40, 80, 80, … ms (the outage test: 60, 120, 240, 240).
// (consecutive: 1: these scenarios test the gate's rounds, which start at the first failure)
const ROUNDS = { baseMs: 20, maxDelayMs: 80, jitter: 'none', consecutive: 1 };

/** A fetch that records the `i` of each call, in call order. */
function recording() {
  const calls = [];
  const f = (input, init) => {
    calls.push(Number(new URL(String(input)).searchParams.get('i')));
    return fetch(input, init);
  };
  return { calls, f };
}

/**
 * A path whose script is down (503) while `down(n)` (n = requests so far),
 * logging each request with its time and state. Outages are counted in
 * requests, not milliseconds, so a loaded machine cannot shift them.
 */
function outage(p, down) {
  const log = [];
  srv.script(p, (req) => {
    const i = Number(new URL(req.url, 'http://x').searchParams.get('i'));
    const d = down(log.length);
    log.push({ i, down: d, at: performance.now() });
    return d ? { status: 503 } : { status: 200, body: String(i) };
  });
  return log;
}

test('50 calls in flight, origin down for a while: one probe per round, all succeed in order', async () => {
  const before = timers();
  const p = path('outage');
  // Down for the 50 first tries and 4 more requests: the probes of 4 rounds
  // if the gate is right (more rounds would mean extra requests per round).
  const log = outage(p, (n) => n < 54);
  // (rounds of 60, 120, 240 ms: the first leaves a loaded machine's late first tries time to arrive while
  // the origin is still down, which the count below assumes)
  const gate = createGate({ ...ROUNDS, baseMs: 60, maxDelayMs: 240 });
  const { calls, f } = recording();
  const gated = withBackoff(f, { gate, maxAttempts: Infinity });
  const res = await Promise.all(Array.from({ length: 50 }, (_, i) => gated(`${srv.url}${p}?i=${i}`)));
  assert.deepEqual(
    await Promise.all(res.map((r) => r.text())),
    res.map((_, i) => String(i)),
  );
  assert.ok(res.every((r) => r.status === 200));

  const st = gate.stats();
  const downs = log.filter((r) => r.down);
  const probesWhileDown = downs.length - 50;
  // The 50 first tries fail together: one round, not 50; then exactly one
  // probe per round while down (a gate sending more per round would have
  // used up the outage in fewer rounds), and one more that succeeds.
  assert.equal(st.rounds, 1 + probesWhileDown, 'one round for the first tries, one per failed probe');
  assert.equal(st.probes, probesWhileDown + 1);
  assert.equal(st.rounds, st.probes, 'each round sent exactly one probe');
  assert.equal(log.length, 50 + st.probes + 49, 'after recovery, each held call is sent once');
  // The probe is always the oldest held call (i = 0); probes are spaced by
  // the schedule (60, 120, 240, 240 ms …) and never overlap. (Under load, some
  // first tries may reach the server after the first probe.)
  const probeTimes = downs
    .filter((r) => r.i === 0)
    .slice(1)
    .map((r) => r.at);
  assert.equal(probeTimes.length, probesWhileDown, 'every probe was the oldest held call');
  const waits = [60, 120, 240];
  for (let k = 1; k < probeTimes.length; k++) {
    const gap = probeTimes[k] - probeTimes[k - 1];
    assert.ok(gap >= (waits[k] ?? 240) - 2, `probe ${k} came ${gap.toFixed(1)} ms after the previous one`);
  }
  // The gate sends in arrival order: the oldest held call probes every round,
  // then the rest are released in order.
  const after50 = calls.slice(50);
  assert.deepEqual(after50, [...Array(st.probes).fill(0), ...Array.from({ length: 49 }, (_, i) => i + 1)]);
  assert.deepEqual(gate.stats(), { evictions: 0, rounds: st.rounds, probes: st.probes, timeouts: 0, held: 0, inFlight: 0, targets: 0 });
  assert.equal(timers(), before, 'a timer was left behind');
});

test('without the gate, the same outage sees every call retry on its own', async () => {
  const p = path('nogate');
  const log = outage(p, (n) => n < 60);
  const plain = withBackoff(fetch, { ...ROUNDS, maxAttempts: Infinity });
  await Promise.all(Array.from({ length: 20 }, (_, i) => plain(`${srv.url}${p}?i=${i}`)));
  // The 40 requests after the first tries come from many calls, not one probe.
  const retriers = new Set(log.slice(20, 60).map((r) => r.i));
  assert.ok(retriers.size >= 10, `retries came from ${retriers.size} calls`);
});

async function overflowRun(overflow) {
  const p = path(`overflow-${overflow}`);
  let down = true;
  // The first failure asks for a 1 s round, so that it cannot end (and call
  // 0 probe) before the queue is checked, however loaded the machine.
  srv.script(p, (req, n) =>
    down
      ? { status: 503, headers: n ? {} : { 'retry-after': '1' } }
      : { status: 200, body: new URL(req.url, 'http://x').searchParams.get('i') },
  );
  const gate = createGate({ ...ROUNDS, baseMs: 30, maxQueued: 5, overflow });
  const gated = withBackoff(fetch, { gate, maxAttempts: Infinity });
  const results = [];
  const call = (i) =>
    gated(`${srv.url}${p}?i=${i}`).then(
      (r) => r.text().then((t) => (results[i] = t)),
      (e) => (results[i] = e),
    );
  const all = [call(0)];
  await until('the first failure', () => gate.state(srv.url).state === 'open' && gate.state(srv.url).held === 1, 1000, 2);
  for (let i = 1; i <= 10; i++) all.push(call(i));
  assert.equal(gate.state(srv.url).held, 5, 'the queue is bounded');
  down = false;
  await Promise.all(all);
  return { results, stats: gate.stats() };
}

test("maxQueued with overflow 'evict-oldest': the oldest are evicted, counted, and reject with GateOverflowError", async () => {
  const { results, stats } = await overflowRun('evict-oldest');
  const evicted = results.map((r, i) => (r instanceof Error ? i : -1)).filter((i) => i >= 0);
  assert.deepEqual(evicted, [0, 1, 2, 3, 4, 5]);
  for (const i of evicted) {
    assert.ok(results[i] instanceof GateOverflowError);
    assert.equal(results[i].name, 'GateOverflowError');
  }
  assert.deepEqual(results.slice(6), ['6', '7', '8', '9', '10']);
  assert.equal(stats.evictions, 6);
});

test("maxQueued with overflow 'reject-newest': the newest are refused, counted", async () => {
  const { results, stats } = await overflowRun('reject-newest');
  assert.deepEqual(results.slice(0, 5), ['0', '1', '2', '3', '4']);
  assert.ok(results.slice(5).every((r) => r instanceof GateOverflowError && r.name === 'GateOverflowError'));
  assert.equal(stats.evictions, 6);
});

test('per-call limits: maxAttempts counts the failed rounds a call waited through; maxElapsedMs bounds the wait', async () => {
  const before = timers();
  const p = path('limits');
  const log = outage(p, () => true);
  const gate = createGate(ROUNDS);
  let doneA;
  const a = withBackoff(fetch, { gate, maxAttempts: 4, onDone: (d) => (doneA = d) })(`${srv.url}${p}?i=1`);
  await until('A held', () => gate.state(srv.url).held === 1, 1000, 2);
  // B arrives during the backoff: it is never sent while A probes, and gives
  // up after two failed rounds (its two attempts, made by proxy).
  const b = withBackoff(fetch, { gate, maxAttempts: 2 })(`${srv.url}${p}?i=2`);
  // C may wait 50 ms: the rounds at 20, then 40 ms, would wake it too late.
  const t0 = performance.now();
  const c = withBackoff(fetch, { gate, maxElapsedMs: 50, maxAttempts: Infinity })(`${srv.url}${p}?i=3`);
  const [ra, rb, rc] = await Promise.allSettled([a, b, c]);
  assert.equal(rb.status, 'rejected');
  assert.ok(rb.reason instanceof GateTimeoutError && rb.reason.reason === 'exhausted', String(rb.reason));
  assert.equal(rc.status, 'rejected');
  assert.ok(rc.reason instanceof GateTimeoutError && rc.reason.reason === 'deadline', String(rc.reason));
  // A ran out of its own attempts as the probe: its last response, as fetch would.
  assert.equal(ra.status, 'fulfilled');
  assert.equal(ra.value.status, 503);
  assert.equal(doneA.attempts, 4);
  assert.equal(doneA.reason, 'exhausted');
  assert.deepEqual(
    log.map((r) => r.i),
    [1, 1, 1, 1],
    'only A reached the server',
  );
  assert.ok(performance.now() - t0 < 5000);
  assert.equal(gate.stats().timeouts, 2);
  // The target is still backing off (nothing held: no timer).
  assert.equal(gate.state(srv.url).state, 'open');
  assert.equal(timers(), before, 'a timer was left behind');
});

test('an aborted held call leaves the queue at once, with no listener or timer left', async () => {
  const before = timers();
  const p = path('abort');
  let down = true;
  outage(p, () => down);
  const gate = createGate({ ...ROUNDS, baseMs: 60 });
  const gated = withBackoff(fetch, { gate, maxAttempts: Infinity, maxElapsedMs: 5000 });
  const a = gated(`${srv.url}${p}?i=1`);
  await until('A held', () => gate.state(srv.url).held === 1, 1000, 2);
  const ac = new AbortController();
  let doneB;
  const b = withBackoff(fetch, { gate, maxAttempts: Infinity, maxElapsedMs: 5000, onDone: (d) => (doneB = d) })(`${srv.url}${p}?i=2`, {
    signal: ac.signal,
  });
  await until('B held', () => gate.state(srv.url).held === 2, 1000, 2);
  const reason = new Error('stop');
  ac.abort(reason);
  await assert.rejects(b, (e) => e === reason);
  assert.equal(doneB.reason, 'aborted');
  assert.equal(gate.state(srv.url).held, 1);
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  down = false;
  assert.equal((await a).status, 200);
  assert.equal(timers(), before, 'a timer was left behind');
});

test('a hung probe times out into the next round (probeTimeoutMs): the next held call probes', async () => {
  const before = timers();
  const p = path('hung');
  srv.script(p, [{ status: 503 }, { hang: true }, { status: 200, body: 'ok' }]);
  const gate = createGate({ ...ROUNDS, probeTimeoutMs: 100 });
  const gated = withBackoff(fetch, { gate, maxAttempts: Infinity, timeoutMs: 600 });
  const order = [];
  const a = gated(`${srv.url}${p}?i=1`).then((r) => (order.push('a'), r.status));
  await until('A held', () => gate.state(srv.url).held === 1, 1000, 2);
  const b = gated(`${srv.url}${p}?i=2`).then((r) => (order.push('b'), r.status));
  // A probes and hangs; after 100 ms the next round starts and B probes.
  assert.equal(await b, 200);
  assert.deepEqual(order, ['b']);
  // A's own timeout ends its hung attempt; the target is healthy by then.
  assert.equal(await a, 200);
  assert.deepEqual(
    srv.requests.filter((r) => r.path === p).map((r) => new URL(r.url, 'http://x').searchParams.get('i')),
    ['1', '1', '2', '1'],
  );
  assert.equal(gate.stats().rounds, 2);
  assert.equal(timers(), before, 'a timer was left behind');
});

test('what the target says decides: a 404 is no failure; a failed POST starts a round but is not retried', async () => {
  const before = timers();
  const p = path('methods');
  srv.script(p, (req) => {
    const i = new URL(req.url, 'http://x').searchParams.get('i');
    return i === 'missing' ? { status: 404 } : srv.count(p) <= 3 ? { status: 503 } : { status: 200, body: i };
  });
  const gate = createGate(ROUNDS);
  const infos = [];
  const dones = [];
  const gated = withBackoff(fetch, { gate, maxAttempts: Infinity, onRetry: (i) => infos.push(i), onDone: (d) => dones.push(d) });
  // A 404 reaches the target: returned as is, the target stays healthy.
  assert.equal((await gated(`${srv.url}${p}?i=missing`)).status, 404);
  assert.equal(gate.state(srv.url).state, 'closed');
  // A POST's 503 starts a round, but the POST itself is not retried.
  const post = await gated(`${srv.url}${p}?i=post`, { method: 'POST', body: 'x' });
  assert.equal(post.status, 503);
  assert.equal(dones.at(-1).reason, 'not-idempotent');
  assert.equal(gate.state(srv.url).state, 'open');
  // A GET arriving now is held (never sent during the round), then probes: the
  // 503 (second failure) starts the next round, the next probe succeeds.
  const res = await gated(`${srv.url}${p}?i=get`);
  assert.equal(await res.text(), 'get');
  assert.equal(infos.length, 1);
  assert.ok(infos[0].status === 503 && infos[0].delayMs > 0 && infos[0].delayMs <= 40, JSON.stringify(infos[0]));
  assert.deepEqual(
    srv.requests.filter((r) => r.path === p).map((r) => new URL(r.url, 'http://x').searchParams.get('i')),
    ['missing', 'post', 'get', 'get'],
  );
  assert.equal(timers(), before, 'a timer was left behind');
});

test('gate.run supervises any async work: one probe per round, released in order', async () => {
  const before = timers();
  const gate = createGate({ ...ROUNDS, concurrency: 4 });
  const sent = [];
  let maxInFlight = 0,
    inFlight = 0;
  const work = (i) => async () => {
    sent.push(i);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await sleep(1);
    inFlight--;
    // Down for the 4 first tries and 3 probes.
    if (failures++ < 7) throw new Error('down');
    return i;
  };
  let failures = 0;
  const out = await Promise.all(Array.from({ length: 20 }, (_, i) => gate.run('db', work(i), { maxAttempts: Infinity })));
  assert.deepEqual(
    out,
    Array.from({ length: 20 }, (_, i) => i),
  );
  // 4 first tries (the concurrency limit), then one probe per round, then 19 released.
  const st = gate.stats();
  assert.equal(st.probes, 4);
  assert.equal(st.rounds, st.probes);
  assert.equal(sent.length, 4 + st.probes + 19);
  assert.deepEqual(sent.slice(0, 4), [0, 1, 2, 3]);
  assert.deepEqual(
    sent.slice(4 + st.probes),
    Array.from({ length: 19 }, (_, i) => i + 1),
  );
  assert.ok(maxInFlight <= 4);
  // A task's own limits: maxAttempts tries, then its last error.
  let tries = 0;
  await assert.rejects(
    gate.run(
      'other',
      async () => {
        tries++;
        throw new Error('nope');
      },
      { maxAttempts: 3 },
    ),
    /nope/,
  );
  assert.equal(tries, 3);
  // A rejection that `retryable` says is not the target's fault is returned at once.
  const g2 = createGate({ ...ROUNDS, retryable: (e) => e.message !== 'bad input' });
  let n = 0;
  await assert.rejects(
    g2.run('x', async () => {
      n++;
      throw new Error('bad input');
    }),
    /bad input/,
  );
  assert.equal(n, 1);
  assert.equal(g2.state('x').state, 'closed');
  assert.equal(timers(), before, 'a timer was left behind');
});

test("fetchWithBackoff({ gate }) takes a Gate from 'wasm-backoff/gate'; bad options name the option", async () => {
  const p = path('shared');
  srv.script(p, [{ status: 503 }, { status: 200, body: 'ok' }]);
  const shared = createGate({ consecutive: 1 });
  const res = await fetchWithBackoff(`${srv.url}${p}`, undefined, { gate: shared });
  assert.equal(await res.text(), 'ok');
  assert.equal(shared.stats().rounds, 1, 'the 503 started a round of the shared gate');
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
    fetchWithBackoff(`${srv.url}${p}`, undefined, { gate: true }),
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
    () => withBackoff(fetch, { gate: 'yes' }),
    (e) => e instanceof TypeError && /^gate/.test(e.message),
  );
  await assert.rejects(fetchWithBackoff(`${srv.url}${p}`, undefined, { gate: { maxQueued: 10 } }), TypeError);
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
});

test('a throwing shouldRetry takes its call out of the gate; a throwing onRetry changes nothing', async () => {
  const before = timers();
  const bug = new Error('bug in a callback');
  // shouldRetry throws after the attempt: the call leaves, and with
  // concurrency 1 the next call is not blocked behind it.
  const p = path('throws-should');
  srv.script(p, [{ status: 503 }, { status: 200, body: 'ok' }]);
  const g1 = createGate({ ...ROUNDS, concurrency: 1 });
  let throws = true;
  const a = withBackoff(fetch, {
    gate: g1,
    shouldRetry: () => {
      if (throws) throw bug;
    },
  });
  await assert.rejects(a(`${srv.url}${p}`), (e) => e === bug);
  assert.deepEqual(g1.state(srv.url), { state: 'closed', probing: false, held: 0, inFlight: 0, retryAfterMs: 0 });
  throws = false;
  assert.equal(await (await a(`${srv.url}${p}`)).text(), 'ok');
  // onRetry is an observer: its error goes to the console, the call is held
  // and retried through the gate as if it had not thrown.
  const q = path('throws-onretry');
  srv.script(q, [{ status: 503 }, { status: 200, body: 'ok' }]);
  const g2 = createGate(ROUNDS);
  const b = withBackoff(fetch, {
    gate: g2,
    onRetry: () => {
      throw bug;
    },
  });
  const logged = [];
  const error = console.error;
  console.error = (...args) => logged.push(args);
  try {
    assert.equal(await (await b(`${srv.url}${q}`)).text(), 'ok');
  } finally {
    console.error = error;
  }
  assert.equal(logged.length, 1);
  assert.equal(logged[0][1], bug);
  assert.equal(srv.count(q), 2);
  assert.deepEqual(g2.stats(), { evictions: 0, rounds: 1, probes: 1, timeouts: 0, held: 0, inFlight: 0, targets: 0 });
  assert.equal(timers(), before, 'a timer was left behind');
});

test('with concurrency, a hung call stops occupying its slot after probeTimeoutMs: the calls behind it go', async () => {
  const before = timers();
  const p = path('hung-slot');
  srv.script(p, (req, n) => (n === 0 ? { hang: true } : { status: 200, body: new URL(req.url, 'http://x').searchParams.get('i') }));
  const gate = createGate({ concurrency: 1, probeTimeoutMs: 100, consecutive: 1 });
  const gated = withBackoff(fetch, { gate });
  const ac = new AbortController();
  // (the clock starts before A is let through: its probe timeout runs from then)
  const t0 = performance.now();
  const hung = gated(`${srv.url}${p}?i=a`, { signal: ac.signal });
  await until('A sent', () => srv.count(p) === 1, 1000, 2);
  const rest = Promise.all(['b', 'c'].map((i) => gated(`${srv.url}${p}?i=${i}`).then((r) => r.text())));
  assert.deepEqual(
    gate.state(srv.url),
    { state: 'closed', probing: false, held: 2, inFlight: 1, retryAfterMs: 0 },
    'held behind A (concurrency)',
  );
  let tid;
  const timeout = new Promise((r) => (tid = setTimeout(() => r('still held'), 5000)));
  assert.deepEqual(await Promise.race([rest, timeout]), ['b', 'c']);
  clearTimeout(tid);
  assert.ok(performance.now() - t0 >= 95, 'B waited for the stall timeout');
  // A still counts as in flight until it ends (here, aborted).
  assert.deepEqual(gate.state(srv.url), { state: 'closed', probing: false, held: 0, inFlight: 1, retryAfterMs: 0 });
  const reason = new Error('stop');
  ac.abort(reason);
  await assert.rejects(hung, (e) => e === reason);
  assert.equal(gate.stats().targets, 0);
  assert.equal(timers(), before, 'a timer was left behind');
});

test('a held call whose deadline is beyond the longest timer keeps waiting when that timer fires', async () => {
  const before = timers();
  // (a round of 300 ms: B must find A's round still running, or B would go as its probe)
  const gate = createGate({ ...ROUNDS, baseMs: 300, maxDelayMs: 300 });
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
});

test('a Retry-After beyond maxRetryAfterMs returns the call at once, and still holds the target up to maxRetryAfterMs', async () => {
  const p = path('long-retry-after');
  srv.script(p, [
    { status: 503, headers: { 'retry-after': '3600' } },
    { status: 200, body: 'ok' },
  ]);
  const gate = createGate(ROUNDS);
  const gated = withBackoff(fetch, { gate, maxRetryAfterMs: 600 });
  const t0 = performance.now();
  assert.equal((await gated(`${srv.url}${p}`)).status, 503);
  // (at once: well before the 600 ms it would wait, even on a loaded machine)
  assert.ok(performance.now() - t0 < 450, `returned after ${(performance.now() - t0).toFixed(0)} ms`);
  assert.equal(srv.count(p), 1, 'not retried');
  // The next call is held for the round the hint set (600 ms, not 20).
  assert.equal(await (await gated(`${srv.url}${p}`)).text(), 'ok');
  assert.ok(performance.now() - t0 >= 595, `released after ${(performance.now() - t0).toFixed(0)} ms`);
});

test('free() while calls are held or in flight: held calls reject, in-flight calls end with their own outcome, no timer spins', async () => {
  const p = path('freed');
  srv.script(p, [{ status: 503 }, { status: 503, delayMs: 60 }]);
  const gate = createGate({ ...ROUNDS, baseMs: 2000, maxDelayMs: 2000 }); // a round far longer than the steps below, even on a loaded machine
  const reasons = [];
  const f = withBackoff(fetch, { gate, maxAttempts: 3, onDone: (d) => reasons.push(d.reason) });
  const first = f(`${srv.url}${p}`); // fails at once: a round starts, and the call is held
  await until('the first call held', () => gate.state(new URL(srv.url).origin).held === 1, 1000, 2);
  let inFlight;
  const run = gate.run('other', () => new Promise((r) => (inFlight = r)));
  await until('the task to start', () => inFlight, 1000, 2);
  const before = timers();
  gate.free();
  await assert.rejects(first, (e) => e instanceof TypeError && /freed/.test(e.message), 'a held call rejects');
  assert.deepEqual(reasons, ['freed'], "onDone says why: 'freed', not 'aborted'");
  inFlight('late'); // the in-flight task settles after the gate is gone
  assert.equal(await run, 'late');
  await sleep(50);
  assert.ok(timers() <= before, 'no timer armed by a freed gate');
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
        await sleep(60);
      };
      return t;
    }
  }
  const seen = [];
  const onUnhandled = (r) => seen.push(r);
  process.on('unhandledRejection', onUnhandled);
  const p = path('late');
  srv.script(p, [{ status: 200 }]);
  const gate = new Late({ consecutive: Infinity });
  const e = await fetchWithBackoff(srv.url + p, undefined, { gate, maxElapsedMs: 30 }).catch((x) => x);
  await sleep(20);
  process.off('unhandledRejection', onUnhandled);
  gate.free();
  assert.equal(e?.name, 'TimeoutError');
  assert.equal(srv.count(p), 0, 'nothing sent');
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
