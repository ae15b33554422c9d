// A fleet behind one shared gate, in real workerd (miniflare): five Workers
// (a–e, each its own isolate with its own module-level sharedGate) and the
// GateObject (defined by `host`) that keeps the target's circuit
// (tests/workerd/fleet.mjs), against the scripted server on 127.0.0.1.
// Healthy calls cost no round trip to the object; against an origin that is
// down for a while, the whole fleet sends one probe per round (counted on
// the server), and every call then succeeds exactly once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { Miniflare } from 'miniflare';
import { startScripted } from '../server/scripted.mjs';
import { workerOptions } from '../support/workerd.mjs';

const ISOLATES = ['a', 'b', 'c', 'd', 'e'];
const BASE_MS = 50;

let srv, mf;
before(async () => {
  srv = await startScripted();
  const options = (name) => ({ ...workerOptions('fleet.mjs', { NAME: name, ORIGIN: srv.url, BASE_MS: String(BASE_MS) }), name });
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

/** Worker `name` answers `route` (JSON). */
async function call(name, route) {
  const res = await (await mf.getWorker(name)).fetch(`http://worker${route}`);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return JSON.parse(text);
}

const attempt = (r) => Number(/attempt=(\d+)/.exec(r.headers['x-attempt'] ?? '')?.[1]);

test('a healthy target: every call goes straight out, no round trip to the object', { timeout: 20_000 }, async () => {
  srv.script('/up', { status: 200, body: 'ok' });
  const out = await Promise.all(ISOLATES.map((n) => call(n, '/calls?n=10&path=/up')));
  for (const o of out) {
    assert.deepEqual(o.statuses, Array(10).fill(200));
    assert.deepEqual(o.rpcs, { report: 0, admit: 0, probed: 0, lease: 0 }, 'no round trip from the isolate');
  }
  const obj = await call('a', `/object?key=${encodeURIComponent(srv.url)}`);
  assert.deepEqual(obj.rpcs, { report: 0, admit: 0, probed: 0, lease: 0 }, 'the object answered nothing');
  assert.equal(srv.count('/up'), 50);
});

test('five isolates, one down origin: one probe per round fleet-wide, then every call succeeds once', { timeout: 30_000 }, async () => {
  const DOWN_MS = 1500;
  let downUntil;
  srv.script('/down', () => {
    downUntil ??= performance.now() + DOWN_MS;
    return performance.now() < downUntil ? { status: 503 } : { status: 200, body: 'ok' };
  });
  const t0 = performance.now();
  const out = await Promise.all(ISOLATES.map((n) => call(n, '/calls?n=10&path=/down')));
  const took = performance.now() - t0;
  for (const o of out) assert.deepEqual(o.statuses, Array(10).fill(200));

  const reqs = srv.requests.filter((r) => r.path === '/down');
  const down = reqs.filter((r) => r.at < downUntil);
  const firsts = down.filter((r) => attempt(r) === 1);
  const retries = down.filter((r) => attempt(r) > 1).map((r) => r.at);
  const ok = reqs.filter((r) => r.at >= downUntil);
  const obj = await call('a', `/object?key=${encodeURIComponent(srv.url)}`);
  const rounds = obj.gate.rounds;
  const gaps = retries.slice(1).map((t, i) => Math.round(t - retries[i]));
  console.log(
    `  ${took.toFixed(0)} ms; while down: ${firsts.length} first tries, ${retries.length} more (gaps ${gaps.join(', ')} ms); object: ${JSON.stringify(obj)}; isolates' rpcs: ${out.map((o) => JSON.stringify(o.rpcs)).join(' ')}`,
  );
  assert.equal(firsts.length, 50, 'the first tries, sent before anyone knew');
  assert.ok(rounds >= 3, `${rounds} rounds while down`);
  // One probe per round for the whole fleet (per-isolate gates would send one per isolate per round: 5×).
  assert.equal(obj.gate.probes, rounds, 'the object granted one probe per round');
  assert.ok(retries.length <= rounds, `${retries.length} requests while down after the first tries, ${rounds} rounds`);
  assert.ok(retries.length >= rounds - 1, 'the failed probes reached the server');
  for (const g of gaps) assert.ok(g >= BASE_MS * 0.8, `probes ${g} ms apart: at most one per round`);
  // Then each call once: the successful probe and the 49 released calls.
  assert.equal(ok.length, 50, 'every call succeeded exactly once after the recovery');
  assert.equal(reqs.length, 50 + retries.length + 50);
  // Round trips: a report per isolate (its first failures, batched), one admit per local round, one probed for the prober.
  for (const o of out) {
    assert.ok(o.rpcs.report <= 2, `reports ${JSON.stringify(o.rpcs)}`);
    assert.ok(o.rpcs.admit <= rounds + 1, `admits ${JSON.stringify(o.rpcs)}`);
  }
  const total = (m) => out.reduce((s, o) => s + o.rpcs[m], 0);
  assert.equal(total('probed'), rounds, 'each probe reported once');
});

test('bad options and keys: TypeError or RangeError naming them', { timeout: 20_000 }, async () => {
  const errors = await call('a', '/bad');
  assert.deepEqual(
    errors.map((e) => e?.[0]),
    ['TypeError', 'RangeError', 'TypeError', 'TypeError', 'RangeError', 'RangeError', 'TypeError'],
  );
  const messages = errors.map((e) => e[1]);
  assert.match(messages[0], /namespace must be a Durable Object namespace/);
  assert.match(messages[1], /^pollMs must be/);
  assert.match(messages[2], /^pollMs must be/);
  assert.match(messages[3], /^name must be a function/);
  assert.match(messages[4], /consecutive/);
  assert.match(messages[5], /baseMs/);
  assert.match(messages[6], /string keys/);
});

test("limit: 'adaptive': one limiter for the fleet, cut once however many isolates were throttled; idle isolates ask nothing", {
  timeout: 30_000,
}, async () => {
  // A server with a capacity: a token bucket of 100 req/s (burst 10), 429 beyond it (no Retry-After: no pauses).
  let tokens = 10;
  let at = performance.now();
  let throttled = 0;
  srv.script('/busy', () => {
    const now = performance.now();
    tokens = Math.min(10, tokens + ((now - at) / 1000) * 100);
    at = now;
    if (tokens < 1) return (throttled++, { status: 429 });
    tokens--;
    return { status: 200, body: 'ok' };
  });
  const busy = ISOLATES.slice(0, 4);
  const out = await Promise.all(busy.map((n) => call(n, '/limited?n=40&path=/busy')));
  const idle = await call('e', '/limited?n=0&path=/busy');
  const obj = await call('a', `/object?key=${encodeURIComponent(`lim:${srv.url}`)}`);
  const lim = obj.limiters[srv.url];
  console.log(
    `  429s ${throttled}; object: ${JSON.stringify(obj)}; isolates: ${out.map((o) => JSON.stringify({ rpcs: o.rpcs, share: o.share })).join(' ')}`,
  );
  assert.ok(throttled > 0, 'the fleet went over the capacity at first');
  assert.ok(lim, 'the object keeps a limiter for the target');
  assert.equal(lim.isolates, out.filter((o) => o.rpcs.lease > 0).length, 'every isolate that was throttled reported to it');
  assert.ok(lim.version >= 1 && lim.rate < Infinity, 'the fleet was throttled: a finite rate');
  // Isolates throttled by the same burst join the cut (grow) instead of cutting again, as one client's limiter cuts once per throttle.
  assert.ok(lim.version < obj.rpcs.lease, `${lim.version} cuts for ${obj.rpcs.lease} reports`);
  for (const o of out.filter((x) => x.rpcs.lease > 0)) {
    assert.ok(o.share.rate > 0 && o.share.rate <= o.share.fleet, `a share of the fleet's rate: ${JSON.stringify(o.share)}`);
    assert.equal(o.share.alone, false);
  }
  assert.deepEqual(idle.rpcs, { report: 0, admit: 0, probed: 0, lease: 0 }, 'an isolate with no calls asks nothing');
});
