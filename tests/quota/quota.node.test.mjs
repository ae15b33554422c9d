// wasm-backoff/quota in Node. Its invariants, attacked on virtual time (the
// js/ sources, the kit's clock and a fake API that logs every request):
//   - a call never waits past its deadline: refused at once, nothing sent,
//     nothing reserved (a limit of 0 likewise, deadline or none);
//   - attempts go at the budget's pace, first come first served, per key,
//     requests and tokens both, retries included;
//   - the budgets follow OpenAI's and Anthropic's headers (remaining less
//     what went since, a limit learned, the pace of a reset), and a 429's
//     wait holds the key;
//   - a wait given up (an abort) gives its units back; no timer is left.
// Then the runtime smokes of quota-checks.mjs against the real scripted
// server (Node's fetch), as Chromium runs them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { withBackoff } from '../../js/fetch/index.js';
import { quota, QuotaError } from '../../js/quota/index.js';
import { hedge } from '../../js/fetch/hedge.js';
import { auth } from '../../js/auth/index.js';
import { duration, said } from '../../js/quota/headers.js';
import * as pkg from 'wasm-backoff';
import * as pkgQuota from 'wasm-backoff/quota';
import { install } from '../engine/clock.mjs';
import { startScripted } from '../server/scripted.mjs';
import { control } from '../fetch/fetch-checks.mjs';
import { SMOKES, quotaSmokes } from './quota-checks.mjs';

const A = 'https://api.test';
const FAST = { baseMs: 5, maxDelayMs: 20, jitter: 'none' };

function virtual(t) {
  const clock = install();
  t.after(() => clock.off());
  return clock;
}

/** A fake API: answers at once with `answer(n, rec)` (a status, or { status, headers }); logs each request's ms and body. */
function api(clock, answer = () => 200) {
  const sent = [];
  const f = async (input, init) => {
    const rec = { at: clock.now(), body: init?.body, url: String(input) };
    sent.push(rec);
    const a = answer(sent.length - 1, rec);
    const { status = 200, headers } = typeof a === 'number' ? { status: a } : a;
    return new Response('x', { status, headers });
  };
  return Object.assign(f, { sent, at: () => sent.map((s) => s.at) });
}

const chat = (model, maxTokens) => ({ method: 'POST', body: JSON.stringify({ model, max_tokens: maxTokens }) });

test('requests per minute: a burst of the limit goes at once, then one per 60 000 / rpm ms, in order', async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  const q = quota({ rpm: 60 });
  const get = withBackoff(f, { limit: q });
  const order = [];
  const calls = Array.from({ length: 64 }, (_, i) => get(`${A}/x`).then(() => order.push(i)));
  await clock.run(Promise.all(calls));
  assert.deepEqual(f.at().slice(58), [0, 0, 1000, 2000, 3000, 4000]);
  assert.deepEqual(
    order,
    Array.from({ length: 64 }, (_, i) => i),
    'first come, first served',
  );
  assert.equal(q.state().requests, 0);
  assert.equal(clock.timers(), 0);
});

test('tokens per minute, by cost, per key: each model its own budget', async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  const q = quota({ tpm: 6000, key: (r) => r.json?.model ?? '', cost: (r) => r.json?.max_tokens ?? 0 });
  const post = withBackoff(f, { limit: q, idempotencyKey: true });
  await clock.run(
    Promise.all([
      post(`${A}/v1/chat`, chat('a', 4000)),
      post(`${A}/v1/chat`, chat('a', 4000)), // (2000 short: 2000 / 0.1 per ms = 20 s)
      post(`${A}/v1/chat`, chat('b', 6000)),
    ]),
  );
  assert.deepEqual(
    f.sent.map((s) => `${JSON.parse(s.body).model}@${s.at}`),
    ['a@0', 'b@0', 'a@20000'],
  );
  assert.deepEqual(q.state('a').tokens, 0);
});

test("never past the deadline: refused at once, nothing sent, nothing reserved; onDone's reason 'deadline'", async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  const q = quota({ rpm: 1 });
  let done;
  const get = withBackoff(f, { limit: q, onDone: (d) => (done = d) });
  await clock.run(get(`${A}/1`));
  // (a wait that would end at the deadline is past it: the deadline's abort would come first)
  const e = await clock.run(get(`${A}/2`, undefined, { maxElapsedMs: 60_000 }).catch((x) => x));
  assert.ok(e instanceof QuotaError);
  assert.deepEqual([e.name, e.key, e.retryAfterMs], ['QuotaError', '', 60_000]);
  assert.equal(clock.now(), 0, 'at once');
  assert.equal(done.reason, 'deadline');
  assert.equal(f.sent.length, 1, 'nothing sent');
  // Nothing reserved: the next call still goes at 60 s, and one with a deadline just long enough waits for it.
  const next = get(`${A}/3`, undefined, { maxElapsedMs: 60_001 });
  await clock.run(next);
  assert.deepEqual(f.at(), [0, 60_000]);
  const zero = withBackoff(f, { limit: quota({ rpm: 0 }) });
  const never = await clock.run(zero(`${A}/4`).catch((x) => x));
  assert.equal(never.retryAfterMs, Infinity, 'a limit of 0: refused, even without a deadline');
});

