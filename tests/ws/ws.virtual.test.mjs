// The reconnecting WebSocket's timing and rules on the js/ sources, in
// virtual time (wasm-backoff/testing's clock), with a scripted WebSocket
// implementation injected as options.WebSocket: each wait the calculator's
// own draw, a fresh schedule after each opened connection, the handshake
// timeout, the stop codes, the queue and its overflow, close() and the
// signal leaving no timer, bad input. Real sockets in every runtime:
// tests/sse/live-checks.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocket } from '../../js/entries/ws.js';
import { Backoff } from '../../js/backoff.js';
import { virtualClock } from '../../js/entries/testing.js';

/**
 * A scripted WebSocket class: connection n follows plan[n] (the last
 * repeats): 'open', 'refuse' (error, then close 1006), 'hang' (nothing).
 */
function scripted(plan) {
  const made = [];
  class Fake extends EventTarget {
    readyState = 0;
    sent = [];
    constructor(url, protocols) {
      super();
      made.push(this);
      this.url = url;
      this.protocols = protocols;
      const step = plan[Math.min(made.length - 1, plan.length - 1)];
      if (step === 'open') setTimeout(() => ((this.readyState = 1), this.dispatchEvent(new Event('open'))), 0);
      if (step === 'refuse') setTimeout(() => (this.dispatchEvent(new Event('error')), this.closed(1006)), 0);
    }
    send(d) {
      this.sent.push(d);
    }
    close(code = 1005) {
      if (this.readyState < 2) setTimeout(() => this.closed(code), 0);
      this.readyState = 2;
    }
    closed(code) {
      this.readyState = 3;
      this.dispatchEvent(Object.assign(new Event('close'), { code, reason: '', wasClean: code !== 1006 }));
    }
    message(data) {
      this.dispatchEvent(Object.assign(new Event('message'), { data }));
    }
  }
  return { Fake, made };
}

function clockFor(t) {
  const clock = virtualClock();
  t.after(() => clock.uninstall());
  return clock;
}

test('a drop reconnects after a jittered wait, the calculator’s draw; each open starts a fresh schedule', async (t) => {
  const clock = clockFor(t);
  const { Fake, made } = scripted(['open', 'refuse', 'refuse', 'open']);
  const ws = new WebSocket('wss://chat.test/room', ['v1'], { WebSocket: Fake, seed: 3 });
  const seen = [];
  ws.onopen = () => seen.push(['open', clock.now()]);
  ws.onclose = (e) => seen.push(['close', e.code, ws.readyState]);
  ws.onerror = (e) => seen.push(['error', e.delayMs]);
  ws.onmessage = (e) => seen.push(['message', e.data]);
  await clock.runUntilIdle();
  made[0].message('hi');
  made[0].closed(1012); // the server restarts
  await clock.runUntilIdle();
  const b = new Backoff({ baseMs: 1000, maxDelayMs: 30_000, seed: 3 });
  const [w1, w2, w3] = [b.next(), b.next(), b.next()];
  // (the others: the handshake's 10 s timeout, and the fake's own 0 ms)
  assert.deepEqual(
    clock.asked.filter((ms) => ms > 0 && ms !== 10_000),
    [w1, w2, w3],
  );
  assert.deepEqual(seen, [
    ['open', 0],
    ['message', 'hi'],
    ['close', 1012, 0],
    ['error', w2],
    ['error', w3],
    ['open', w1 + w2 + w3],
  ]);
  assert.deepEqual(
    made.map((m) => [m.url, m.protocols]),
    Array(4).fill(['wss://chat.test/room', ['v1']]),
  );
  ws.close();
  await clock.runUntilIdle();
  assert.equal(ws.readyState, 3);
  assert.equal(clock.pending(), 0);
});

test('a close code of stopCodes (1008 by default) ends it for good', async (t) => {
  const clock = clockFor(t);
  for (const [options, code] of [
    [{}, 1008],
    [{ stopCodes: [4001] }, 4001],
  ]) {
    const { Fake, made } = scripted(['open']);
    const ws = new WebSocket('ws://a.test/', undefined, { WebSocket: Fake, ...options });
    await clock.runUntilIdle();
    made[0].closed(code);
    await clock.runUntilIdle();
    assert.equal(ws.readyState, 3);
    assert.equal(made.length, 1);
  }
  assert.equal(clock.pending(), 0);
});

