// `shared: true` (js/sse/shared.js) on the js/ sources, with the delivery
// order of a takeover in the test's hands: Web Locks and BroadcastChannel
// are fakes whose grants and messages go out only when the test says, so
// the orders a real browser can produce (its lock grants and channel
// messages travel on different pipes) are each run on purpose. The
// invariant: every tab that stays open dispatches every event once, in
// order. Real Chromium (five tabs, one real takeover) is
// tests/sse/shared.chromium.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { virtualClock } from '../../js/entries/testing.js';
import { fakeBrowser, settle, sseServer } from './shared-fakes.mjs';
import { Follower } from '../../js/sse/follow.js';

/**
 * Tab A holding the stream of an sseServer(), then one tab per entry of
 * `resumes` (whether its server resumes after Last-Event-ID if it takes
 * over), then the server's events 1..`upTo` (every tab listening; none of
 * A's messages delivered yet). `end()` closes the tabs left, with no timer
 * or request left behind.
 */
async function tabs(t, resumes, upTo) {
  const clock = virtualClock();
  t.after(() => clock.uninstall());
  const b = fakeBrowser();
  t.after(b.uninstall);
  const server = sseServer();
  const a = b.tab(server.fetch(0));
  await settle(clock, b);
  const others = resumes.map((r, i) => b.tab(server.fetch(i + 1, { resumes: r })));
  await settle(clock, b);
  server.push(upTo);
  await settle(clock, b);
  const end = async () => {
    for (const x of others) x.es.close();
    await settle(clock, b);
  };
  return { clock, b, server, a, others, end };
}

/** A's tab closes and the next in line's lock grant is handled at once, before any message waiting. */
async function grantFirst(clock, b, a) {
  b.holdGrants();
  a.es.close();
  await settle(clock, b);
  assert.ok(b.grant(), 'a tab is next in line');
  await settle(clock, b);
}

test('a takeover whose lock grant outruns the last event: a tab that heard it does not dispatch it again', async (t) => {
  const { clock, b, server, a, others, end } = await tabs(t, [true, true], 3);
  const [tb, tc] = others;
  // A heard 1-3 from the server; B and C hear 1-2 from A, and C hears 3 too: B's is still on its way.
  b.deliver((m) => m.data.k === 'event' && m.data.id !== '3');
  b.deliver((m) => m.to === tc.ch && m.data.id === '3');
  assert.deepEqual(
    [a.heard, tb.heard, tc.heard],
    [
      ['e1', 'e2', 'e3'],
      ['e1', 'e2'],
      ['e1', 'e2', 'e3'],
    ],
  );
  // B takes over before A's 3 reaches it: it resumes after 2, and its server sends 3 again, then 4-5.
  await grantFirst(clock, b, a);
  server.push(2);
  await settle(clock, b);
  b.deliver();
  await settle(clock, b);
  b.deliver();
  assert.equal(tb.es.readyState, 1);
  assert.deepEqual(tb.heard, ['e1', 'e2', 'e3', 'e4', 'e5'], 'B: every event once');
  assert.deepEqual(tc.heard, ['e1', 'e2', 'e3', 'e4', 'e5'], 'C: every event once, in order');
  await end();
});

test('a takeover heard late by a tab that is behind: the new holder waits until the old one reaches its resume point', async (t) => {
  const { clock, b, server, a, others, end } = await tabs(t, [true, true], 3);
  const [tb, tc] = others;
  // B hears 1-2 from A; C only 1.
  b.deliver((m) => m.to === tb.ch && m.data.k === 'event' && m.data.id !== '3');
  b.deliver((m) => m.to === tc.ch && m.data.k === 'event' && m.data.id === '1');
  await grantFirst(clock, b, a);
  server.push(2);
  await settle(clock, b);
  // C hears all of B first (its resume after A's 2, then 3-5 from the server), then A's late 2 and 3.
  assert.ok(b.deliver((m) => m.from === tb.ch && m.to === tc.ch) >= 4);
  assert.deepEqual(tc.heard, ['e1'], "C holds B's events until A's reach B's resume point");
  b.deliver();
  assert.deepEqual(tb.heard, ['e1', 'e2', 'e3', 'e4', 'e5']);
  assert.deepEqual(tc.heard, ['e1', 'e2', 'e3', 'e4', 'e5'], 'C: every event once, in order');
  await end();
});

test('the usual order (the last event before the grant), and a server that does not resume: nothing twice', async (t) => {
  // (B's server ignores Last-Event-ID: only what comes next)
  const { clock, b, server, a, others, end } = await tabs(t, [false, true, true], 2);
  const [tb, tc, td] = others;
  b.deliver();
  // The usual order: every tab hears A's 3 before A closes; B takes over (4 and 5 go while no
  // connection is open); its server sends 6.
  server.push(1);
  await settle(clock, b);
  b.deliver();
  b.holdGrants();
  a.es.close();
  await settle(clock, b);
  server.push(2);
  assert.ok(b.grant());
  await settle(clock, b);
  server.push(1);
  await settle(clock, b);
  b.deliver();
  for (const x of others) assert.deepEqual(x.heard, ['e1', 'e2', 'e3', 'e6']);
  // B closes too: C takes over from where it heard (6), with D following; its server sends 7-9.
  tb.es.close();
  await settle(clock, b);
  assert.ok(b.grant());
  await settle(clock, b);
  server.push(3);
  await settle(clock, b);
  b.deliver();
  await settle(clock, b);
  b.deliver();
  assert.deepEqual(tc.heard, ['e1', 'e2', 'e3', 'e6', 'e7', 'e8', 'e9']);
  assert.deepEqual(td.heard, tc.heard);
  await end();
});

test('a follower catching up ignores an ID line the new holder sends again: its position stays its own', () => {
  const seen = [];
  const f = new Follower((m) => seen.push(m.k === 'event' ? m.data : `${m.k} ${m.id}`));
  const ev = (h, n) => f.take({ k: 'event', h, type: 'message', data: `e${n}`, id: String(n) });
  ev('A', 1);
  ev('A', 2);
  ev('A', 3);
  // B resumes after 1: its server sends 2 and 3 again, with an ID-only line between them.
  f.take({ k: 'resume', h: 'B', id: '1', t: 1 });
  ev('B', 2);
  f.take({ k: 'id', h: 'B', id: '2' });
  ev('B', 3);
  ev('B', 4);
  assert.deepEqual(seen, ['e1', 'e2', 'e3', 'e4']);
});
