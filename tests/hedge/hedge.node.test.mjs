// Hedging and failover in Node against three real scripted servers on
// 127.0.0.1 (a primary and a secondary origin, and one the endpoints do not
// list): every shared scenario, with
// no timer left behind, plus what only Node can observe (the caller's
// signal keeps no listener of ours; the losers' sockets are closed).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import * as main from 'wasm-backoff';
import { createGate } from 'wasm-backoff/gate';
import { hedge } from 'wasm-backoff/hedge';
import * as stream from 'wasm-backoff/stream';
import { failover } from 'wasm-backoff/failover';
import { startScripted } from '../server/scripted.mjs';
import { control } from '../fetch/fetch-checks.mjs';
import { SCENARIOS } from './hedge-checks.mjs';
import { timers } from '../support/wait.mjs';

const lib = { ...main, createGate, hedge, failover };

let sa, sb, sc, a, b, c;
before(async () => {
  [sa, sb, sc] = await Promise.all([startScripted(), startScripted(), startScripted()]);
  [a, b, c] = [control(sa.url), control(sb.url), control(sc.url)];
});
after(() => Promise.all([sa?.close(), sb?.close(), sc?.close()]));

for (const [name, fn] of Object.entries(SCENARIOS)) {
  test(name, async () => {
    const before = timers();
    await fn(lib, a, b, c);
    assert.equal(timers(), before, 'a timer was left behind');
  });
}

test("losers are aborted and their bodies cancelled; the caller's signal keeps no listener", async () => {
  // The attempt answers 200 late; its first hedge 503 at once (worth a retry: the race goes on), the second hangs.
  sa.script('/lose', [{ status: 200, body: 'slow', delayMs: 150 }, { status: 503, body: 'busy' }, { hang: true }]);
  const sent = [];
  const spy = (input, init) => {
    const p = fetch(input, init);
    sent.push({ signal: init?.signal, res: p.catch(() => undefined) });
    return p;
  };
  const ac = new AbortController();
  let done;
  const f = main.withBackoff(spy, { hedge: hedge({ delayMs: 20, maxHedges: 2 }), timeoutMs: 5000, onDone: (d) => (done = d) });
  const res = await f(`${sa.url}/lose`, { signal: ac.signal });
  assert.equal(await res.text(), 'slow');
  assert.deepEqual([done.won, done.hedges, done.attempts], [1, 2, 3]);
  // (the two hedges may reach the server in either order: one got the 503, the other hung)
  const [, x, y] = await Promise.all(sent.map((s) => s.res));
  const [lost, hung] = x ? [x, 2] : [y, 1];
  assert.equal(lost?.status, 503);
  assert.equal(lost.bodyUsed, true, "the losing 503's body was cancelled");
  assert.equal(sent[hung].signal.aborted, true, 'the hung racer was aborted');
  assert.equal(sent[0].signal.aborted, false, "the winner's signal is live");
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
});

test('a ReadableStream body is not hedged: the call succeeds as without hedge', async () => {
  sa.script('/once', [{ status: 200, body: 'slow', delayMs: 150 }]);
  let done;
  const body = new ReadableStream({
    start(ctl) {
      ctl.enqueue(new TextEncoder().encode('sent once'));
      ctl.close();
    },
  });
  const init = { method: 'PUT', body, duplex: 'half' };
  const res = await main.fetchWithBackoff(`${sa.url}/once`, init, { hedge: hedge({ delayMs: 20 }), onDone: (d) => (done = d) });
  assert.equal(await res.text(), 'slow');
  assert.deepEqual([done.hedges ?? 0, done.attempts], [0, 1]);
  assert.deepEqual(
    sa.requests.filter((r) => r.path === '/once').map((r) => r.body),
    ['sent once'],
  );
});

