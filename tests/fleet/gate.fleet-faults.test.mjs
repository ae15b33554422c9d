// The fault paths of a fleet's shared gate, in real workerd (miniflare):
// Workers a–e (each its own isolate, tests/workerd/fleet-faults.mjs) and the
// GateObject of the target (defined by `host`), against the scripted server
// on 127.0.0.1. Fail-fast mode through the object; the object's circuits
// across a restart of the whole process (persisted storage); a probe the
// caller aborts; an object that fails (or a stub that cannot be had).
// Each test has a fleet of its own (the target's object starts clean).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Miniflare } from 'miniflare';
import { startScripted } from '../server/scripted.mjs';
import { workerOptions } from '../support/workerd.mjs';
import { sleep, until } from '../support/wait.mjs';

const ISOLATES = ['a', 'b', 'c', 'd', 'e'];

let srv, dir;
const fleets = new Set();
before(async () => {
  srv = await startScripted();
  dir = mkdtempSync(path.join(tmpdir(), 'fleet-faults-'));
});
after(async () => {
  await Promise.all([...fleets].map((f) => f.dispose()));
  await srv?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Workers host and a–e in one workerd; `env`: MODE, BASE_MS, POLL_MS; `className`: the objects' class; `persist`: their storage's directory. */
function fleet({ env, className = 'GateObject', persist }) {
  const options = (name) => ({
    ...workerOptions('fleet-faults.mjs', { NAME: name, ORIGIN: srv.url, MODE: 'hold', POLL_MS: '2000', ...env }),
    name,
  });
  const mf = new Miniflare({
    workers: [
      { ...options('host'), durableObjects: { GATES: { className, useSQLite: true } } },
      ...ISOLATES.map((n) => ({ ...options(n), durableObjects: { GATES: { className, scriptName: 'host' } } })),
    ],
    ...(persist ? { durableObjectsPersist: persist } : {}),
  });
  fleets.add(mf);
  return mf;
}

async function dispose(mf) {
  fleets.delete(mf);
  await mf.dispose();
}

/** Worker `name` of `mf` answers `route` (JSON). */
async function call(mf, name, route) {
  const res = await (await mf.getWorker(name)).fetch(`http://worker${route}`);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

const key = () => encodeURIComponent(srv.url);
const byOf = (r) => new URL(r.url, 'http://x').searchParams.get('by');
const reqs = (p) => srv.requests.filter((r) => r.path === p);

/** No unhandled rejection in any isolate of `mf`. */
async function noUnhandled(mf) {
  for (const n of ISOLATES) assert.deepEqual(await call(mf, n, '/unhandled'), [], `unhandled rejections in ${n}`);
}

test("fail-fast through the object: past the fleet's threshold every isolate refuses at once, nothing sent; after the round one probe closes it", {
  timeout: 20_000,
}, async () => {
  // (a 3 s round: the checks below must run within it, on a loaded machine too)
  const mf = fleet({ env: { MODE: 'fail-fast', BASE_MS: '3000' } });
  let up = false;
  srv.script('/ff', () => (up ? { status: 200, body: 'ok' } : { status: 503 }));
  // a sees 3 failures (the fleet's threshold): its report trips the object.
  const tripped = await call(mf, 'a', '/calls?n=3&max=1&path=/ff');
  const t0 = performance.now();
  assert.deepEqual(
    tripped.out.map((o) => o.status),
    [503, 503, 503],
  );
  const s = await call(mf, 'a', `/state?key=${key()}`);
  assert.equal(s.state, 'open', JSON.stringify(s));
  // b–e have seen nothing: their first call goes out (no round trip while healthy), and its
  // failure's report answers the object's state, so the call's retry is refused.
  const learn = await Promise.all(ISOLATES.slice(1).map((n) => call(mf, n, '/calls?n=1&max=5&path=/ff')));
  for (const l of learn) {
    assert.equal(l.out[0].error, 'BrokenCircuitError', JSON.stringify(l));
    assert.ok(l.out[0].retryAfterMs > 0, JSON.stringify(l));
  }
  assert.equal(srv.count('/ff'), 3 + 4, 'one request from each of b–e');
  // Now every isolate refuses at once, with the object's round's remaining wait.
  const refused = await Promise.all(ISOLATES.map((n) => call(mf, n, '/calls?n=2&max=5&path=/ff')));
  const took = performance.now() - t0;
  assert.ok(took < 2800, `${took.toFixed(0)} ms: still within the round (a loaded machine?)`);
  for (const r of refused) {
    for (const o of r.out) {
      assert.equal(o.error, 'BrokenCircuitError', JSON.stringify(r));
      assert.ok(o.retryAfterMs > 0 && o.retryAfterMs <= 3000, JSON.stringify(o));
    }
  }
  assert.equal(srv.count('/ff'), 7, 'nothing sent while open');
  // After the round: one probe (from a) closes the shared circuit; then b–e go straight out.
  up = true;
  const wait = Math.max(...refused.flatMap((r) => r.out.map((o) => o.retryAfterMs)));
  await sleep(wait + 100);
  const probe = await call(mf, 'a', '/calls?n=1&max=5&path=/ff');
  assert.equal(probe.out[0].status, 200);
  assert.equal(probe.rpcs.probed, 1, 'a was the fleet probe');
  assert.equal((await call(mf, 'b', `/state?key=${key()}`)).state, 'closed');
  const rest = await Promise.all(ISOLATES.slice(1).map((n) => call(mf, n, '/calls?n=1&max=5&path=/ff')));
  for (const r of rest) assert.equal(r.out[0].status, 200, JSON.stringify(r));
  const obj = await call(mf, 'a', `/object?key=${key()}`);
  assert.equal(obj.gate.probes, 1, `one probe: ${JSON.stringify(obj)}`);
  assert.equal(srv.count('/ff'), 7 + 1 + 4);
  await noUnhandled(mf);
  await dispose(mf);
});

test('the object keeps an open circuit across a restart of the process (persisted storage); one probe then closes it', {
  timeout: 30_000,
}, async () => {
  const persist = path.join(dir, 'restart');
  const env = { BASE_MS: '300' };
  let mf = fleet({ env, persist });
  let seenByC = 0;
  srv.script('/rs', (req) => (byOf(req) === 'c' && seenByC++ >= 2 ? { status: 200, body: 'ok' } : { status: 503 }));
  await call(mf, 'a', '/calls?n=3&max=1&path=/rs');
  const before = await call(mf, 'a', `/state?key=${key()}`);
  assert.notEqual(before.state, 'closed');
  assert.ok(before.target && before.target.state !== 'closed', JSON.stringify(before));

  const t0 = performance.now();
  await dispose(mf);
  mf = fleet({ env, persist });
  const again = await call(mf, 'b', `/state?key=${key()}`);
  console.log(`  restart: ${(performance.now() - t0).toFixed(0)} ms; before ${JSON.stringify(before)}; after ${JSON.stringify(again)}`);
  assert.notEqual(again.state, 'closed', 'the restarted object still holds the circuit open');
  assert.deepEqual(again.target, before.target, 'the circuit as it was saved');

  // c (a fresh isolate) fails twice: below the threshold, a fresh object would let each call retry
  // on its own; the restarted one answers open, so c holds both and the object grants one probe.
  const c = await call(mf, 'c', '/calls?n=2&max=10&path=/rs');
  assert.deepEqual(
    c.out.map((o) => o.status),
    [200, 200],
  );
  assert.ok(c.rpcs.admit >= 1 && c.rpcs.probed === 1, JSON.stringify(c.rpcs));
  const fromC = reqs('/rs').filter((r) => byOf(r) === 'c');
  assert.equal(fromC.length, 4, 'two first tries, one probe, one released call');
  const obj = await call(mf, 'a', `/object?key=${key()}`);
  assert.equal(obj.gate.probes, 1, JSON.stringify(obj));
  const closed = await call(mf, 'a', `/state?key=${key()}`);
  assert.equal(closed.state, 'closed');
  assert.equal(closed.target, null, 'closed and clean');
  await noUnhandled(mf);
  await dispose(mf);
});

test('a probe its caller aborts: the next call (this isolate or another) becomes the probe, nothing stuck', {
  timeout: 20_000,
}, async () => {
  const mf = fleet({ env: { BASE_MS: '100', POLL_MS: '5000' } });
  const n = { a: 0, b: 0 };
  srv.script('/ab', (req) => {
    const by = byOf(req);
    const i = n[by]++;
    if (by === 'a') return i < 3 ? { status: 503 } : i === 3 ? { hang: true } : { status: 200, body: 'ok' };
    return i === 0 ? { status: 503 } : { status: 200, body: 'ok' };
  });
  await call(mf, 'a', '/calls?n=3&max=1&path=/ab');
  // a's first call probes (after the round) and hangs until its signal aborts it; a's second is held behind it.
  const t0 = performance.now();
  const a = call(mf, 'a', '/calls?n=2&max=10&abortMs=800&path=/ab');
  await until('the probe to hang', () => n.a === 4);
  // b fails once, learns of the open circuit and waits at the object.
  const b = call(mf, 'b', '/calls?n=1&max=10&path=/ab');
  const [ra, rb] = await Promise.all([a, b]);
  const took = performance.now() - t0;
  console.log(`  ${took.toFixed(0)} ms; a ${JSON.stringify(ra)}; b ${JSON.stringify(rb)}`);
  assert.equal(ra.out[0].error, 'TimeoutError', 'the aborted probe');
  assert.equal(ra.out[1].status, 200);
  assert.equal(rb.out[0].status, 200);
  assert.ok(took < 4000, `${took.toFixed(0)} ms: no one waited out a ${5000} ms poll`);
  const obj = await call(mf, 'a', `/object?key=${key()}`);
  assert.equal(obj.gate.probes, 2, `the aborted probe and the next: ${JSON.stringify(obj)}`);
  assert.equal(obj.rpcs.probed, 2, 'both reported (the first as cancelled)');
  assert.equal(srv.count('/ab'), 3 + 1 + 1 + 1 + 1, "a's 3 and its aborted probe, b's first try, the probe, the released call");
  assert.equal((await call(mf, 'a', `/state?key=${key()}`)).state, 'closed');
  await noUnhandled(mf);
  await dispose(mf);
});

test('an object whose every RPC throws: each isolate goes on with its local gate, every call completes', { timeout: 20_000 }, async () => {
  const mf = fleet({ env: { BASE_MS: '50' }, className: 'BrokenGate' });
  let downUntil;
  srv.script('/bk', () => {
    downUntil ??= performance.now() + 400;
    return performance.now() < downUntil ? { status: 503 } : { status: 200, body: 'ok' };
  });
  const out = await Promise.all(['a', 'b'].map((n) => call(mf, n, '/calls?n=3&max=50&path=/bk')));
  for (const o of out) {
    assert.deepEqual(
      o.out.map((x) => x.status),
      [200, 200, 200],
      JSON.stringify(o),
    );
    assert.ok(o.rpcs.report >= 1, 'the failures were reported (and the reports failed)');
    assert.equal(o.local.state, 'closed');
  }
  assert.ok(srv.count('/bk') > 6, 'each call retried on its own');
  await noUnhandled(mf);
  await dispose(mf);
});

test('the object becomes unreachable mid-outage (stubs that reject, or cannot be had): the isolates probe on their own', {
  timeout: 20_000,
}, async () => {
  const mf = fleet({ env: { BASE_MS: '100' } });
  let phase = 'down';
  srv.script('/mid', (req) => {
    if (phase === 'down') return { status: 503 };
    // a's probe is slow: its stub breaks while it is out
    return byOf(req) === 'a' ? { status: 200, body: 'ok', delayMs: 300 } : { status: 200, body: 'ok' };
  });
  await call(mf, 'a', '/calls?n=3&max=1&path=/mid');
  await call(mf, 'b', '/calls?n=1&max=1&path=/mid');
  // Down for the fleet: open, or half-open once the 100 ms round is over (a loaded machine gets there first).
  const { state } = await call(mf, 'b', `/state?key=${key()}`);
  assert.ok(state === 'open' || state === 'half-open', state);
  await call(mf, 'b', '/break?how=reject');
  phase = 'up';
  const sent = srv.count('/mid');
  const a = call(mf, 'a', '/calls?n=2&max=10&path=/mid');
  await until("a's probe to be out", () => srv.count('/mid') > sent);
  await call(mf, 'a', '/break?how=throw');
  const b = call(mf, 'b', '/calls?n=2&max=10&path=/mid');
  const [ra, rb] = await Promise.all([a, b]);
  for (const r of [ra, rb]) {
    assert.deepEqual(
      r.out.map((o) => o.status),
      [200, 200],
      JSON.stringify(r),
    );
    assert.equal(r.local.state, 'closed');
  }
  assert.equal(ra.rpcs.probed, 1, "a's probe was the fleet's: its report's stub threw");
  assert.ok(rb.rpcs.admit >= 1 && rb.rpcs.probed === 0, `b asked, was refused an answer, and probed alone: ${JSON.stringify(rb.rpcs)}`);
  await noUnhandled(mf);
  await dispose(mf);
});

/** `p`, or 'no answer in 5 s' (a request that never answers fails its test rather than hanging it). */
const answered = (p) => Promise.race([p, sleep(5000).then(() => 'no answer in 5 s')]);
const late = (o) => ['TimeoutError', 'GateTimeoutError'].includes(o?.error);

test("a request that ends before its failure report is answered (no flush handed to waitUntil): its isolate's later calls keep their deadline and abort, then go on; flush() settles", {
  timeout: 30_000,
}, async () => {
  // The object answers reports 300 ms late: the request that made one has ended by then, and workerd
  // never settles its round trip for another request.
  const mf = fleet({ env: { BASE_MS: '100', SLOW: 'report', DELAY_MS: '300' }, className: 'SlowGate' });
  srv.script('/cut', { status: 503 });
  srv.script('/fine', { status: 200, body: 'ok' });
  const cut = await call(mf, 'a', '/cut?path=/cut');
  assert.equal(cut.status, 503);
  const t0 = performance.now();
  // (a call that waited for the lost report would end when flush() gives it up, at 1 s: the bounds below
  // leave a loaded machine half a second and still tell that apart)
  const [dl, ab, fl] = await Promise.all([
    answered(call(mf, 'a', '/calls?n=1&max=1&ms=300&path=/fine')),
    answered(call(mf, 'a', '/calls?n=1&max=1&abortMs=200&path=/fine')),
    answered(call(mf, 'a', '/flush')),
  ]);
  console.log(
    `  ${(performance.now() - t0).toFixed(0)} ms; deadline ${JSON.stringify(dl)}; abort ${JSON.stringify(ab)}; flush ${JSON.stringify(fl)}`,
  );
  assert.ok(late(dl.out?.[0]) && dl.out[0].ms < 300 + 500, `a 300 ms deadline: ${JSON.stringify(dl)}`);
  assert.equal(ab.out?.[0].error, 'TimeoutError', JSON.stringify(ab));
  assert.ok(ab.out[0].ms < 200 + 500, `an abort at 200 ms: ${JSON.stringify(ab)}`);
  assert.ok(fl.ms < 1000 + 500, `flush() gives up the lost report (1 s): ${JSON.stringify(fl)}`);
  // The lost report is given up: the isolate's calls go straight out again.
  const after = await answered(call(mf, 'a', '/calls?n=2&max=1&path=/fine'));
  assert.deepEqual(
    after.out?.map((o) => o.status),
    [200, 200],
    JSON.stringify(after),
  );
  for (const o of after.out) assert.ok(o.ms < 600, JSON.stringify(after));
  assert.equal(srv.count('/fine'), 2, 'the calls cut by their deadline or abort sent nothing');
  await noUnhandled(mf);
  await dispose(mf);
});

test("the fleet's limiter: a lease cut with its request is given up; flush() settles and the next throttle reports again", {
  timeout: 20_000,
}, async () => {
  // The object answers leases 300 ms late: the request that asked has ended by then.
  const mf = fleet({ env: { BASE_MS: '100', SLOW: 'lease', DELAY_MS: '300' }, className: 'SlowGate' });
  srv.script('/thr', { status: 429 });
  const cut = await call(mf, 'a', '/cut?lim=1&path=/thr');
  assert.equal(cut.status, 429);
  const fl = await answered(call(mf, 'a', '/flush?lim=1'));
  assert.ok(fl.ms < 1000 + 500, `flush() gives up the lost lease (1 s): ${JSON.stringify(fl)}`);
  // The next throttle finds the lease given up: it is asked for again (this isolate alone meanwhile), and answered.
  const again = await answered(call(mf, 'a', '/calls?lim=1&n=1&max=1&path=/thr'));
  assert.equal(again.out?.[0].status, 429, JSON.stringify(again));
  const after = await answered(call(mf, 'a', '/flush?lim=1'));
  console.log(`  flush ${JSON.stringify(fl)}; after the next throttle ${JSON.stringify(after)}`);
  assert.equal(after.rpcs.lease, fl.rpcs.lease + 1, JSON.stringify(after));
  assert.ok(after.share.alone === false && after.share.rate < Infinity, `a share from the object: ${JSON.stringify(after.share)}`);
  await noUnhandled(mf);
  await dispose(mf);
});

/** A call of a with a 500 ms deadline and one of b aborted at 300 ms, to `path` together: each ends on time. */
async function onTime(mf, path, what) {
  const [dl, ab] = await Promise.all([
    answered(call(mf, 'a', `/calls?n=1&max=5&ms=500&path=${path}`)),
    answered(call(mf, 'b', `/calls?n=1&max=5&abortMs=300&path=${path}`)),
  ]);
  console.log(`  ${what}: deadline ${JSON.stringify(dl)}; abort ${JSON.stringify(ab)}`);
  // (the object answers in 5 s or 60 s: a second's slack on a loaded machine still tells them apart)
  assert.ok(late(dl.out?.[0]) && dl.out[0].ms < 500 + 1000, `${what}: a 500 ms deadline: ${JSON.stringify(dl)}`);
  assert.ok(ab.out?.[0].error === 'TimeoutError' && ab.out[0].ms < 300 + 1000, `${what}: an abort at 300 ms: ${JSON.stringify(ab)}`);
  return [dl, ab];
}

test("an object that answers late (a report 60 s, an admit 5 s): a call ends at its deadline or its abort, not at the object's answer", {
  timeout: 30_000,
}, async () => {
  srv.script('/slow', { status: 503 });
  // The failure's report is out while the call's retry waits for it.
  let mf = fleet({ env: { BASE_MS: '100', SLOW: 'report', DELAY_MS: '60000' }, className: 'SlowGate' });
  await onTime(mf, '/slow', 'report');
  await noUnhandled(mf);
  await dispose(mf);
  // The circuit open (reports answered at once): the local probe asks the object, which answers 5 s late.
  mf = fleet({ env: { BASE_MS: '100', SLOW: 'admit', DELAY_MS: '5000' }, className: 'SlowGate' });
  await call(mf, 'a', '/calls?n=3&max=1&path=/slow');
  await call(mf, 'b', '/calls?n=1&max=1&path=/slow');
  const [dl, ab] = await onTime(mf, '/slow', 'admit');
  assert.ok(dl.rpcs.admit >= 1 && ab.rpcs.admit >= 1, 'both asked the object');
  await noUnhandled(mf);
  await dispose(mf);
});

test('a probe whose outcome never reaches the object is let go when the fleet recovers: the object counts nothing in flight', {
  timeout: 20_000,
}, async () => {
  const mf = fleet({ env: { BASE_MS: '100', PROBE_TIMEOUT_MS: '300' } });
  let up = false;
  let bFailed = false;
  srv.script('/lost', (req) => {
    if (!up || (byOf(req) === 'b' && !bFailed && (bFailed = true))) return { status: 503 };
    return { status: 200, body: 'ok' };
  });
  await call(mf, 'a', '/calls?n=3&max=1&path=/lost');
  // a's probe is granted and succeeds, but its outcome is lost (its `probed` rejects).
  await call(mf, 'a', '/break?how=probed');
  up = true;
  const ra = await call(mf, 'a', '/calls?n=1&max=5&path=/lost');
  await call(mf, 'a', '/break?how=off');
  assert.equal(ra.out[0].status, 200, JSON.stringify(ra));
  assert.equal(ra.rpcs.probed, 1, JSON.stringify(ra.rpcs));
  assert.equal((await call(mf, 'a', `/object?key=${key()}`)).gate.inFlight, 1, 'the lost probe, in flight at the object');
  // b fails once and learns of the circuit; once the lost probe has timed out (300 ms), b probes and closes it.
  const rb = await call(mf, 'b', '/calls?n=1&max=5&path=/lost');
  assert.equal(rb.out[0].status, 200, JSON.stringify(rb));
  assert.equal(rb.rpcs.probed, 1, `b was the next probe: ${JSON.stringify(rb.rpcs)}`);
  const obj = await call(mf, 'a', `/object?key=${key()}`);
  console.log(`  object after the recovery: ${JSON.stringify(obj)}`);
  assert.equal((await call(mf, 'a', `/state?key=${key()}`)).state, 'closed');
  assert.equal(obj.gate.inFlight, 0, 'the lost probe let go');
  assert.equal(obj.gate.probes, 2);
  await noUnhandled(mf);
  await dispose(mf);
});