test('a handshake that hangs is abandoned at timeoutMs and tried again', async (t) => {
  const clock = clockFor(t);
  const { Fake, made } = scripted(['hang', 'open']);
  const ws = new WebSocket('ws://a.test/', undefined, { WebSocket: Fake, timeoutMs: 2000, seed: 1 });
  await clock.tick(1999);
  assert.equal(made.length, 1);
  await clock.runUntilIdle();
  assert.equal(made.length, 2);
  assert.equal(ws.readyState, 1);
  ws.close(4000, 'bye');
  await clock.runUntilIdle();
  assert.equal(clock.pending(), 0);
});

test('sent while not open: queued in order up to maxQueued; past it, thrown or told by an error event', async (t) => {
  const clock = clockFor(t);
  const { Fake, made } = scripted(['open']);
  const ws = new WebSocket('ws://a.test/', undefined, { WebSocket: Fake, maxQueued: 2 });
  ws.send('a');
  ws.send(new Uint8Array(3));
  assert.equal(ws.bufferedAmount, 4);
  assert.throws(() => ws.send('c'), { name: 'RangeError', message: /maxQueued 2/ });
  await clock.runUntilIdle();
  assert.deepEqual(made[0].sent.map(String), ['a', '0,0,0']);
  assert.equal(ws.bufferedAmount, 0);

  const other = scripted(['open']);
  const quiet = new WebSocket('ws://a.test/', undefined, { WebSocket: other.Fake, maxQueued: 0, overflow: 'error' });
  const dropped = [];
  quiet.onerror = (e) => dropped.push(e.dropped);
  quiet.send('x');
  assert.deepEqual(dropped, ['x']);
  for (const w of [ws, quiet]) w.close();
  await clock.runUntilIdle();
  assert.throws(() => ws.send('late'), { name: 'InvalidStateError' });
});

test('close() while it waits to reconnect, and the signal, leave no timer', async (t) => {
  const clock = clockFor(t);
  const { Fake } = scripted(['refuse']);
  const ws = new WebSocket('ws://a.test/', undefined, { WebSocket: Fake, baseMs: 5000 });
  const ac = new AbortController();
  const other = new WebSocket('ws://a.test/', undefined, { WebSocket: Fake, signal: ac.signal });
  const closes = [];
  ws.onclose = (e) => closes.push([e.code, ws.readyState]);
  await clock.tick(10);
  ws.close(1000);
  ac.abort();
  await clock.runUntilIdle();
  assert.deepEqual(closes, [[1000, 3]]);
  assert.equal(other.readyState, 3);
  assert.equal(clock.pending(), 0);
});

test('bad input: TypeError or RangeError naming the option; the standard DOMExceptions for the URL and close()', () => {
  const { Fake } = scripted(['hang']);
  const cases = [
    [{ WebSocket: 1 }, TypeError, /WebSocket/],
    [{ maxQueued: -1 }, RangeError, /maxQueued/],
    [{ maxQueued: '3' }, TypeError, /maxQueued/],
    [{ overflow: 'drop' }, RangeError, /overflow/],
    [{ stopCodes: 1008 }, TypeError, /stopCodes/],
    [{ stopCodes: [99] }, RangeError, /stopCodes/],
    [{ timeoutMs: 0 }, RangeError, /timeoutMs/],
    [{ baseMs: -1 }, RangeError, /baseMs/],
    [{ gate: {} }, TypeError, /gate/],
  ];
  for (const [o, type, msg] of cases)
    assert.throws(
      () => new WebSocket('ws://a.test/', undefined, { WebSocket: Fake, ...o }),
      (e) => e instanceof type && msg.test(e.message),
      JSON.stringify(o),
    );
  assert.throws(() => new WebSocket('ftp://a.test/', undefined, { WebSocket: Fake }), { name: 'SyntaxError' });
  assert.throws(() => new WebSocket('ws://a.test/', 5, { WebSocket: Fake }), { name: 'TypeError', message: /protocols/ });
  const ws = new WebSocket('https://a.test/', undefined, { WebSocket: Fake, signal: AbortSignal.abort() });
  assert.equal(ws.url, 'wss://a.test/');
  const live = new WebSocket('ws://a.test/', undefined, { WebSocket: Fake, timeoutMs: 1 });
  assert.throws(() => live.close(1001), { name: 'InvalidAccessError' });
  assert.throws(() => live.close(1000, 'x'.repeat(124)), { name: 'SyntaxError' });
  live.close();
});