test('wasm-backoff/stream: hedge keeps idleTimeoutMs; with firstChunkTimeoutMs or resume it throws', async () => {
  sa.script('/stall', { size: 100_000, stallAfter: 1000 });
  const res = await stream.fetchWithBackoff(`${sa.url}/stall`, undefined, { hedge: hedge({ delayMs: 5000 }), idleTimeoutMs: 50 });
  const got = await Promise.race([res.arrayBuffer().catch((e) => e), new Promise((r) => setTimeout(r, 2000, 'hung'))]);
  assert.equal(got?.name, 'TimeoutError', `the stalled body ended with ${got}`);
  const h = hedge({ delayMs: 50 });
  for (const [k, v] of [
    ['firstChunkTimeoutMs', 100],
    ['resume', true],
  ]) {
    const name = new RegExp(`hedge and ${k}`);
    await assert.rejects(stream.fetchWithBackoff(`${sa.url}/stall`, undefined, { hedge: h, [k]: v }), { name: 'TypeError', message: name });
    assert.throws(() => stream.withBackoff(fetch, { hedge: h, [k]: v }), { name: 'TypeError', message: name });
  }
});

test('weighted first attempts are drawn exactly by the normalised weights, at either end of the doubles', async () => {
  // Math.random stubbed: u lands in the first endpoint's share iff u < w0 / (w0 + w1).
  const cases = [
    [3, 1, 0.74, 'a'],
    [3, 1, 0.76, 'b'],
    [1e308, 1e308, 0.25, 'a'], // (their sum overflows to Infinity)
    [1e308, 1e308, 0.75, 'b'],
    [Number.MAX_VALUE, Number.MAX_VALUE / 3, 0.74, 'a'],
    [Number.MAX_VALUE, Number.MAX_VALUE / 3, 0.76, 'b'],
    [5e-324, 5e-324, 0.4, 'a'], // (the smallest subnormals: their products round to 0 or 5e-324)
    [5e-324, 5e-324, 0.6, 'b'],
  ];
  const random = Math.random;
  try {
    for (const [wa, wb, u, want] of cases) {
      const p = `/draw-${wa}-${wb}-${u}`;
      sa.script(p, [{ status: 200 }]);
      sb.script(p, [{ status: 200 }]);
      let done;
      const f = main.withBackoff(fetch, {
        endpoints: failover([
          { url: sa.url, weight: wa },
          { url: sb.url, weight: wb },
        ]),
        onDone: (d) => (done = d),
      });
      Math.random = () => u;
      const res = await f(sa.url + p);
      Math.random = random;
      assert.equal(res.status, 200);
      assert.equal(done.endpoint, want === 'a' ? sa.url : sb.url, `weights ${wa}, ${wb}, u = ${u}`);
    }
  } finally {
    Math.random = random;
  }
});

test('a hedge refused before it was sent (a runtime’s subrequest cap) never ends the race: the attempt answers', async () => {
  // (workerd's fetch throws "Too many subrequests." past an invocation's cap: not a network failure)
  sa.script('/capped', [{ status: 200, body: 'first', delayMs: 150 }]);
  let n = 0;
  const capped = (input, init) => (++n === 1 ? fetch(input, init) : Promise.reject(new Error('Too many subrequests.')));
  let done;
  const f = main.withBackoff(capped, { baseMs: 1, hedge: hedge({ delayMs: 20, maxHedges: 2 }), onDone: (d) => (done = d) });
  const res = await f(`${sa.url}/capped`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'first');
  assert.equal(done.won, 1, JSON.stringify(done));
  assert.equal(done.reason, 'success');
  assert.equal(sa.count('/capped'), 1);
});

test('hedged calls with one long-lived caller signal keep nothing on it', async () => {
  sa.script('/long', [{ status: 200, body: 'ok', delayMs: 30 }]);
  const live = new AbortController();
  const f = main.withBackoff(fetch, { baseMs: 1, hedge: hedge({ delayMs: 5 }) });
  for (let i = 0; i < 20; i++) await (await f(`${sa.url}/long`, { signal: live.signal })).text();
  assert.equal(getEventListeners(live.signal, 'abort').length, 0, 'no listener of ours on the caller’s signal');
});