test('a retry takes its budget too, after its backoff; the decision stays the schedule’s', async (t) => {
  const clock = virtual(t);
  const f = api(clock, (n) => (n === 0 ? 503 : 200));
  let done;
  const get = withBackoff(f, { ...FAST, limit: quota({ rpm: 1 }), onDone: (d) => (done = d) });
  await clock.run(get(`${A}/r`));
  assert.deepEqual(f.at(), [0, 60_000], 'the retry waited 20 ms of backoff, then the rest of the minute');
  assert.deepEqual([done.attempts, done.quotaMs], [2, 60_000 - 20]);
  const f2 = api(clock, () => 503);
  const e = await clock.run(withBackoff(f2, { ...FAST, limit: quota({ rpm: 1 }), maxElapsedMs: 1000 })(`${A}/r`).catch((x) => x));
  assert.ok(e instanceof QuotaError, 'a retry that cannot have its budget before the deadline is refused');
  assert.equal(f2.sent.length, 1);
});

test('a hedge counts in the quota: it goes only when its request is there at once, and spends it', async (t) => {
  const clock = virtual(t);
  // The first request of each call answers after 500 ms; a hedge (at 100 ms) at once.
  const slowFirst = () => {
    const sent = [];
    const f = async (_input, init) => {
      sent.push(clock.now());
      if (sent.length === 1) await new Promise((r) => setTimeout(r, 500));
      init?.signal?.throwIfAborted();
      return new Response('x');
    };
    return Object.assign(f, { sent });
  };
  const h = hedge({ delayMs: 100 });
  // One request a minute: the first attempt took it, so no hedge goes; the call waits for its answer.
  const f1 = slowFirst();
  let done;
  await clock.run(withBackoff(f1, { limit: quota({ rpm: 1 }), hedge: h, onDone: (d) => (done = d) })(`${A}/h`));
  assert.deepEqual([f1.sent, done.hedges ?? 0], [[0], 0]);
  // Two a minute: the hedge goes at 100 ms and wins; it spent the second, so the next call waits 30 s for one.
  const f2 = slowFirst();
  const t0 = clock.now();
  const get = withBackoff(f2, { limit: quota({ rpm: 2 }), hedge: h, onDone: (d) => (done = d) });
  await clock.run(get(`${A}/h`));
  assert.deepEqual([done.won, done.hedges], [2, 1]);
  await clock.run(get(`${A}/h`));
  assert.deepEqual(
    f2.sent.map((x) => x - t0),
    [0, 100, 30_000],
  );
  assert.equal(clock.timers(), 0);
});

test("a racer's 429 holds the key at once: no later hedge, and no other call of the key, until its wait ends", async (t) => {
  const clock = virtual(t);
  // /h's first request answers 429 (Retry-After: 30) at 150 ms; its hedge (at 100) answers 200 at 1 100.
  const sent = [];
  const f = async (input, init) => {
    const url = String(input);
    sent.push(`${url.slice(A.length)}@${clock.now()}`);
    const first = url.endsWith('/h') && sent.length === 1;
    await new Promise((r, no) => {
      const id = setTimeout(r, url.endsWith('/h') ? (first ? 150 : 1000) : 0);
      init?.signal?.addEventListener('abort', () => (clearTimeout(id), no(init.signal.reason)));
    });
    return first ? new Response('x', { status: 429, headers: { 'retry-after': '30' } }) : new Response('x');
  };
  const get = withBackoff(f, { limit: quota({ rpm: 100 }), hedge: hedge({ delayMs: 100, maxHedges: 2 }) });
  const other = new Promise((r) => setTimeout(r, 200)).then(() => get(`${A}/other`));
  await clock.run(Promise.all([get(`${A}/h`), other]));
  // (the second hedge, due at 200, is not sent: the key is held from 150 to 30 150)
  assert.deepEqual(sent, ['/h@0', '/h@100', '/other@30150']);
  assert.equal(clock.timers(), 0);
});

