// Hedging and failover in Node. Their timing logic on virtual time (the js/
// sources, the kit's clock as tests/engine/clock.mjs installs it, and its
// scriptedFetch, one per origin): when a hedge goes and how many, what the
// budget and the gate let through, which endpoint each attempt goes to,
// the waits between rounds, all asserted to the millisecond, with no
// timer left behind. Then the runtime smokes of hedge-checks.mjs against
// real scripted servers on 127.0.0.1 (Node's fetch: a loser's connection
// really closes), as Chromium and workerd run them.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import * as main from 'wasm-backoff';
import { createGate as pkgGate } from 'wasm-backoff/gate';
import { hedge as pkgHedge } from 'wasm-backoff/hedge';
import { failover as pkgFailover } from 'wasm-backoff/failover';
import { withBackoff } from '../../js/fetch/index.js';
import { hedge } from '../../js/fetch/hedge.js';
import { failover } from '../../js/fetch/failover.js';
import { createGate } from '../../js/gate/index.js';
import { sharedGate } from '../../js/fleet/shared-gate.js';
import * as stream from '../../js/entries/stream.js';
import { MAX_TIMER } from '../../js/gen/boundary.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import { startScripted } from '../server/scripted.mjs';
import { control } from '../fetch/fetch-checks.mjs';
import { install, settled } from '../engine/clock.mjs';
import { objects } from '../support/objects.mjs';
import { SMOKES } from './hedge-checks.mjs';

// No jitter: every wait is exact. A 503 waits on the throttling base (10 ×
// baseMs, capped at maxDelayMs: 20 ms), any other failure on baseMs (5 ms).
const FAST = { baseMs: 5, maxDelayMs: 20, jitter: 'none' };
const A = 'https://a.test';
const B = 'https://b.test';
const C = 'https://c.test';

/** The virtual clock for test `t` (uninstalled when it ends, however it ends). */
function virtual(t) {
  const clock = install();
  t.after(() => clock.off());
  return clock;
}

/**
 * A fetch that answers each origin from its own script (scriptedFetch's
 * vocabulary) and logs every request it is handed, in order: `sent` (the
 * origin, path and query, virtual ms, headers and signal). `fetch.of(origin)`
 * is that origin's scriptedFetch (its `calls`, `count`); another origin is a network failure.
 * @param {ReturnType<typeof install>} clock
 * @param {Record<string, unknown>} scripts origin -> script
 */
function origins(clock, scripts) {
  const by = new Map(Object.entries(scripts).map(([o, s]) => [o, scriptedFetch(s)]));
  const sent = [];
  const fetch = (input, init) => {
    const req = new Request(input, init);
    const u = new URL(req.url);
    sent.push({
      to: u.origin,
      url: u.pathname + u.search,
      at: clock.now(),
      headers: Object.fromEntries(req.headers),
      signal: init?.signal,
    });
    const f = by.get(u.origin);
    return f ? f(input, init) : Promise.reject(new TypeError('fetch failed'));
  };
  return Object.assign(fetch, { sent, of: (o) => by.get(o) });
}

const at = (sent) => sent.map((s) => `${s.to === A ? 'a' : s.to === B ? 'b' : 'c'}@${s.at}`);
const thrown = (f) => {
  try {
    f();
  } catch (e) {
    return e;
  }
};

// ---- hedging, on virtual time

test('a slow attempt is hedged at delayMs: the hedge wins, the slow one is aborted', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: [{ hang: true }, { status: 200, body: 'fast' }] });
  let done;
  const api = withBackoff(f, { ...FAST, hedge: hedge({ delayMs: 150 }), onDone: (d) => (done = d) });
  const res = await clock.run(api(`${A}/slow`));
  assert.equal(await res.text(), 'fast');
  assert.deepEqual(at(f.sent), ['a@0', 'a@150'], 'the hedge went exactly delayMs after the first');
  assert.equal(clock.now(), 150, 'answered when the hedge was');
  assert.deepEqual(
    f.sent.map((s) => s.signal.aborted),
    [true, false],
    'the hung first attempt was aborted, the winner not',
  );
  assert.deepEqual(done, { attempts: 2, elapsedMs: 150, reason: 'success', status: 200, error: undefined, won: 2, hedges: 1 });
  assert.deepEqual(clock.asked, [150], 'one timer: the hedge’s');
  assert.equal(clock.timers(), 0);
});

