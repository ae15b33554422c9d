// The smokes of a fleet's shared gate where the runtime is the subject, in
// real workerd (miniflare): Workers a–e (each its own isolate,
// tests/workerd/fleet-faults.mjs) and the GateObject of the target (defined
// by `host`), against the scripted server on 127.0.0.1. The object's
// storage keeps an open circuit across a restart of the whole process; a
// request that ends before its report is answered (workerd never settles
// that round trip for another request) leaves its isolate going on.
// Outcomes and order, never a duration: fail-fast through the object, an
// aborted probe, an object that throws, is unreachable or answers late, a
// lost probe or lease, are timing logic, asserted to the millisecond on
// virtual time in gate.node.test.mjs. The two share one fleet (its objects'
// storage on disk), in this order.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Miniflare } from 'miniflare';
import { startScripted } from '../server/scripted.mjs';
import { answerOf, workerOptions } from '../support/workerd.mjs';
import { until } from '../support/wait.mjs';

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

/** Workers host and a–e in one workerd, the objects' storage in `dir` (a round of 100 ms). */
function fleet() {
  const options = (name) => ({ ...workerOptions('fleet-faults.mjs', { NAME: name, ORIGIN: srv.url, BASE_MS: '100' }), name });
  const mf = new Miniflare({
    workers: [
      { ...options('host'), durableObjects: { GATES: { className: 'GateObject', useSQLite: true } } },
      ...ISOLATES.map((n) => ({ ...options(n), durableObjects: { GATES: { className: 'GateObject', scriptName: 'host' } } })),
    ],
    durableObjectsPersist: path.join(dir, 'objects'),
  });
  fleets.add(mf);
  return mf;
}

async function dispose(mf) {
  fleets.delete(mf);
  await mf.dispose();
}

const key = () => encodeURIComponent(srv.url);
const byOf = (r) => new URL(r.url, 'http://x').searchParams.get('by');

/** No unhandled rejection in any isolate of `mf`. */
async function noUnhandled(mf) {
  for (const n of ISOLATES) assert.deepEqual(await answerOf(mf, n, '/unhandled'), [], `unhandled rejections in ${n}`);
}

let mf;

test('a request that ends before its failure report is answered (no flush handed to waitUntil): flush() still settles, and the isolate’s calls go straight out', {
  timeout: 20_000,
}, async () => {
  mf = fleet();
  srv.script('/cut', { status: 503 });
  srv.script('/fine', { status: 200, body: 'ok' });
  const cut = await answerOf(mf, 'a', '/cut?path=/cut');
  assert.equal(cut.status, 503);
  // (its report, due on a timer of the ended request, is lost with it: flush() gives it up)
  await answerOf(mf, 'a', '/flush');
  const calls = await answerOf(mf, 'a', '/calls?n=2&max=1&path=/fine');
  assert.deepEqual(
    calls.out.map((o) => o.status),
    [200, 200],
  );
  assert.equal(srv.count('/fine'), 2);
  await noUnhandled(mf);
});

test('the object keeps an open circuit across a restart of the process (persisted storage); one probe then closes it', {
  timeout: 30_000,
}, async () => {
  let seenByC = 0;
  srv.script('/rs', (req) => (byOf(req) === 'c' && seenByC++ >= 2 ? { status: 200, body: 'ok' } : { status: 503 }));
  await answerOf(mf, 'a', '/calls?n=3&max=1&path=/rs');
  // (a's reports reach the object after /calls answered, on its waitUntil, and the first may carry one
  // or two of the three failures if their 503s came back apart: read until the object holds it open)
  const before = await until('the object to hold the circuit open', async () => {
    const s = await answerOf(mf, 'a', `/state?key=${key()}`);
    return s.target && s.target.state !== 'closed' ? s : undefined;
  });

  await dispose(mf);
  mf = fleet();
  const again = await answerOf(mf, 'b', `/state?key=${key()}`);
  assert.notEqual(again.state, 'closed', 'the restarted object still holds the circuit open');
  // (its round's end in the object's own clock, which workerd moves only at I/O: not compared)
  const { untilMs: _was, ...saved } = before.target;
  const { untilMs: _is, ...restored } = again.target;
  assert.deepEqual(restored, saved, 'the circuit as it was saved: open, its round, its failures');

  // c (a fresh isolate) fails twice: below the threshold, a fresh object would let each call retry
  // on its own; the restarted one answers open, so c holds both and the object grants one probe.
  const c = await answerOf(mf, 'c', '/calls?n=2&max=10&path=/rs');
  assert.deepEqual(
    c.out.map((o) => o.status),
    [200, 200],
  );
  assert.ok(c.rpcs.admit >= 1 && c.rpcs.probed === 1, JSON.stringify(c.rpcs));
  assert.equal(srv.requests.filter((r) => r.path === '/rs' && byOf(r) === 'c').length, 4, 'two first tries, one probe, one released call');
  assert.equal((await answerOf(mf, 'a', `/object?key=${key()}`)).gate.probes, 1);
  const closed = await answerOf(mf, 'a', `/state?key=${key()}`);
  assert.deepEqual([closed.state, closed.target], ['closed', null], 'closed and clean');
  await noUnhandled(mf);
  await dispose(mf);
});