test("auth's resend after a refresh is a request: it waits for its unit as an attempt does", async (t) => {
  const clock = virtual(t);
  let token = 'old';
  const sent = [];
  const f = async (_input, init) => {
    const h = new Headers(init?.headers);
    sent.push([h.get('authorization'), clock.now()]);
    return new Response('x', { status: h.get('authorization') === 'new' ? 200 : 401 });
  };
  const a = auth({ header: () => token, refresh: async () => void (token = 'new') });
  let done;
  const res = await clock.run(withBackoff(f, { limit: quota({ rpm: 1 }), auth: a, onDone: (d) => (done = d) })(`${A}/x`));
  assert.equal(res.status, 200);
  assert.deepEqual(sent, [
    ['old', 0],
    ['new', 60_000],
  ]);
  assert.deepEqual([done.attempts, done.refreshed, done.quotaMs], [1, true, 60_000]);
  // Past the deadline, the resend is refused at once (nothing sent), as an attempt is.
  token = 'old';
  sent.length = 0;
  const e = await clock.run(
    withBackoff(f, {
      limit: quota({ rpm: 1 }),
      auth: auth({ header: () => token, refresh: async () => void (token = 'new') }),
      maxElapsedMs: 1000,
    })(`${A}/x`).catch((x) => x),
  );
  assert.ok(e instanceof QuotaError, String(e));
  assert.deepEqual(
    sent.map(([h]) => h),
    ['old'],
  );
  assert.equal(clock.timers(), 0);
});

test('an abort while waiting rejects at once and gives its units back', async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  const q = quota({ rpm: 60 });
  const get = withBackoff(f, { limit: q });
  await clock.run(Promise.all(Array.from({ length: 60 }, () => get(`${A}/x`))));
  const ac = new AbortController();
  const gone = get(`${A}/x`, { signal: ac.signal }); // (its turn: 1 s)
  const waiting = get(`${A}/x`); // (2 s: a turn taken keeps its time)
  await clock.tick(500);
  ac.abort(new Error('left'));
  assert.equal((await gone.catch((e) => e)).message, 'left');
  assert.equal(getEventListeners(ac.signal, 'abort').length, 0);
  // The unit given back: the next call goes at 2 s beside it, not at 3 s.
  const next = get(`${A}/x`);
  await clock.run(Promise.all([waiting, next]));
  assert.deepEqual(f.at().slice(60), [2000, 2000]);
  assert.equal(clock.timers(), 0);
});

test("OpenAI's headers: remaining (less what went after) caps the budget; a limit learned when none is named", async (t) => {
  const clock = virtual(t);
  // Another client uses the same key: the server has 2 left when we think 60.
  let left = 3;
  const f = api(clock, () => ({
    status: 200,
    headers: { 'x-ratelimit-limit-requests': '60', 'x-ratelimit-remaining-requests': String(--left), 'x-ratelimit-reset-requests': '1s' },
  }));
  const q = quota({ rpm: 60 });
  const get = withBackoff(f, { limit: q });
  await clock.run(get(`${A}/x`));
  assert.equal(q.state().requests, 2);
  await clock.run(Promise.all([get(`${A}/x`), get(`${A}/x`), get(`${A}/x`)]));
  assert.deepEqual(f.at(), [0, 0, 0, 1000]);
  // No rpm named: the first call goes, its answer names the limit and what remains.
  // (the server counts each request as it comes: 1 left after the first, 0 after the second)
  const g = api(clock, (n) => ({
    status: 200,
    headers: { 'x-ratelimit-limit-requests': '120', 'x-ratelimit-remaining-requests': String(Math.max(0, 1 - n)) },
  }));
  const learned = quota();
  const t0 = clock.now();
  await clock.run(Promise.all([0, 1].map(() => withBackoff(g, { limit: learned })(`${A}/y`))));
  assert.equal(learned.state().rpm, 120);
  assert.deepEqual(
    g.at().map((x) => x - t0),
    [0, 0],
    'two went before any answer',
  );
  await clock.run(withBackoff(g, { limit: learned })(`${A}/y`));
  assert.equal(g.at().at(-1) - t0, 500, 'then one per 500 ms');
});

test("Anthropic's headers, and a reset's pace when at most half remains (a limit per day refills as the server says)", async (t) => {
  const clock = virtual(t);
  const day = 86_400_000;
  const f = api(clock, () => {
    const now = Date.now();
    return {
      status: 200,
      headers: {
        date: new Date(now).toUTCString(),
        'anthropic-ratelimit-requests-limit': '100',
        'anthropic-ratelimit-requests-remaining': '0',
        'anthropic-ratelimit-requests-reset': new Date(Math.floor(now / 1000) * 1000 + day).toISOString(),
        'anthropic-ratelimit-tokens-limit': '1000',
        'anthropic-ratelimit-tokens-remaining': '900',
        'anthropic-ratelimit-tokens-reset': new Date(now + 6000).toISOString(),
      },
    };
  });
  const q = quota({ cost: () => 100 });
  const get = withBackoff(f, { limit: q });
  await clock.run(get(`${A}/x`));
  assert.deepEqual([q.state().rpm, q.state().requests, q.state().tpm, q.state().tokens], [100, 0, 1000, 900]);
  const next = get(`${A}/x`);
  await clock.run(next, day);
  assert.equal(f.at()[1], day / 100, 'the next request at the server’s pace: 100 per day');
});

