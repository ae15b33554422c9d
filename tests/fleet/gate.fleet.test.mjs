// The smoke of a fleet's shared gate in real workerd (miniflare): five
// Workers (a–e, each its own isolate with its own module-level sharedGate)
// and the GateObject (defined by `host`) that keeps the target's circuit
// (tests/workerd/fleet.mjs), against the scripted server on 127.0.0.1. What
// only the runtime shows: the Durable Object really is one for every
// isolate. Outcomes and order, never a duration: the rounds, probes and
// reports are timing logic, asserted to the millisecond on virtual time in
// gate.node.test.mjs (the same code, its objects in-process).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Miniflare } from 'miniflare';
import { startScripted } from '../server/scripted.mjs';
import { answerOf, workerOptions } from '../support/workerd.mjs';

const ISOLATES = ['a', 'b', 'c', 'd', 'e'];

let srv, mf;
before(async () => {
  srv = await startScripted();
  const options = (name) => ({ ...workerOptions('fleet.mjs', { NAME: name, ORIGIN: srv.url, BASE_MS: '50' }), name });
  mf = new Miniflare({
    workers: [
      { ...options('host'), durableObjects: { GATES: { className: 'GateObject', useSQLite: true } } },
      ...ISOLATES.map((n) => ({ ...options(n), durableObjects: { GATES: { className: 'GateObject', scriptName: 'host' } } })),
    ],
  });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

const call = (name, route) => answerOf(mf, name, route);
const attempt = (r) => Number(/attempt=(\d+)/.exec(r.headers['x-attempt'] ?? '')?.[1]);
const NONE = { report: 0, admit: 0, probed: 0, lease: 0 };

test('five isolates, one object: healthy calls cost no round trip; a down origin gets one probe per round for the whole fleet, then every call succeeds once', {
  timeout: 30_000,
}, async () => {
  srv.script('/up', { status: 200, body: 'ok' });
  const healthy = await Promise.all(ISOLATES.map((n) => call(n, '/calls?n=10&path=/up')));
  for (const o of healthy) {
    assert.deepEqual(o.statuses, Array(10).fill(200));
    assert.deepEqual(o.rpcs, NONE, 'no round trip from the isolate');
  }
  assert.deepEqual((await call('a', `/object?key=${encodeURIComponent(srv.url)}`)).rpcs, NONE, 'the object answered nothing');

  // Down until every isolate's first tries (50) have come and two retries failed; then the next
  // succeeds. (Waiting for all 50: an isolate whose /calls came late would meet a recovered target,
  // its first tries would fail and open a second outage, with a round and probe of its own.)
  let firstTries = 0;
  let failed = 0;
  srv.script('/down', (req) => {
    if (attempt(req) === 1) {
      firstTries++;
      return { status: 503 };
    }
    if (firstTries >= 50 && failed >= 2) return { status: 200, body: 'ok' };
    failed++;
    return { status: 503 };
  });
  const out = await Promise.all(ISOLATES.map((n) => call(n, '/calls?n=10&path=/down')));
  for (const o of out) assert.deepEqual(o.statuses, Array(10).fill(200));
  const reqs = srv.requests.filter((r) => r.path === '/down');
  const obj = await call('a', `/object?key=${encodeURIComponent(srv.url)}`);
  // The 50 first tries (each sent before its isolate knew), then the retries: the failed probes (two,
  // more if an isolate came late), then the successful one and the 49 calls it released: each call
  // once after the recovery.
  assert.equal(reqs.filter((r) => attempt(r) === 1).length, 50);
  const later = reqs.filter((r) => attempt(r) > 1);
  assert.ok(failed >= 2, `${failed} failed retries`);
  assert.equal(later.length, failed + 50, `${later.length} retries, ${failed} failed`);
  assert.equal(new Set(later.slice(failed).map((r) => new URL(r.url, 'http://x').search)).size, 50, 'every call once after the recovery');
  // One probe per round for the whole fleet, granted by the one object: every failed retry was its
  // round's probe, and the success the last. With an object per isolate (or a gate per isolate), each
  // of the five would have probed on its own.
  assert.deepEqual([obj.gate.rounds, obj.gate.probes], [failed + 1, failed + 1], JSON.stringify(obj));
  assert.equal(
    out.reduce((s, o) => s + o.rpcs.probed, 0),
    failed + 1,
    'each probe reported once, by the isolate that sent it',
  );
});