test('each racer carries its own number in attemptHeader; max counts the hedges the call may send', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: [{ hang: true }, { status: 200, body: 'fast' }] });
  const api = withBackoff(f, { ...FAST, maxAttempts: 3, attemptHeader: 'x-attempt', hedge: hedge({ delayMs: 30, maxHedges: 1 }) });
  assert.equal(await (await clock.run(api(`${A}/numbered`))).text(), 'fast');
  // (3 rounds of a request and its hedge: at most 6 requests)
  assert.deepEqual(
    f.sent.map((s) => `${s.headers['x-attempt']} @${s.at}`),
    ['attempt=1; max=6 @0', 'attempt=2; max=6 @30'],
  );
});

test('an answer 1 ms before delayMs sends no hedge, and leaves no hedge timer', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { status: 200, body: 'ok', delayMs: 299 } });
  let done;
  const api = withBackoff(f, { hedge: hedge({ delayMs: 300, maxHedges: 3 }), onDone: (d) => (done = d) });
  const res = await clock.run(api(`${A}/fast`));
  assert.equal(await res.text(), 'ok');
  assert.equal(clock.now(), 299);
  assert.equal(clock.timers(), 0, 'the hedge’s timer was cleared with the answer');
  await clock.tick(60_000);
  assert.deepEqual(at(f.sent), ['a@0'], 'nothing more went out');
  assert.deepEqual([done.won, done.hedges, done.attempts], [1, 0, 1]);
  assert.deepEqual(clock.asked, [300, 299], 'the hedge’s timer and the answer’s delay, nothing else');
});

test('a delayMs past the longest timer (2^31 ms) waits the longest timer: no hedge', async (t) => {
  // (the clock wraps a delay past 2^31 - 1 to 0 as runtimes do: unclamped, the hedge would go at once)
  const clock = virtual(t);
  const f = origins(clock, { [A]: { status: 200, body: 'ok', delayMs: 150 } });
  let done;
  const res = await clock.run(withBackoff(f, { hedge: hedge({ delayMs: 2 ** 31 }), onDone: (d) => (done = d) })(`${A}/huge`));
  assert.equal(await res.text(), 'ok');
  assert.deepEqual(at(f.sent), ['a@0']);
  assert.equal(done.hedges, 0);
  assert.equal(clock.asked[0], MAX_TIMER, 'the hedge’s timer is the longest one');
});

test('a retryable answer with no racer left ends the race: the call backs off as usual (a 503: 20 ms), no hedge', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: [503, { status: 200, body: 'second' }] });
  let done;
  const waits = [];
  const api = withBackoff(f, {
    ...FAST,
    hedge: hedge({ delayMs: 5000 }),
    onRetry: (i) => waits.push(i.delayMs),
    onDone: (d) => (done = d),
  });
  assert.equal(await (await clock.run(api(`${A}/503`))).text(), 'second');
  assert.deepEqual(at(f.sent), ['a@0', 'a@20']);
  assert.deepEqual(waits, [20]);
  assert.deepEqual([done.won, done.hedges, done.attempts], [2, 0, 2]);
});

test('every racer failing: the race ends with the last, the call backs off and races again', async (t) => {
  const clock = virtual(t);
  // The attempt answers 503 at 150, its hedge (at 40) 503 at once: the race ends at 150, both failed.
  const f = origins(clock, { [A]: [{ status: 503, delayMs: 150 }, 503, { status: 200, body: 'third' }] });
  let done;
  const waits = [];
  const api = withBackoff(f, {
    ...FAST,
    hedge: hedge({ delayMs: 40, maxHedges: 1 }),
    onRetry: (i) => waits.push([i.attempt, i.status, i.delayMs]),
    onDone: (d) => (done = d),
  });
  assert.equal(await (await clock.run(api(`${A}/allfail`))).text(), 'third');
  assert.deepEqual(at(f.sent), ['a@0', 'a@40', 'a@170'], 'the next round 20 ms after the race ended');
  assert.deepEqual(waits, [[2, 503, 20]], 'one wait, for the round (after attempt 2: the hedge counts)');
  assert.deepEqual([done.won, done.hedges, done.attempts], [3, 1, 3]);
  assert.equal(clock.timers(), 0);
});

test('a POST is not hedged unless it carries an idempotency key (the same on every racer)', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { status: 201, delayMs: 150 } });
  const res = await clock.run(withBackoff(f, { hedge: hedge({ delayMs: 10 }) })(`${A}/post`, { method: 'POST', body: 'x' }));
  assert.equal(res.status, 201);
  assert.deepEqual(at(f.sent), ['a@0'], 'a POST without a key: no hedge');
  f.sent.length = 0;
  let done;
  const keyed = await clock.run(
    withBackoff(f, { idempotencyKey: true, hedge: hedge({ delayMs: 10 }), onDone: (d) => (done = d) })(`${A}/keyed`, {
      method: 'POST',
      body: 'x',
    }),
  );
  assert.equal(keyed.status, 201);
  assert.deepEqual(at(f.sent), ['a@150', 'a@160']);
  const keys = f.sent.map((s) => s.headers['idempotency-key']);
  assert.ok(keys[0] && keys[0] === keys[1], `one key on both racers: ${keys}`);
  assert.deepEqual([done.won, done.hedges], [1, 1], 'the first answered first (at 300)');
});

