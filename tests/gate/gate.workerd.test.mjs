// The backoff gate in workerd (miniflare): fan-out within one incoming
// request, and one gate shared by concurrent incoming requests (workerd
// cancels a request whose promise another request resolves; there, held
// calls poll from their own context: see POLL in js/gate.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { worker } from '../support/workerd.mjs';
import { startScripted } from '../server/scripted.mjs';

let mf, srv;
before(async () => {
  srv = await startScripted();
  mf = worker('gate.mjs', { ORIGIN: srv.url });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

/** Down (503) for the first `n` requests to `p`, then 200 with the call's `i`. */
function downFor(p, n) {
  let k = 0;
  srv.script(p, (req) => (k++ < n ? { status: 503 } : { status: 200, body: new URL(req.url, 'http://x').searchParams.get('i') }));
}

test('fan-out inside one request: one probe per round, then every call in order', { timeout: 30_000 }, async () => {
  downFor('/gate-fanout', 13); // the 10 first tries and 3 probes
  const res = await mf.dispatchFetch('http://worker.test/fanout');
  const { bodies, calls, stats } = await res.json();
  assert.deepEqual(
    bodies,
    Array.from({ length: 10 }, (_, i) => String(i)),
  );
  assert.equal(stats.probes, 4);
  assert.equal(stats.rounds, 4);
  // A probe per round, then the others released oldest call first. (Which call probes is the oldest
  // held when the round ends: call 0 unless its 503 is handled after the first 20 ms round.)
  const [probes, released] = [calls.slice(10, 14), calls.slice(14)];
  assert.deepEqual(
    released,
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].filter((i) => i !== probes[3]),
  );
  assert.equal(srv.count('/gate-fanout'), 10 + 4 + 9);
});

test('a gate shared by concurrent incoming requests', { timeout: 30_000 }, async () => {
  downFor('/gate-shared', 8);
  const res = await Promise.all(
    Array.from({ length: 5 }, (_, i) => mf.dispatchFetch(`http://worker.test/shared?i=${i}`).then((r) => r.json())),
  );
  assert.deepEqual(
    res.map((r) => r.body),
    ['0', '1', '2', '3', '4'],
  );
  // Calls that arrive during the backoff are held without a first try, so
  // how many rounds the 8 failures make depends on arrival times; but each
  // round had one probe, and after recovery each held call was sent once.
  const { rounds, probes } = res.find((r) => r.stats.probes === Math.max(...res.map((x) => x.stats.probes))).stats;
  assert.equal(rounds, probes, 'one probe per round');
  assert.equal(srv.count('/gate-shared'), 8 + 1 + 4);
});
