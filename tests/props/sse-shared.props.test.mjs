// Property: `shared: true` (js/sse/shared.js) tells every tab every event
// once, in order, whatever the order in which its takeovers' lock grants
// and channel messages arrive. Random runs on the js/ sources and the
// kit's virtual clock, with fake Web Locks and BroadcastChannel
// (tests/sse/shared-fakes.mjs): 3-5 tabs open before the first event, and
// up to 7 as more open mid-stream; the
// server sends events in bursts to the holder's connection and resumes a
// connection after its Last-Event-ID (one without sends only new events);
// holders close one after another; between any two moves any channel
// message may be delivered (each sender's in order, per recipient), and a
// lock let go reaches the next tab in line at a random moment.
//   Each tab open at the end heard, in order and none twice, every event
//   the server sent on some connection (one sent while none was open, and
//   not sent again, is lost to all), up to the server's last. A tab that
//   closed heard none twice. The exception, a documented limit: a holder
//   that had heard nothing, taking over once events went, connects with no
//   Last-Event-ID and its server sends only what comes next; the old
//   holder's last events then reach the others as the channel brings them
//   (maybe after the new one's first), and a tab that takes over before
//   they reach it misses them. Asserted then: none twice, and every event
//   sent after that takeover. A tab that opened mid-stream: every event
//   from the first it heard.
import assert from 'node:assert/strict';
import { virtualClock } from '../../js/entries/testing.js';
import { fakeBrowser, settle, sseServer } from '../sse/shared-fakes.mjs';
import { property } from './props.mjs';

property('every tab open hears every event once, in order, across takeovers in any delivery order', {
  cases: 150,
  generate(g) {
    const tabs = g.int(3, 5);
    const closes = g.int(1, tabs - 1);
    // moves: a burst of events, a message delivered, a holder closing, a grant
    const moves = g.many(g.int(20, 60), () =>
      g.weighted([
        [2, { push: g.int(1, 3) }],
        [6, { deliver: g.rand() }],
        [1, 'close'],
        [1, 'grant'],
        [1, 'join'],
      ]),
    );
    return { tabs, closes, moves };
  },
  async check(c) {
    const clock = virtualClock();
    const b = fakeBrowser();
    try {
      const srv = sseServer();
      const tabs = [];
      for (let i = 0; i < c.tabs; i++) {
        tabs.push({ ...b.tab(srv.fetch(i)), i, open: true });
        await settle(clock, b);
        // (the first holds at once; then a lock let go reaches the next in line only at a 'grant' move, or at the end)
        b.holdGrants();
      }
      const holder = () => tabs.find((t) => t.open && srv.asked.has(t.i) && !t.gone);
      // (A tab that has heard no event yet gets what is on its way to it before it may take over: one
      // that takes over having heard nothing cannot say where to resume, the documented limit above.)
      const grant = () => {
        for (const t of tabs) if (t.open && t.heard.length === 0) b.deliver((m) => m.to === t.ch);
        b.grant();
      };
      let closed = 0;
      for (const m of c.moves) {
        if (m === 'close') {
          const h = holder();
          if (!h || closed === c.closes) continue;
          h.es.close();
          h.open = false;
          h.gone = true;
          closed++;
        } else if (m === 'grant') grant();
        else if (m === 'join') {
          // (a tab opening mid-stream: it hears from where the holder's answer to its hello says)
          if (tabs.length < 7) tabs.push({ ...b.tab(srv.fetch(tabs.length)), i: tabs.length, open: true, joined: srv.n });
        } else if (m.push) srv.push(m.push);
        else if (b.waiting) b.deliverOne(m.deliver);
        await settle(clock, b);
      }
      // The end: the last grant, every message, a last burst heard by all.
      for (let i = 0; i < 3; i++) {
        grant();
        await settle(clock, b);
        while (b.waiting) b.deliver();
        await settle(clock, b);
      }
      srv.push(1);
      await settle(clock, b);
      b.deliver();
      await settle(clock, b);
      // A holder that had heard nothing, taking over once events went (no Last-Event-ID: its server
      // sends only what comes next): the old holder's last events reach the other tabs as the
      // channel brings them, maybe after some of the new one's, and a tab that takes over before
      // they reach it does not hear them. After it: none twice, and every event sent after it.
      const since = Math.max(
        0,
        ...[...srv.asked.values()]
          .flat()
          .filter((a) => a.last === '' && a.n > 0)
          .map((a) => a.n),
      );
      const sent = [...srv.sent].sort((x, y) => x - y);
      for (const t of tabs) {
        const ids = t.heard.map((d) => Number(d.slice(1)));
        const sorted = [...ids].sort((x, y) => x - y);
        assert.equal(new Set(ids).size, ids.length, `tab ${t.i}, an event twice: ${ids.join(',')}`);
        if (!t.open) continue;
        assert.equal(sorted.at(-1), srv.n, `tab ${t.i} heard up to the last: ${ids.join(',')}`);
        if (t.joined !== undefined) {
          // (a tab that opened mid-stream: from the first event it heard, every event sent after, once, in order)
          const from = sent.filter((e) => e >= ids[0] && (!since || e > since));
          assert.deepEqual(since ? sorted.filter((e) => e > since) : ids, from, `tab ${t.i} (opened at ${t.joined}): ${ids.join(',')}`);
          continue;
        }
        if (since) {
          const after = sent.filter((e) => e > since);
          assert.deepEqual(
            sorted.filter((e) => e > since),
            after,
            `tab ${t.i}: ${ids.join(',')} (sent after ${since}: ${after.join(',')})`,
          );
          continue;
        }
        assert.deepEqual(ids, sorted, `tab ${t.i}, out of order: ${ids.join(',')}`);
        assert.deepEqual(ids, sent, `tab ${t.i}: ${ids.join(',')} (sent: ${sent.join(',')})`);
      }
      for (const t of tabs) t.es.close();
      await settle(clock, b);
      assert.equal(clock.pending(), 0, 'a timer left behind');
      return `${closed} takeover${closed === 1 ? '' : 's'}${since ? ' (one by a tab that had heard nothing)' : ''}`;
    } finally {
      b.uninstall();
      clock.uninstall();
    }
  },
});