test('hedges draw from the budget: one retry each, at the time each is due; an empty budget sends none', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { status: 200, delayMs: 120 } });
  const asked = [];
  let credit = 1;
  const budget = { deposit() {}, withdraw: () => (asked.push(clock.now()), credit-- > 0) };
  const api = withBackoff(f, { hedge: hedge({ delayMs: 10, maxHedges: 3 }), budget });
  assert.equal((await clock.run(api(`${A}/budget`))).status, 200);
  assert.deepEqual(at(f.sent), ['a@0', 'a@10'], 'the one credit went to the first hedge');
  assert.deepEqual(asked, [10, 20], 'the second hedge was refused at 20, and none asked for after');
  assert.equal(clock.timers(), 0);
});

test('no hedge while the gate has the target half-open: the held call is its probe, alone', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: [503, { status: 200, delayMs: 200 }] });
  const gate = createGate({ baseMs: 30, maxDelayMs: 30, jitter: 'none', consecutive: 1 });
  t.after(() => gate.free());
  // A call without hedging opens the circuit; the hedged call is held for the round (30 ms), then probes.
  assert.equal((await clock.run(withBackoff(f, { gate, maxAttempts: 1 })(`${A}/probe`))).status, 503);
  assert.equal(gate.state(A).state, 'open');
  let done;
  const api = withBackoff(f, { ...FAST, gate, hedge: hedge({ delayMs: 10 }), onDone: (d) => (done = d) });
  assert.equal((await clock.run(api(`${A}/probe`))).status, 200);
  assert.deepEqual(at(f.sent), ['a@0', 'a@30'], 'the probe at the round’s end, and no hedge at 40');
  assert.equal(clock.now(), 230);
  assert.equal(done.hedges, 0);
  assert.equal(gate.state(A).state, 'closed');
});

test("the caller's abort ends every racer at once and rejects with its reason", async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { hang: true } });
  const ac = new AbortController();
  const reason = new Error('stop');
  const call = withBackoff(f, { hedge: hedge({ delayMs: 10, maxHedges: 2 }) })(`${A}/abort`, { signal: ac.signal });
  call.catch(() => {});
  await clock.tick(25);
  assert.deepEqual(at(f.sent), ['a@0', 'a@10', 'a@20'], 'the first and its two hedges, all hanging');
  ac.abort(reason);
  assert.equal(await clock.run(call.catch((e) => e)), reason);
  assert.equal(clock.now(), 25, 'at once');
  assert.deepEqual(
    f.sent.map((s) => s.signal.aborted),
    [true, true, true],
  );
  assert.equal(clock.timers(), 0);
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
});

test('the deadline ends a race with a TimeoutError, exactly at maxElapsedMs', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { hang: true } });
  const call = withBackoff(f, { hedge: hedge({ delayMs: 10 }), maxElapsedMs: 100 })(`${A}/deadline`);
  call.catch(() => {});
  await clock.tick(99);
  assert.equal(await settled(call), false, 'still racing 1 ms before the deadline');
  await clock.tick(1);
  const e = await clock.run(call.catch((x) => x));
  assert.equal(e?.name, 'TimeoutError');
  assert.deepEqual(at(f.sent), ['a@0', 'a@10']);
  assert.ok(
    f.sent.every((s) => s.signal.aborted),
    'both racers aborted',
  );
  assert.equal(clock.timers(), 0);
});

test("losers are aborted and their bodies cancelled; the caller's signal keeps no listener", async (t) => {
  const clock = virtual(t);
  // The attempt answers 200 at 150; its first hedge (at 20) 503 at once (worth a retry: the race goes on), the second (at 40) hangs.
  const f = origins(clock, { [A]: [{ status: 200, body: 'slow', delayMs: 150 }, { status: 503, body: 'busy' }, { hang: true }] });
  const answers = [];
  const spy = (input, init) => {
    const p = f(input, init);
    answers.push(p.catch(() => undefined));
    return p;
  };
  const ac = new AbortController();
  let done;
  const api = withBackoff(spy, { hedge: hedge({ delayMs: 20, maxHedges: 2 }), timeoutMs: 5000, onDone: (d) => (done = d) });
  const res = await clock.run(api(`${A}/lose`, { signal: ac.signal }));
  assert.equal(await res.text(), 'slow');
  assert.deepEqual(at(f.sent), ['a@0', 'a@20', 'a@40']);
  assert.deepEqual([done.won, done.hedges, done.attempts], [1, 2, 3]);
  const [, lost] = await Promise.all(answers);
  assert.equal(lost.status, 503);
  assert.equal(lost.bodyUsed, true, "the losing 503's body was cancelled");
  assert.deepEqual(
    f.sent.map((s) => s.signal.aborted),
    [false, false, true],
    'the hung racer aborted when the first won (the 503 had answered: nothing to abort); the winner’s signal live',
  );
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  assert.equal(clock.timers(), 0, 'no timeoutMs timer of a racer left');
});

