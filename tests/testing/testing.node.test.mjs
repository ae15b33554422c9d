// wasm-backoff/testing in Node, imported by name as a user does (the built
// package): the shared checks (testing-checks.mjs: the clock's order,
// clamps and reactions, the scripted fetch, chaos, and the package's
// withBackoff, retry and gate following the clock exactly), then what is
// Node's or needs Node's tools: the same checks in workerd, Deno and Bun
// (runtime-agnostic), bad input, Node's timer objects, the stream entry's
// idle timeout on virtual time, chaos around a real server, and that the
// entry is plain JavaScript of its own (nothing of it in the main entry).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { virtualClock, scriptedFetch, chaos } from 'wasm-backoff/testing';
import { withBackoff, retry } from 'wasm-backoff';
import { createGate, BrokenCircuitError } from 'wasm-backoff/gate';
import * as stream from 'wasm-backoff/stream';
import { TESTING_CHECKS } from './testing-checks.mjs';
import { worker } from '../support/workerd.mjs';
import { startScripted, mulberry32 } from '../server/scripted.mjs';
import { timers } from '../support/wait.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const lib = { virtualClock, scriptedFetch, chaos, withBackoff, retry, createGate, BrokenCircuitError };
const realNow = Date.now;

for (const [name, check] of Object.entries(TESTING_CHECKS)) test(name, () => check(lib));

test('the same checks pass inside workerd (miniflare), on the package’s workerd build', { timeout: 60_000 }, async () => {
  const mf = worker('../testing/worker.mjs');
  try {
    const res = await mf.dispatchFetch('http://worker.test/');
    assert.deepEqual(await res.json(), []);
  } finally {
    await mf.dispose();
  }
});

const bin = (...p) => path.join(root, 'node_modules', ...p);
const platformBun = bin('@oven', 'bun-linux-x64', 'bin', 'bun');
const RUNTIMES = {
  deno: [bin('.bin', 'deno'), ['run', '--allow-read', '--allow-env', 'tests/testing/run.mjs']],
  bun: [existsSync(platformBun) ? platformBun : bin('.bin', 'bun'), ['tests/testing/run.mjs']],
};
for (const [name, [cmd, args]] of Object.entries(RUNTIMES)) {
  test(`the same checks pass in ${name}, the package imported by name`, { timeout: 60_000 }, async () => {
    const stdout = await new Promise((resolve, reject) =>
      execFile(cmd, args, { cwd: root, env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } }, (err, out, errOut) =>
        err ? reject(new Error(`${name}: ${err.message}\n${errOut}`)) : resolve(out),
      ),
    );
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').pop()), []);
  });
}

test('virtualClock: bad options and arguments throw TypeError or RangeError naming them', async () => {
  assert.throws(() => virtualClock('x'), { name: 'TypeError', message: 'options must be an object' });
  assert.throws(() => virtualClock({ now: '0' }), { name: 'TypeError', message: 'now must be a finite number' });
  assert.throws(() => virtualClock({ now: Number.NaN }), { name: 'RangeError', message: 'now must be a finite number' });
  assert.throws(() => virtualClock({ performance: 1 }), { name: 'TypeError', message: 'performance must be a boolean' });
  assert.equal(globalThis.setTimeout.name, 'setTimeout', 'a failed install changes nothing');
  const clock = virtualClock();
  try {
    await assert.rejects(clock.tick(-1), { name: 'RangeError', message: 'ms must be a finite number >= 0' });
    await assert.rejects(clock.tick(Infinity), { name: 'RangeError', message: 'ms must be a finite number >= 0' });
    await assert.rejects(clock.tick('5'), { name: 'TypeError', message: 'ms must be a finite number >= 0' });
    await assert.rejects(clock.runUntilIdle({ maxMs: -1 }), { name: 'RangeError', message: 'maxMs must be a number >= 0' });
    await assert.rejects(clock.runUntilIdle(3), { name: 'TypeError', message: 'runUntilIdle options must be an object' });
    await assert.rejects(clock.run(Promise.resolve(), { graceMs: 2 ** 31 }), {
      name: 'RangeError',
      message: 'graceMs must be a number in [0, 2^31)',
    });
    // A timer callback that throws: the tick rejects with it; the clock goes on.
    setTimeout(() => {
      throw new Error('boom');
    }, 5);
    setTimeout(() => {}, 10);
    await assert.rejects(clock.tick(20), { message: 'boom' });
    assert.equal(clock.now(), 5, 'stopped at the timer that threw');
    assert.equal(await clock.tick(20), 25, 'and goes on');
  } finally {
    clock.uninstall();
  }
});