test('a 429 that names a wait holds every call of its key until then (up to maxRetryAfterMs)', async (t) => {
  const clock = virtual(t);
  const f = api(clock, (n) => (n === 0 ? { status: 429, headers: { 'retry-after-ms': '3000' } } : 200));
  const q = quota({ rpm: 1000, key: (r) => new URL(r.url).pathname });
  const get = withBackoff(f, { ...FAST, limit: q });
  const first = get(`${A}/m`);
  await clock.tick(1);
  const other = get(`${A}/m`);
  const elsewhere = get(`${A}/n`);
  await clock.run(Promise.all([first, other, elsewhere]));
  // (the other /m call held until 3000 exactly; the first's own retry waits the server's 3 s plus its jitter above)
  const sent = f.sent.map((s) => `${new URL(s.url).pathname}@${s.at}`);
  assert.deepEqual(sent.slice(0, 3), ['/m@0', '/n@1', '/m@3000']);
  assert.match(sent[3], /^\/m@3\d\d\d/);
  assert.equal(q.state('/m').heldMs, 0);
});

test('key and cost: checked per call (nothing sent when bad); bad options name the option', async (t) => {
  const clock = virtual(t);
  const f = api(clock);
  await assert.rejects(withBackoff(f, { limit: quota({ key: () => 1 }) })(`${A}/x`), {
    name: 'TypeError',
    message: 'quota: key(request) must return a string',
  });
  await assert.rejects(withBackoff(f, { limit: quota({ cost: () => -1 }) })(`${A}/x`), {
    name: 'RangeError',
    message: 'quota: cost(request) must return a finite number >= 0',
  });
  const boom = new Error('no model');
  const bad = quota({
    key: () => {
      throw boom;
    },
  });
  assert.equal(await clock.run(withBackoff(f, { limit: bad })(`${A}/x`).catch((e) => e)), boom);
  assert.equal(f.sent.length, 0);
  const cases = [
    [{ rpm: -1 }, RangeError, 'quota: rpm must be a finite number >= 0'],
    [{ rpm: Infinity }, RangeError, 'quota: rpm must be a finite number >= 0'],
    [{ tpm: '1' }, TypeError, 'quota: tpm must be a finite number >= 0'],
    [{ key: 'model' }, TypeError, 'quota: key must be a function (request) => string'],
    [{ cost: 5 }, TypeError, 'quota: cost must be a function (request) => number of tokens'],
    [3, TypeError, 'quota options must be an object'],
  ];
  for (const [o, E, message] of cases) assert.throws(() => quota(o), { name: E.name, message });
  assert.throws(() => withBackoff(fetch, { limit: { rpm: 5 } }), { message: "limit must be made by quota() from 'wasm-backoff/quota'" });
  assert.ok(Object.isFrozen(quota()));
});

test('the headers read: durations, RFC 3339 times from the answer’s Date, garbage absent', () => {
  assert.deepEqual(['1s', '6m0s', '20ms', '1h2m3.5s', '0.5', '', 'soon', '5x', null].map(duration), [
    1000,
    360_000,
    20,
    3_723_500,
    500,
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
  const h = new Headers({
    date: 'Tue, 01 Jul 2025 00:00:00 GMT',
    'anthropic-ratelimit-requests-limit': '50',
    'anthropic-ratelimit-requests-remaining': 'lots',
    'anthropic-ratelimit-requests-reset': '2025-07-01T00:00:30Z',
    'anthropic-ratelimit-input-tokens-remaining': '7',
  });
  assert.deepEqual(said(h, 0), {
    requests: { limit: 50, remaining: undefined, resetMs: 30_000 },
    tokens: { limit: undefined, remaining: 7, resetMs: undefined },
  });
  assert.deepEqual(said(new Headers(), 0), { requests: undefined, tokens: undefined });
});

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

test('the package exports quota and QuotaError; the main entry takes it', () => {
  assert.equal(typeof pkgQuota.quota, 'function');
  assert.equal(typeof pkgQuota.QuotaError, 'function');
  assert.equal(typeof pkg.withBackoff(fetch, { limit: pkgQuota.quota({ rpm: 1 }) }), 'function');
});

for (const name of Object.keys(SMOKES)) {
  test(`smoke (Node's fetch): ${name}`, async () => {
    assert.deepEqual(await quotaSmokes({ ...pkg, ...pkgQuota }, control(srv.url), [name]), []);
  });
}