test('a ReadableStream body is not hedged: the call succeeds as without hedge', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { status: 200, body: 'slow', delayMs: 150 } });
  let done;
  const body = new ReadableStream({
    start(ctl) {
      ctl.enqueue(new TextEncoder().encode('sent once'));
      ctl.close();
    },
  });
  const api = withBackoff(f, { hedge: hedge({ delayMs: 20 }), onDone: (d) => (done = d) });
  const res = await clock.run(api(`${A}/once`, { method: 'PUT', body, duplex: 'half' }));
  assert.equal(await res.text(), 'slow');
  assert.deepEqual([done.hedges ?? 0, done.attempts], [0, 1]);
  assert.deepEqual(
    f.of(A).calls.map((c) => c.body),
    ['sent once'],
  );
});

test('wasm-backoff/stream: hedge keeps idleTimeoutMs (the stalled body errors 50 ms after its last bytes); with firstChunkTimeoutMs or resume it throws', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { size: 100_000, stallAfter: 1000 } });
  const res = await clock.run(stream.withBackoff(f, { hedge: hedge({ delayMs: 5000 }), idleTimeoutMs: 50 })(`${A}/stall`));
  const got = await clock.run(res.arrayBuffer().catch((e) => e));
  assert.equal(got?.name, 'TimeoutError', `the stalled body ended with ${got}`);
  assert.equal(clock.now(), 50);
  assert.deepEqual(at(f.sent), ['a@0'], 'answered at once: no hedge');
  const h = hedge({ delayMs: 50 });
  for (const [k, v] of [
    ['firstChunkTimeoutMs', 100],
    ['resume', true],
  ]) {
    const name = new RegExp(`hedge and ${k}`);
    await assert.rejects(clock.run(stream.fetchWithBackoff(`${A}/stall`, undefined, { hedge: h, [k]: v })), {
      name: 'TypeError',
      message: name,
    });
    assert.throws(() => stream.withBackoff(f, { hedge: h, [k]: v }), { name: 'TypeError', message: name });
  }
});

test('a hedge refused before it was sent (a runtime’s subrequest cap) never ends the race: the attempt answers', async (t) => {
  const clock = virtual(t);
  // (workerd's fetch throws "Too many subrequests." past an invocation's cap: not a network failure)
  const f = origins(clock, { [A]: { status: 200, body: 'first', delayMs: 150 } });
  let n = 0;
  const capped = (input, init) => (++n === 1 ? f(input, init) : Promise.reject(new Error('Too many subrequests.')));
  let done;
  const api = withBackoff(capped, { baseMs: 1, hedge: hedge({ delayMs: 20, maxHedges: 2 }), onDone: (d) => (done = d) });
  const res = await clock.run(api(`${A}/capped`));
  assert.equal(await res.text(), 'first');
  assert.equal(clock.now(), 150);
  assert.equal(n, 3, 'both hedges were tried (at 20 and 40) and refused');
  assert.deepEqual([done.won, done.reason], [1, 'success']);
  assert.equal(f.of(A).count, 1);
});

test('hedged calls with one long-lived caller signal keep nothing on it', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { status: 200, body: 'ok', delayMs: 30 } });
  const live = new AbortController();
  const api = withBackoff(f, { baseMs: 1, hedge: hedge({ delayMs: 5 }) });
  for (let i = 0; i < 20; i++) await clock.run(api(`${A}/long`, { signal: live.signal }).then((r) => r.text()));
  assert.equal(f.sent.length, 40, 'each call: its attempt and one hedge');
  assert.equal(getEventListeners(live.signal, 'abort').length, 0, 'no listener of ours on the caller’s signal');
});