test("Node's timer objects: ref, unref, hasRef, refresh, a number as primitive; real timers armed before stay real", async () => {
  // (a real timer far off: whether the clock's clearTimeout clears it is read from the process's timers, not raced)
  const real = setTimeout(() => {}, 60_000);
  const clock = virtualClock({ now: 1000 });
  try {
    const fired = [];
    const t = setTimeout(() => fired.push(clock.now()), 100);
    assert.equal(typeof t, 'object');
    assert.equal(t.unref(), t);
    assert.equal(t.ref(), t);
    assert.equal(t.hasRef(), true);
    assert.equal(typeof +t, 'number');
    await clock.tick(60);
    t.refresh(); // (due 100 ms from now again)
    await clock.tick(99);
    assert.deepEqual(fired, []);
    await clock.tick(1);
    assert.deepEqual(fired, [1160]);
    const u = setTimeout(() => fired.push('cleared by number'), 1);
    clearTimeout(+u);
    await clock.tick(5);
    assert.equal(fired.length, 1);
    const before = timers();
    clearTimeout(real); // (not the clock's: the real clearTimeout clears it)
    assert.equal(timers(), before - 1, 'the real timer was cleared through the clock');
  } finally {
    clock.uninstall();
  }
});

test('Symbol.dispose uninstalls (using); performance: false leaves performance.now real', () => {
  const perfNow = performance.now;
  const clock = virtualClock({ performance: false });
  assert.equal(performance.now, perfNow);
  assert.notEqual(globalThis.Date.now, realNow);
  clock[Symbol.dispose]();
  assert.equal(Date.now, realNow);
});

test('scriptedFetch: a bad script or outcome throws naming it; a function’s bad outcome rejects that call', async () => {
  assert.throws(() => scriptedFetch(), { name: 'TypeError', message: /^script must be/ });
  assert.throws(() => scriptedFetch([]), { name: 'TypeError', message: 'script must have at least one outcome' });
  assert.throws(() => scriptedFetch([200, { status: 99 }]), {
    name: 'RangeError',
    message: 'script[1].status must be an integer HTTP status in [200, 599]',
  });
  assert.throws(() => scriptedFetch({ '/a': [{ stauts: 503 }] }), {
    name: 'TypeError',
    message: "script['/a'][0]: unknown field 'stauts'",
  });
  assert.throws(() => scriptedFetch({ delayMs: -1 }), { name: 'RangeError', message: 'script[0].delayMs must be a finite number >= 0' });
  assert.throws(() => scriptedFetch([{ hang: 1 }]), { name: 'TypeError', message: 'script[0].hang must be a boolean' });
  assert.throws(() => scriptedFetch([{ cutAfter: 1.5 }]), { name: 'RangeError', message: 'script[0].cutAfter must be an integer >= 0' });
  assert.throws(() => scriptedFetch([{ stallAfter: 1, cutAfter: 2 }]), { name: 'TypeError', message: /exclude each other/ });
  assert.throws(() => scriptedFetch(['oops']), { name: 'TypeError', message: /^script\[0\] must be an outcome/ });
  const f = scriptedFetch(() => ({ status: 700 }));
  await assert.rejects(f('https://x.test/'), {
    name: 'RangeError',
    message: 'script(call 0).status must be an integer HTTP status in [200, 599]',
  });
  // The package does not retry what a custom fetch throws unless it is a network failure: the call rejects with it.
  await assert.rejects(withBackoff(scriptedFetch(() => 'nope'))('https://x.test/'), { name: 'TypeError', message: /call 0/ });
});

test('a reset is what our policy calls a network failure; a POST is not retried after it', async () => {
  const clock = virtualClock();
  try {
    const f = scriptedFetch(['reset', 200]);
    const res = await clock.run(withBackoff(f, { baseMs: 10 })('https://x.test/'));
    assert.equal(res.status, 200);
    assert.equal(f.count, 2, 'a reset is retried');
    const g = scriptedFetch(['reset', 200]);
    await assert.rejects(clock.run(withBackoff(g)('https://x.test/', { method: 'POST', body: 'x' })), {
      name: 'TypeError',
      message: 'fetch failed',
    });
    assert.equal(g.count, 1);
    assert.equal(g.calls[0].body, 'x');
  } finally {
    clock.uninstall();
  }
});

