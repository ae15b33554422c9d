// The fetch driver in Node 20 against the real scripted server on 127.0.0.1:
// every shared scenario, plus what only Node can observe (stream bodies,
// timers left behind).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import * as main from 'wasm-backoff';
import { RetryBudget } from 'wasm-backoff/budget';
import { createGate } from 'wasm-backoff/gate';
import { startScripted } from '../server/scripted.mjs';
import { SCENARIOS, control } from './fetch-checks.mjs';

const lib = { ...main, RetryBudget, createGate };

let srv, ctl;
before(async () => {
  srv = await startScripted();
  ctl = control(srv.url);
});
after(() => srv?.close());

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

for (const [name, fn] of Object.entries(SCENARIOS)) {
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