test('bad hedge options throw, naming the option', () => {
  const bad = [
    [1, TypeError, 'hedge options'],
    [{}, TypeError, 'hedge: delayMs'],
    [{ delayMs: -1 }, RangeError, 'hedge: delayMs'],
    [{ delayMs: '5' }, TypeError, 'hedge: delayMs'],
    [{ delayMs: Infinity }, RangeError, 'hedge: delayMs'],
    [{ delayMs: 5, maxHedges: 0 }, RangeError, 'hedge: maxHedges'],
    [{ delayMs: 5, maxHedges: 11 }, RangeError, 'hedge: maxHedges'],
    [{ delayMs: 5, maxHedges: 1.5 }, RangeError, 'hedge: maxHedges'],
  ];
  for (const [options, type, name] of bad) {
    const e = thrown(() => hedge(options));
    assert.ok(e instanceof type && e.message.startsWith(name), `hedge(${JSON.stringify(options)}): ${e}`);
  }
  // The option takes what hedge() makes, nothing else (its code is in the subpath).
  const e = thrown(() => withBackoff(fetch, { hedge: { delayMs: 5 } }));
  assert.ok(e instanceof TypeError && e.message.includes("'wasm-backoff/hedge'"), `plain object: ${e}`);
});

// ---- failover, on virtual time

test('a retry goes to the next endpoint after its wait; beforeRetry sees where; onDone tells; the next call starts at the preferred one', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: 503, [B]: { status: 200, body: 'from b' } });
  const seen = [];
  let done;
  const api = withBackoff(f, {
    ...FAST,
    endpoints: failover([A, B]),
    beforeRetry: ({ request }) => void seen.push(request.url),
    onDone: (d) => (done = d),
  });
  const res = await clock.run(api(`${A}/fo?q=1`));
  assert.equal(await res.text(), 'from b');
  assert.deepEqual(seen, [`${B}/fo?q=1`]);
  assert.deepEqual(at(f.sent), ['a@0', 'b@20']);
  assert.deepEqual([done.endpoint, done.attempts], [B, 2]);
  // Without a gate, every call starts at the preferred endpoint again.
  await clock.run(api(`${B}/fo`));
  assert.deepEqual(at(f.sent).slice(2), ['a@20', 'b@40']);
});

// (a gate trips on the failure itself: its retry leaves the primary's queue for the secondary at once; a
// fleet's object answers the failure's report after the retry's wait was decided: it goes after that wait, 20 ms)
for (const [kind, make, retryAt] of [
  ['a gate', (o) => createGate(o), 0],
  ["a fleet's shared gate (its objects in-process)", (o) => sharedGate(objects().view(), o), 20],
]) {
  test(`with ${kind}, a failed endpoint is skipped, probed exactly when its round ends, and returned to`, async (t) => {
    const clock = virtual(t);
    let up = false;
    const f = origins(clock, { [A]: () => (up ? { status: 200, body: 'a' } : 503), [B]: { status: 200, body: 'b' } });
    const gate = make({ baseMs: 400, maxDelayMs: 400, jitter: 'none', consecutive: 1 });
    t.after(() => gate.free());
    const ends = [];
    const api = withBackoff(f, {
      ...FAST,
      gate,
      endpoints: failover([A, B]),
      onDone: (d) => ends.push(`${d.endpoint === A ? 'a' : 'b'}@${clock.now()}`),
    });
    assert.equal((await clock.run(api(`${A}/gatefo`))).status, 200, 'the first call failed over');
    assert.notEqual(gate.state(A).state, 'closed', 'the primary is open');
    assert.equal((await clock.run(api(`${A}/gatefo`))).status, 200, 'the second went straight to the secondary');
    up = true; // (the primary recovers)
    await clock.to(399);
    assert.equal(await (await clock.run(api(`${A}/gatefo`))).text(), 'b', '1 ms before the round ends: still the secondary');
    await clock.to(400);
    assert.equal(await (await clock.run(api(`${A}/gatefo`))).text(), 'a', 'at the round’s end the recovered primary takes the probe');
    assert.equal(await (await clock.run(api(`${A}/gatefo`))).text(), 'a', 'and the calls after it');
    const r = `b@${retryAt}`;
    assert.deepEqual(at(f.sent), ['a@0', r, r, 'b@399', 'a@400', 'a@400'], 'the second call went straight to b');
    assert.deepEqual(ends, [r, r, 'b@399', 'a@400', 'a@400']);
    assert.equal(gate.state(A).state, 'closed', 'the primary is closed again');
    await clock.run(gate.flush?.() ?? Promise.resolve());
  });
}