test('wasm-backoff/stream: a body that stalls after 3 bytes ends at idleTimeoutMs of virtual time', async () => {
  const clock = virtualClock();
  try {
    const f = scriptedFetch({ body: 'abcdefgh', stallAfter: 3 });
    const res = await clock.run(stream.withBackoff(f, { idleTimeoutMs: 5000 })('https://x.test/events'));
    const t0 = realNow();
    const err = await clock.run(res.text()).catch((e) => e);
    assert.equal(err.name, 'TimeoutError');
    assert.equal(clock.now(), 5000, 'at the idle timeout');
    assert.ok(realNow() - t0 < clock.now(), 'not waited for real (that would take the 5 s)');
    assert.equal(clock.pending(), 0);
  } finally {
    clock.uninstall();
  }
});

test('chaos faults the same calls as the scripted server’s failRate with the same seed', () => {
  const seed = 9;
  const server = mulberry32(seed);
  const expected = Array.from({ length: 50 }, () => server() < 0.25);
  const f = chaos(scriptedFetch(200), { rate: 0.25, seed });
  return Promise.all(Array.from({ length: 50 }, () => f('https://x.test/'))).then((out) =>
    assert.deepEqual(
      out.map((r) => r.status === 503),
      expected,
    ),
  );
});

test('chaos around a real server, under the clock: run waits for real I/O (graceMs), latency is virtual', async () => {
  const srv = await startScripted();
  srv.script('/real', { status: 200, body: 'real' });
  // (one real fetch first: undici arms its own timers, e.g. a 499 ms tick, on its first request, and
  // under the clock they would be virtual ones the run fires, timing out a slow connect in virtual time)
  await (await fetch(`${srv.url}/warm`)).arrayBuffer();
  const clock = virtualClock();
  try {
    const flaky = chaos(fetch, { rate: 0.5, seed: 3, latencyMs: 1000 });
    const api = withBackoff(flaky, { baseMs: 100, seed: 1, maxAttempts: 10 });
    const t0 = realNow();
    const res = await clock.run(api(`${srv.url}/real`));
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'real');
    const faults = flaky.injected.filter((i) => i.fault).length;
    assert.equal(flaky.injected.length, faults + 1, 'retried until one went through');
    assert.equal(srv.count('/real'), 1, 'the faults never reached the server');
    assert.ok(clock.now() >= 1000 * flaky.injected.length, `each call's latency in virtual time: ${clock.now()}`);
    assert.ok(realNow() - t0 < clock.now(), `not waited for real (that would take the virtual ${clock.now()} ms): ${realNow() - t0} ms`);
  } finally {
    clock.uninstall();
    await srv.close();
  }
});

test('the entry is plain JavaScript of its own: no wasm, and nothing of it in the main entry', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'pkg/package.json'), 'utf8'));
  for (const spec of ['./testing', './testing/sync']) assert.ok(pkg.exports[spec], `exports ${spec}`);
  assert.ok(pkg.files.includes('testing/'));
  for (const file of ['index.js', 'node.mjs', 'workerd.js', 'bundler.js']) {
    const code = readFileSync(path.join(root, 'pkg/testing', file), 'utf8');
    assert.doesNotMatch(code, /\.wasm|WebAssembly|from ["']\.\.?\//, `testing/${file}: one file, no module, no chunk`);
    const main = readFileSync(path.join(root, 'pkg', file), 'utf8');
    assert.doesNotMatch(main, /already installed|scriptedFetch|virtual time/, `${file}: none of the kit`);
  }
});

test('a timer that re-arms at the same time without end fails the clock instead of hanging it', async () => {
  const clock = virtualClock();
  let on = true;
  try {
    // (re-armed after a real macrotask, outside the timer's task: no nesting clamp moves it on)
    const hop = () => new Promise((r) => setImmediate(r));
    const loop = () => on && new Promise((r) => setTimeout(r, 0)).then(hop).then(loop);
    loop();
    // (run and runUntilIdle step timers by the same guard)
    await assert.rejects(clock.tick(10), /10000 timers fired at 0 ms of virtual time: one re-arms at the same time without end/);
  } finally {
    on = false;
    clock.uninstall();
  }
});
