// Property (issue 34): a stored write is delivered at least once and never
// given up silently. wasm-backoff/outbox on a MemoryStore (one instance, or
// two sharing it: two tabs), on the virtual clock (tests/engine/clock.mjs),
// with a scripted fetch: per request, a random sequence of network
// failures, 5xx, 429 and 503 with Retry-After, answers that never come or
// come late (past the lease), permanent answers (4xx, 501, x-should-retry:
// false), then a last behaviour that repeats; offline periods
// (`navigator.onLine` false: every fetch fails as a browser's would, and
// `online` when they end); requests stored with add() or by fetch()'s 202.
// At the end every stored request is `processed`, and was answered 2xx or
// 3xx with its own body and key, or is in `error` with an `error` event and
// a reason the rules of docs/queue.md give: 'permanent' after an answer the
// policy never retries, 'maxFailures' after at least that many answers (or
// replays cut by their deadline while online), 'maxRetention' only with a
// retention.
import assert from 'node:assert/strict';
import { Outbox, MemoryStore } from 'wasm-backoff/outbox';
import { install } from '../engine/clock.mjs';
import { property } from './props.mjs';

/** Statuses the replay's policy never retries (with every default): a task ends in error at once. */
const NEVER = [400, 404, 409, 501];

/** One behaviour of the server (or the network) for one request. */
const answer = (g) =>
  g.weighted([
    [3, () => 'net'],
    [3, () => ({ s: g.pick([500, 502, 503, 504, 408]) })],
    [2, () => ({ s: g.pick([429, 503]), ra: g.int(0, 5) })],
    [1, () => 'hang'],
    [1, () => ({ s: g.pick([201, 200, 503]), slow: g.int(100, 12_000) })],
    [0.7, () => ({ s: g.pick(NEVER) })],
    [0.3, () => ({ s: 503, xsr: false })],
    [1, () => ({ s: g.pick([200, 201, 204, 302]) })],
  ])();