// (issue 34) Every circuit open: the call is held by the endpoint whose round ends first, not by the one it
// last tried. (A gate trips on the failure itself; a fleet's object answers the failure's report after the
// retry's wait was decided: the retry to the secondary goes after that wait, 20 ms, and its round ends at 520.)
for (const [kind, make, retryAt] of [
  ['a gate', (o) => createGate(o), 0],
  ["a fleet's shared gate (its objects in-process)", (o) => sharedGate(objects().view(), o), 20],
]) {
  test(`with ${kind} and every circuit open, the held call goes to the endpoint whose round ends first`, async (t) => {
    const clock = virtual(t);
    // The primary fails at once (its round: 0 to 400); the secondary answers 503 after 100 ms (its round ends 100 ms later).
    let up = false;
    const f = origins(clock, { [A]: () => (up ? { status: 200, body: 'a' } : 503), [B]: { status: 503, delayMs: 100 } });
    const gate = make({ baseMs: 400, maxDelayMs: 400, jitter: 'none', consecutive: 1 });
    t.after(() => gate.free());
    const retries = [];
    let done;
    const api = withBackoff(f, {
      ...FAST,
      maxAttempts: 10,
      gate,
      endpoints: failover([A, B]),
      onRetry: (i) => retries.push(`${i.attempt}:${i.delayMs}@${clock.now()}`),
      onDone: (d) => (done = d),
    });
    const call = api(`${A}/held`);
    await clock.to(200);
    const b = `b@${retryAt}`;
    assert.deepEqual(at(f.sent), ['a@0', b], 'the primary, then the secondary; both down');
    assert.deepEqual(
      [A, B].map((x) => gate.state(x).state),
      ['open', 'open'],
    );
    up = true; // (the primary recovers; the secondary stays down)
    const res = await clock.run(call);
    assert.equal(await res.text(), 'a', 'answered by the recovered primary');
    assert.deepEqual(at(f.sent), ['a@0', b, 'a@400'], 'the held call probed the primary when its round ended, not the dead secondary');
    assert.deepEqual([done.endpoint, done.attempts, clock.now()], [A, 3, 400]);
    assert.equal(gate.state(A).state, 'closed');
    assert.equal(gate.state(B).state, 'open', 'the secondary, still down, was not probed');
    await clock.run(gate.flush?.() ?? Promise.resolve());
  });

  test(`with ${kind} and every circuit open, a held call aborted while moving between queues leaves nothing behind`, async (t) => {
    const clock = virtual(t);
    const f = origins(clock, { [A]: 503, [B]: { status: 503, delayMs: 100 } });
    const gate = make({ baseMs: 400, maxDelayMs: 400, jitter: 'none', consecutive: 1 });
    t.after(() => gate.free());
    const ac = new AbortController();
    const api = withBackoff(f, { ...FAST, maxAttempts: 10, gate, endpoints: failover([A, B]) });
    const call = api(`${A}/held`, { signal: ac.signal });
    call.catch(() => {});
    await clock.to(200);
    ac.abort();
    await assert.rejects(clock.run(call), { name: 'AbortError' });
    assert.deepEqual(at(f.sent), ['a@0', `b@${retryAt}`], 'nothing sent after the abort');
    await clock.to(2000);
    assert.deepEqual(at(f.sent), ['a@0', `b@${retryAt}`], 'nor later');
    assert.deepEqual(
      [A, B].map((x) => gate.state(x).held),
      [0, 0],
      'held by neither queue',
    );
    await clock.run(gate.flush?.() ?? Promise.resolve());
    assert.equal(clock.timers(), 0, 'no watch or hold timer left');
  });
}

test('weighted endpoints share first attempts by weight', async (t) => {
  const clock = virtual(t);
  const [na, nb] = await split(clock, [4, 1], 200);
  // (binomial(200, 0.8): mean 160, sd 5.7; outside [130, 190] p < 1e-6; an even split or all on a fails)
  assert.ok(na + nb === 200 && na >= 130 && na <= 190, `a ${na}, b ${nb}`);
});

test('weights whose sum overflows still share first attempts by weight', async (t) => {
  const clock = virtual(t);
  const [na, nb] = await split(clock, [1e308, 1e308], 60);
  // (binomial(60, 0.5): mean 30, sd 3.9; below 10 either way p < 1e-6; all on one endpoint fails)
  assert.ok(na + nb === 60 && na >= 10 && nb >= 10, `a ${na}, b ${nb}`);
});

/** Where the first attempts of `n` calls for a went, with the weights `wa` and `wb` of a and b: [to a, to b]. */
async function split(clock, [wa, wb], n) {
  const f = origins(clock, { [A]: 200, [B]: 200 });
  const api = withBackoff(f, {
    endpoints: failover([
      { url: A, weight: wa },
      { url: new URL(B), weight: wb },
    ]),
  });
  for (let i = 0; i < n; i++) await clock.run(api(`${A}/weighted`));
  return [f.of(A).count, f.of(B).count];
}

