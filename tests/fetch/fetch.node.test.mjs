// The fetch driver in Node 20 against the real scripted server on 127.0.0.1:
// the runtime smoke sets every runtime shares (fetch-checks.mjs, and the
// stream entry's stream-checks.mjs), each leaving no timer behind, plus what
// only Node has: a ReadableStream or async iterable request body, the
// requests undici refuses to send, a long-lived signal's heap. Timing and
// policy run in virtual time: fetch.virtual, waits.virtual and
// stream.virtual (.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as main from 'wasm-backoff';
import { RetryBudget } from 'wasm-backoff/budget';
import { createGate } from 'wasm-backoff/gate';
import { startScripted } from '../server/scripted.mjs';
import * as stream from 'wasm-backoff/stream';
import { SCENARIOS, control } from './fetch-checks.mjs';
import { STREAM_SCENARIOS } from './stream-checks.mjs';
import { timers } from '../support/wait.mjs';

const lib = { ...main, RetryBudget, createGate };
// (the stream entry's scenarios, tests/fetch/stream-checks.mjs, run on its exports)
const streamed = Object.entries(STREAM_SCENARIOS).map(([name, fn]) => [`stream: ${name}`, (_, ctl) => fn({ ...stream, main }, ctl)]);

let srv, ctl;
before(async () => {
  srv = await startScripted();
  ctl = control(srv.url);
});
after(() => srv?.close());

for (const [name, fn] of [...Object.entries(SCENARIOS), ...streamed]) {
  test(name, async () => {
    const before = timers();
    await fn(lib, ctl);
    // Nothing of ours may keep the event loop alive afterwards.
    assert.equal(timers(), before, 'a timer was left behind');
  });
}

test('a ReadableStream body is sent once and not retried, and onDone says why', async () => {
  await ctl.script('/stream', [{ status: 503 }, { status: 200 }]);
  const body = new ReadableStream({
    start(c) {
      c.enqueue(new TextEncoder().encode('streamed'));
      c.close();
    },
  });
  let done;
  const res = await lib.fetchWithBackoff(
    `${srv.url}/stream`,
    { method: 'PUT', body, duplex: 'half' },
    { baseMs: 5, onDone: (d) => (done = d) },
  );
  assert.equal(res.status, 503);
  assert.equal(srv.count('/stream'), 1);
  assert.equal(srv.requests.find((r) => r.path === '/stream').body, 'streamed');
  assert.equal(done.reason, 'not-replayable');
});

test('an async iterable body (Node) is sent once and not retried', async () => {
  srv.script('/iterable', [{ status: 503 }, { status: 200 }]);
  async function* chunks() {
    yield new TextEncoder().encode('one-');
    yield new TextEncoder().encode('shot');
  }
  let done;
  const res = await lib.fetchWithBackoff(
    `${srv.url}/iterable`,
    { method: 'PUT', body: chunks(), duplex: 'half' },
    { baseMs: 5, onDone: (d) => (done = d) },
  );
  assert.equal(res.status, 503);
  assert.equal(srv.count('/iterable'), 1);
  assert.equal(srv.requests.find((r) => r.path === '/iterable').body, 'one-shot');
  assert.equal(done.reason, 'not-replayable');
});

test('a Backoff is iterable: its delays until it gives up', () => {
  const b = new lib.Backoff({ baseMs: 10, jitter: 'none', maxAttempts: 4 });
  assert.deepEqual([...b], [10, 20, 40]);
  assert.deepEqual([...b], [], 'exhausted until reset');
  b.reset();
  const seen = [];
  for (const d of b) seen.push(d);
  assert.deepEqual(seen, [10, 20, 40]);
  b.free();
});

test('RetryBudget: a timestamp from the future or another clock does not stop it for good; non-finite time is a RangeError', () => {
  for (const jump of [Date.now() * 1000, Date.now() + 86_400_000]) {
    const b = new RetryBudget({ minPerSec: 0, retryRatio: 1 });
    b.deposit(jump); // one call stamped with a wrong clock
    b.withdraw(jump);
    const now = Date.now();
    for (let i = 0; i < 5; i++) b.deposit(now);
    // Back on the real clock: the five new calls earn five retries.
    let n = 0;
    while (b.withdraw(now)) n++;
    assert.equal(n, 5);
  }
  const b = new RetryBudget();
  assert.throws(() => b.deposit(Infinity), { name: 'RangeError', message: /nowMs/ });
  assert.throws(() => b.withdraw(Number.NaN), RangeError);
  assert.equal(b.withdraw(Date.now()), true, 'still usable afterwards');
  // A small step back stays put: what was withdrawn stays withdrawn.
  const c = new RetryBudget({ minPerSec: 0, retryRatio: 1 });
  c.deposit(10_000);
  assert.equal(c.withdraw(10_000), true);
  assert.equal(c.withdraw(9_500), false);
});

test('a request fetch refuses to send (undici: Expect, Transfer-Encoding, Connection, …) rejects at once and hurts no gate', async () => {
  const p = '/refused';
  srv.script(p, [{ status: 200 }]);
  const gate = createGate({ consecutive: 1 });
  for (const headers of [{ expect: '100-continue' }, { 'transfer-encoding': 'chunked' }, { connection: 'upgrade' }, { upgrade: 'x' }]) {
    let done;
    const e = await lib.fetchWithBackoff(srv.url + p, { headers }, { baseMs: 1, gate, onDone: (d) => (done = d) }).catch((x) => x);
    assert.equal(e?.message, 'fetch failed', JSON.stringify(headers));
    assert.equal(done.attempts, 1, `${JSON.stringify(headers)}: one attempt`);
    assert.equal(done.reason, 'not-retryable');
  }
  assert.equal(srv.count(p), 0, 'nothing sent');
  assert.equal(gate.state(srv.url).state, 'closed', 'the target is not tripped by requests never sent');
  // An attempt header that fetch refuses, or that would overwrite the idempotency key, is refused at once.
  for (const name of ['Expect', 'Transfer-Encoding', 'Idempotency-Key', 'connection']) {
    assert.throws(() => lib.withBackoff(fetch, { attemptHeader: name }), { name: 'RangeError', message: /^attemptHeader/ });
  }
  gate.free();
});

test('retry(fn) 10^5 times on one long-lived signal with a timeout does not grow the heap (no AbortSignal.any per attempt)', async () => {
  const { execFileSync } = await import('node:child_process');
  const code = `
    import { retry } from 'wasm-backoff';
    const live = new AbortController();
    const run = async (n) => { for (let i = 0; i < n; i++) await retry(() => i, { signal: live.signal, timeoutMs: 1000 }); };
    await run(2000);
    gc(); const before = process.memoryUsage().heapUsed;
    await run(100000);
    gc(); console.log(process.memoryUsage().heapUsed - before);`;
  const grew = Number(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', code], { encoding: 'utf8' }));
  // (with AbortSignal.any per attempt, Node 20 keeps an entry per dependent: ~12 MB and more here)
  assert.ok(grew < 4e6, `the heap grew ${(grew / 1e6).toFixed(1)} MB`);
});