property('a stored request is delivered at least once, or ends in error by a rule, with its event', {
  cases: 120,
  caseMs: 30_000,
  generate(g) {
    const n = g.int(1, 4);
    return {
      instances: g.weighted([
        [3, 1],
        [1, 2],
      ]),
      retry: { maxAttempts: g.int(1, 3), baseMs: g.pick([1, 10, 100]) },
      queue: {
        leaseMs: g.pick([1000, 3000, 10_000, 30_000]),
        maxFailures: g.int(1, 6),
        pollMs: g.pick([200, 1000, 5000]),
        backoff: { baseMs: g.pick([10, 100, 1000]), ...(g.chance(0.5) && { maxDelayMs: g.pick([2000, 20_000]) }) },
        ...(g.chance(0.15) && { maxRetentionMs: g.pick([60_000, 600_000]) }),
      },
      requests: g.many(n, () => {
        const q = {
          via: g.weighted([
            [3, 'add'],
            [1, 'fetch'],
          ]),
          key: g.chance(0.3),
          at: g.chance(0.3) ? g.int(0, 120_000) : 0,
          answers: g.many(g.int(0, 6), () => answer(g)),
          last: g.weighted([
            [6, { s: 201 }],
            [1, { s: 503 }],
            [1, { s: 400 }],
            [1, 'net-then-201'],
          ]),
        };
        // (fetch() sends once, with the caller's signal, as fetch does: it hangs as the request does)
        if (q.via === 'fetch' && q.answers[0] === 'hang') q.answers[0] = 'net';
        return q;
      }),
      offline: g.many(g.int(0, 2), () => {
        const from = g.int(0, 300_000);
        return [from, from + g.int(1000, 600_000)];
      }),
    };
  },
  async check(c) {
    const clock = install();
    const real = globalThis.fetch;
    const nav = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
    const target = new EventTarget();
    const [add, remove] = [globalThis.addEventListener, globalThis.removeEventListener];
    /** @type {Outbox[]} */
    const boxes = [];
    try {
      let online = true;
      Object.defineProperty(globalThis, 'navigator', { value: { onLine: true }, configurable: true });
      // (the queue listens for `online` on the global object, as in a browser)
      Object.assign(globalThis, {
        addEventListener: target.addEventListener.bind(target),
        removeEventListener: target.removeEventListener.bind(target),
      });
      /** Every request sent: its path, key, body, what it got, and whether the network was up. */
      const log = [];
      /** Requests sent so far, per path. */
      const sent = new Map();
      globalThis.fetch = async (input, init) => {
        const r = new Request(input, init);
        const path = new URL(r.url).pathname;
        const rec = { path, key: r.headers.get('idempotency-key'), body: await r.text(), online, at: Date.now(), got: 'pending' };
        log.push(rec);
        if (!online) {
          rec.got = 'offline';
          throw new TypeError('fetch failed', { cause: new Error('offline') });
        }
        const q = c.requests[Number(path.slice(3))];
        const k = sent.get(path) ?? 0;
        sent.set(path, k + 1);
        let a = k < q.answers.length ? q.answers[k] : q.last;
        if (a === 'net-then-201') a = k === q.answers.length ? 'net' : { s: 201 };
        if (a === 'net') {
          rec.got = 'net';
          throw new TypeError('fetch failed');
        }
        if (a === 'hang' || a.slow) {
          await new Promise((resolve, reject) => {
            // (aborted already, while its body was read: the listener would never hear it)
            if (r.signal.aborted) return reject(r.signal.reason);
            const t = a.slow ? setTimeout(resolve, a.slow) : undefined;
            r.signal.addEventListener('abort', () => (clearTimeout(t), reject(r.signal.reason)), { once: true });
          }).catch((e) => {
            rec.got = 'cut';
            throw e;
          });
        }
        rec.got = a.s;
        rec.never = NEVER.includes(a.s) || a.xsr === false;
        const headers = {};
        if (a.ra !== undefined) headers['retry-after'] = String(a.ra);
        if (a.xsr === false) headers['x-should-retry'] = 'false';
        return new Response(a.s === 204 ? null : 'answer', { status: a.s, headers });
      };

      const store = new MemoryStore();
      const errors = [];
      for (let i = 0; i < c.instances; i++) {
        const box = new Outbox({ retry: c.retry, queue: { store, ...c.queue } });
        box.queue.addEventListener('error', (e) => errors.push({ id: e.task.id, reason: e.reason, failureCount: e.task.failureCount }));
        boxes.push(box);
      }
      // Offline periods, on the virtual clock.
      for (const [from, to] of c.offline) {
        setTimeout(() => ((online = false), (globalThis.navigator.onLine = false)), from);
        setTimeout(() => {
          if (c.offline.some(([f, t]) => f <= to && to < t)) return; // (still inside another)
          online = true;
          globalThis.navigator.onLine = true;
          target.dispatchEvent(new Event('online'));
        }, to);
      }
      /** Each request: its task id (once stored), the body it carries. */
      const tasks = c.requests.map((_q, i) => ({
        i,
        id: /** @type {string | undefined} */ (undefined),
        body: `request ${i} of ${c.requests.length}`,
      }));
      for (const t of tasks) {
        const q = c.requests[t.i];
        setTimeout(async () => {
          const headers = q.key ? { 'idempotency-key': `key-${t.i}` } : {};
          const request = new Request(`https://api.example/r/${t.i}`, { method: 'POST', body: t.body, headers });
          const box = boxes[t.i % boxes.length];
          try {
            if (q.via === 'add') t.id = await box.add(request);
            else {
              const res = await box.fetch(request);
              t.id = res.status === 202 ? res.headers.get('outbox-id') : `answered ${res.status}`;
            }
          } catch (e) {
            t.id = `rejected ${e}`;
          }
        }, q.at);
      }
      for (const box of boxes) box.start();
      // Time passes until every stored request is final (or 3 virtual hours).
      const final = async () => {
        if (tasks.some((t) => t.id === undefined)) return false;
        for (const t of tasks) {
          if (/^(answered|rejected)/.test(t.id)) continue;
          const rec = await store.get(t.id);
          if (rec.state !== 'processed' && rec.state !== 'error') return false;
        }
        return true;
      };
      for (let h = 0; h < 3 * 3600_000 && !(await final()); h += 30_000) await clock.tick(30_000);

      const mine = (id) => log.filter((r) => r.key === id);
      for (const t of tasks) {
        assert.ok(t.id !== undefined, `request ${t.i} was never stored nor answered`);
        assert.ok(!t.id.startsWith('rejected'), `request ${t.i}: add() or fetch() ${t.id}`);
        if (t.id.startsWith('answered')) continue; // (fetch() had an answer: nothing stored)
        const rec = await store.get(t.id);
        const sentOf = mine(t.id);
        const about = `request ${t.i} (${t.id}): ${rec.state}, failureCount ${rec.failureCount}, sent ${sentOf.map((r) => r.got).join(' ')}`;
        for (const r of sentOf) assert.equal(r.body, t.body, `${about}: a replay's body is not the stored one`);
        const ended = errors.filter((e) => e.id === t.id);
        if (rec.state === 'processed') {
          assert.ok(
            sentOf.some((r) => typeof r.got === 'number' && r.got < 400),
            `${about}: processed, never answered 2xx or 3xx`,
          );
          assert.equal(ended.length, 0, `${about}: processed, with an error event`);
          continue;
        }
        assert.equal(rec.state, 'error', `${about}: not final after 3 virtual hours`);
        assert.equal(ended.length, 1, `${about}: ${ended.length} error events`);
        const [e] = ended;
        assert.ok(['permanent', 'maxFailures', 'maxRetention'].includes(e.reason), `${about}: reason ${e.reason}`);
        if (e.reason === 'permanent') {
          const last = sentOf.filter((r) => typeof r.got === 'number').at(-1);
          assert.ok(last?.never, `${about}: 'permanent' after ${last?.got}, which the policy retries`);
        }
        if (e.reason === 'maxFailures') {
          // (a replay that got an answer, or none by the lease's end while online: the server may have taken it)
          const counted = sentOf.filter((r) => typeof r.got === 'number' || ((r.got === 'cut' || r.got === 'pending') && r.online)).length;
          assert.ok(counted >= c.queue.maxFailures, `${about}: maxFailures (${c.queue.maxFailures}) after ${counted} answers`);
        }
        if (e.reason === 'maxRetention') assert.ok(c.queue.maxRetentionMs, `${about}: maxRetention with no retention`);
      }
      const states = await Promise.all(tasks.map(async (t) => (t.id.startsWith('answered') ? 'answered' : (await store.get(t.id)).state)));
      return states.sort().join(' ');
    } finally {
      for (const box of boxes) await clock.run(box.stop()).catch(() => {});
      globalThis.fetch = real;
      nav ? Object.defineProperty(globalThis, 'navigator', nav) : delete globalThis.navigator;
      Object.assign(globalThis, { addEventListener: add, removeEventListener: remove });
      if (add === undefined) delete globalThis.addEventListener, delete globalThis.removeEventListener;
      clock.off();
    }
  },
});