test('weighted first attempts are drawn exactly by the normalised weights, at either end of the doubles', async (t) => {
  const clock = virtual(t);
  // Math.random stubbed: u lands in the first endpoint's share iff u < w0 / (w0 + w1).
  const cases = [
    [3, 1, 0.74, A],
    [3, 1, 0.76, B],
    [1e308, 1e308, 0.25, A], // (their sum overflows to Infinity)
    [1e308, 1e308, 0.75, B],
    [Number.MAX_VALUE, Number.MAX_VALUE / 3, 0.74, A],
    [Number.MAX_VALUE, Number.MAX_VALUE / 3, 0.76, B],
    [5e-324, 5e-324, 0.4, A], // (the smallest subnormals: their products round to 0 or 5e-324)
    [5e-324, 5e-324, 0.6, B],
  ];
  const f = origins(clock, { [A]: 200, [B]: 200 });
  const random = Math.random;
  t.after(() => (Math.random = random));
  for (const [wa, wb, u, want] of cases) {
    let done;
    const api = withBackoff(f, {
      endpoints: failover([
        { url: A, weight: wa },
        { url: B, weight: wb },
      ]),
      onDone: (d) => (done = d),
    });
    Math.random = () => u;
    const res = await clock.run(api(`${A}/draw`));
    Math.random = random;
    assert.equal(res.status, 200);
    assert.equal(done.endpoint, want, `weights ${wa}, ${wb}, u = ${u}`);
  }
});

test('hedging and failover together: a hedge goes to the same endpoint, the round’s retry fails over', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, { [A]: { status: 503, delayMs: 100 }, [B]: { status: 200, body: 'b' } });
  let done;
  const api = withBackoff(f, { ...FAST, endpoints: failover([A, B]), hedge: hedge({ delayMs: 50 }), onDone: (d) => (done = d) });
  assert.equal(await (await clock.run(api(`${A}/both`))).text(), 'b');
  assert.deepEqual(at(f.sent), ['a@0', 'a@50', 'b@170'], 'the race ends at 150 with both 503s; 20 ms later, the retry to b');
  assert.deepEqual([done.endpoint, done.won, done.hedges, done.attempts], [B, 3, 1, 3]);
});

test('a request for an origin not in the list is sent to its own origin, untouched; with a gate, its circuit is its own', async (t) => {
  const clock = virtual(t);
  const f = origins(clock, {
    [A]: { status: 200, body: 'from a' },
    [B]: { status: 200, body: 'from b' },
    [C]: { '/unlisted': [503, { status: 200, body: 'from c' }], '/unlisted-gate': 503 },
  });
  let done;
  const api = withBackoff(f, { ...FAST, endpoints: failover([A, B]), onDone: (d) => (done = d) });
  const res = await clock.run(api(`${C}/unlisted?q=1`, { headers: { authorization: 'Bearer token-for-C' } }));
  assert.equal(await res.text(), 'from c');
  assert.deepEqual(at(f.sent), ['c@0', 'c@20'], 'the attempt and its retry, both to its own origin');
  for (const s of f.sent) assert.deepEqual([s.url, s.headers.authorization], ['/unlisted?q=1', 'Bearer token-for-C']);
  assert.deepEqual([done.endpoint, done.attempts], [undefined, 2]);
  const gate = createGate({ baseMs: 400, maxDelayMs: 400, jitter: 'none', consecutive: 1 });
  t.after(() => gate.free());
  const g = withBackoff(f, { ...FAST, gate, maxAttempts: 1, endpoints: failover([A, B]) });
  assert.equal((await clock.run(g(`${C}/unlisted-gate`))).status, 503, 'the answer of its own origin');
  assert.deepEqual(at(f.sent).slice(2), ['c@20'], 'sent to its own origin alone');
  assert.deepEqual(
    [C, A, B].map((x) => gate.state(x).state),
    ['open', 'closed', 'closed'],
  );
});

/** The credential headers fetch drops on a cross-origin redirect. */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

test("a request's credentials reach only its own origin: a move to another endpoint drops them, unless it opted in", async (t) => {
  const clock = virtual(t);
  const headers = {
    authorization: 'Bearer token-for-A',
    cookie: 'session=for-a',
    'proxy-authorization': 'Basic cHJveHk6Zm9yLWE=',
    'x-keep': 'kept',
  };
  // Headers in init, in a Request, and in a Request whose headers the driver rebuilds (attemptHeader).
  const forms = [
    ['init', (u) => [u, { headers }], {}],
    ['Request', (u) => [new Request(u, { headers })], {}],
    ['Request + attemptHeader', (u) => [new Request(u, { headers })], { attemptHeader: 'x-attempt' }],
  ];
  for (const [form, args, more] of forms) {
    const f = origins(clock, { [A]: 503, [B]: { status: 200, body: 'from b' } });
    const hook = [];
    const api = withBackoff(f, {
      ...FAST,
      ...more,
      endpoints: failover([A, B]),
      beforeRetry: ({ request }) => void hook.push(CREDENTIALS.filter((h) => request.headers.has(h))),
    });
    const res = await clock.run(api(...args(`${A}/creds?q=1`)));
    assert.equal(await res.text(), 'from b', form);
    const [ra, rb] = f.sent;
    assert.deepEqual(
      at(f.sent).map((s) => s[0]),
      ['a', 'b'],
      form,
    );
    assert.deepEqual(
      CREDENTIALS.map((h) => ra.headers[h]),
      [headers.authorization, headers.cookie, headers['proxy-authorization']],
      `${form}: its own origin got them`,
    );
    assert.deepEqual(
      CREDENTIALS.filter((h) => rb.headers[h] !== undefined),
      [],
      `${form}: the other endpoint got none`,
    );
    assert.deepEqual([rb.headers['x-keep'], rb.url], ['kept', '/creds?q=1'], `${form}: other headers and the path stay`);
    assert.deepEqual(hook, [[]], `${form}: beforeRetry's request carried none`);
  }
  // An endpoint that says so takes them (only it: the list's other origin does not).
  const f = origins(clock, { [A]: { '/creds-opt-in': 503, '/creds-other-way': 200 }, [B]: 503 });
  const api = withBackoff(f, { ...FAST, maxAttempts: 3, endpoints: failover([A, { url: B, credentials: true }]) });
  await clock.run(api(`${A}/creds-opt-in`, { headers }));
  assert.deepEqual(
    at(f.sent).map((s) => s[0]),
    ['a', 'b', 'a'],
  );
  for (const s of f.sent)
    assert.deepEqual(
      CREDENTIALS.map((h) => s.headers[h]),
      [headers.authorization, headers.cookie, headers['proxy-authorization']],
    );
  // A request for b starts at the preferred a, which did not opt in.
  f.sent.length = 0;
  await clock.run(api(`${B}/creds-other-way`, { headers: { ...headers, authorization: 'Bearer token-for-B' } }));
  assert.deepEqual(
    at(f.sent).map((s) => s[0]),
    ['a'],
  );
  assert.deepEqual(
    CREDENTIALS.filter((h) => f.sent[0].headers[h] !== undefined),
    [],
    'a request for b moved to a carried none',
  );
});

test('bad endpoints throw, naming the option', () => {
  const bad = [
    ['x', TypeError],
    [[], RangeError],
    [['/relative'], TypeError],
    [['not a url'], TypeError],
    [['ftp://a.example'], RangeError],
    [['https://a.example/api'], RangeError],
    [['https://a.example?x=1'], RangeError],
    [[A, `${A}/`], RangeError],
    [[{ url: A, weight: 0 }], RangeError],
    [[{ url: A, weight: -1 }], RangeError],
    [[{ url: A, weight: Infinity }], RangeError],
    [[{ url: A, weight: '2' }], TypeError],
    [[{ url: A, weight: null }], TypeError, 'endpoints[0].weight'],
    [[A, { url: B, weight: Number.NaN }], RangeError, 'endpoints[1].weight'],
    [[A, { url: B, credentials: 'yes' }], TypeError, 'endpoints[1].credentials'],
    [[{ url: A, credentials: 1 }], TypeError, 'endpoints[0].credentials'],
    [[{ url: A, credentials: null }], TypeError, 'endpoints[0].credentials'],
    [[5], TypeError],
  ];
  for (const [endpoints, type, name = 'endpoints'] of bad) {
    const e = thrown(() => failover(endpoints));
    assert.ok(e instanceof type && e.message.startsWith(name), `failover(${JSON.stringify(endpoints)}): ${e}`);
  }
  // (credentials: false, and a weight with it, are fine)
  assert.ok(failover([{ url: A, credentials: false, weight: 2 }, B]).weighted, 'credentials: false');
  const e = thrown(() => withBackoff(fetch, { endpoints: [A] }));
  assert.ok(e instanceof TypeError && e.message.includes("'wasm-backoff/failover'"), `plain array: ${e}`);
});

// ---- the runtime: real servers, real time (outcomes and order only)

let sa, sb;
after(() => Promise.all([sa?.close(), sb?.close()]));

for (const [name, fn] of Object.entries(SMOKES)) {
  test(`Node's fetch, real servers: ${name}`, async () => {
    if (!sa) [sa, sb] = await Promise.all([startScripted(), startScripted()]);
    await fn({ ...main, createGate: pkgGate, hedge: pkgHedge, failover: pkgFailover }, control(sa.url), control(sb.url));
  });
}
