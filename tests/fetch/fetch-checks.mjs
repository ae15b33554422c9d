// Scenarios of the fetch driver against the real scripted server
// (tests/server/scripted.mjs), shared by every runtime: Node, a Chromium
// page, workerd, Deno and Bun import this file and run `fetchScenarios`.
// The server is driven over HTTP (/__control) so the same code works where
// the test cannot reach the server's objects. Each scenario returns nothing
// or throws; `fetchScenarios` collects failures by name.

/** Talks to the scripted server's control API (plain fetch, never retried). */
export function control(base) {
  const post = (p, body) =>
    fetch(`${base}/__control/${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body ?? {}),
    }).then((r) => {
      if (!r.ok) throw new Error(`control ${p}: ${r.status}`);
      return r.text();
    });
  const requests = (path) => fetch(`${base}/__control/requests?path=${encodeURIComponent(path)}`).then((r) => r.json());
  const count = (path) => requests(path).then((l) => l.length);
  return {
    base,
    script: (path, steps) => post('script', { path, steps }),
    reset: () => post('reset'),
    requests,
    count,
    /** Resolves once the server has logged `n` requests to `path` (what a test acts on, not a sleep's guess); fails after 5 s. */
    async arrived(path, n = 1) {
      for (let i = 0; i < 250; i++) {
        if ((await count(path)) >= n) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`${path}: ${n} request(s) did not arrive in 5 s`);
    },
  };
}

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

const FAST = { baseMs: 5, maxDelayMs: 20 }; // real waits, but only milliseconds
const IN_WORKERD = globalThis.navigator?.userAgent === 'Cloudflare-Workers';
const IN_NODE = !globalThis.Deno && !globalThis.Bun && globalThis.process?.release?.name === 'node';

let unique = 0;
const path = (name) => `/${name}-${Date.now().toString(36)}-${unique++}`;

/** name -> async (lib, ctl) => void */
export const SCENARIOS = {
  async 'retries 503s and resolves with the first success'({ fetchWithBackoff }, ctl) {
    const p = path('flaky');
    await ctl.script(p, [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    const infos = [];
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, onRetry: (i) => infos.push(i) });
    check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
    check((await ctl.count(p)) === 3, 'server saw 3 requests');
    check(
      infos.length === 2 && infos.every((i, k) => i.attempt === k + 1 && i.status === 503 && i.delayMs >= 0),
      `onRetry ${JSON.stringify(infos)}`,
    );
  },

  async 'after the last attempt, resolves with the last response'({ fetchWithBackoff }, ctl) {
    const p = path('down');
    await ctl.script(p, [{ status: 502, body: 'last' }]);
    let done;
    const res = await fetchWithBackoff(ctl.base + p, {}, { ...FAST, maxAttempts: 3, onDone: (d) => (done = d) });
    check(res.status === 502 && (await res.text()) === 'last', `status ${res.status}`);
    check((await ctl.count(p)) === 3, 'exactly maxAttempts requests');
    check(done.attempts === 3 && done.reason === 'exhausted' && done.status === 502, `onDone ${JSON.stringify(done)}`);
  },

  async 'default maxAttempts is 5; a 4xx other than 408/429 is not retried'({ fetchWithBackoff }, ctl) {
    const p = path('five');
    await ctl.script(p, [{ status: 500 }]);
    await fetchWithBackoff(ctl.base + p, undefined, FAST);
    check((await ctl.count(p)) === 5, 'five attempts by default');
    const q = path('notfound');
    await ctl.script(q, [{ status: 404 }, { status: 200 }]);
    const res = await fetchWithBackoff(ctl.base + q, undefined, FAST);
    check(res.status === 404 && (await ctl.count(q)) === 1, '404 returned at once');
    const r = path('custom');
    await ctl.script(r, [{ status: 404 }, { status: 200 }]);
    const res2 = await fetchWithBackoff(ctl.base + r, undefined, { ...FAST, retryOn: [404] });
    check(res2.status === 200 && (await ctl.count(r)) === 2, 'retryOn overrides');
  },

  async 'network errors are retried, and the last one is rejected'({ fetchWithBackoff }, ctl) {
    // Browsers, Deno, Bun and workerd resend a request by themselves when a
    // reused keep-alive connection is reset, so there the server may see
    // more requests than we made (Node's undici does not): at most one more
    // per scripted reset (seen: Chromium resending both of two). Our own
    // attempts are counted exactly through onDone.
    const seen = async (p, ours, resets) => {
      const n = await ctl.count(p);
      return IN_NODE ? n === ours : n >= ours && n <= ours + resets;
    };
    const p = path('reset');
    await ctl.script(p, [{ reset: true }, { reset: true }, { status: 200 }]);
    let done;
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, onDone: (d) => (done = d) });
    check(res.status === 200 && done.attempts <= 3 && (await seen(p, done.attempts, 2)), `recovered after resets: ${JSON.stringify(done)}`);
    const q = path('dead');
    await ctl.script(q, [{ reset: true }]);
    let err;
    await fetchWithBackoff(ctl.base + q, undefined, { ...FAST, maxAttempts: 2, onDone: (d) => (done = d) }).catch((e) => (err = e));
    // fetch's own error for a lost connection: a TypeError, except in
    // workerd, whose fetch rejects with a plain Error.
    const fetchError = IN_WORKERD ? Error : TypeError;
    check(err instanceof fetchError, `rejects with fetch's error, got ${err}`);
    check(done.attempts === 2 && done.reason === 'exhausted' && (await seen(q, 2, 2)), `two attempts: ${JSON.stringify(done)}`);
  },

  async 'POST is not retried unless idempotent by key or by option'({ fetchWithBackoff }, ctl) {
    const p = path('post');
    await ctl.script(p, [{ status: 503 }, { status: 201 }]);
    let done;
    const res = await fetchWithBackoff(ctl.base + p, { method: 'POST', body: 'x' }, { ...FAST, onDone: (d) => (done = d) });
    check(res.status === 503 && (await ctl.count(p)) === 1 && done.reason === 'not-idempotent', 'plain POST sent once');

    const q = path('postkey');
    await ctl.script(q, [{ status: 503 }, { status: 503 }, { echo: true }]);
    const body = JSON.stringify({ order: 42, note: 'é✓' });
    const res2 = await fetchWithBackoff(
      ctl.base + q,
      { method: 'POST', body, headers: { 'Idempotency-Key': 'k-1', 'content-type': 'application/json' } },
      FAST,
    );
    check(res2.status === 200, `with Idempotency-Key: ${res2.status}`);
    const reqs = await ctl.requests(q);
    check(reqs.length === 3 && reqs.every((r) => r.body === body && r.method === 'POST'), 'identical bodies on every attempt');

    const r = path('postopt');
    await ctl.script(r, [{ status: 503 }, { status: 200 }]);
    const res3 = await fetchWithBackoff(
      ctl.base + r,
      { method: 'POST', body: new Uint8Array([1, 2, 3]) },
      { ...FAST, retryNonIdempotent: true },
    );
    check(res3.status === 200 && (await ctl.count(r)) === 2, 'retryNonIdempotent');
  },

  async 'a Request input is cloned for each attempt, body included'({ fetchWithBackoff }, ctl) {
    const p = path('request');
    await ctl.script(p, [{ status: 500 }, { status: 200 }]);
    const req = new Request(ctl.base + p, { method: 'PUT', body: 'put-body' });
    const res = await fetchWithBackoff(req, undefined, FAST);
    check(res.status === 200, `status ${res.status}`);
    const reqs = await ctl.requests(p);
    check(reqs.length === 2 && reqs.every((r) => r.body === 'put-body' && r.method === 'PUT'), 'PUT body replayed');
    const u = path('url');
    await ctl.script(u, [{ status: 500 }, { status: 200 }]);
    const res2 = await fetchWithBackoff(new URL(ctl.base + u), undefined, FAST);
    check(res2.status === 200 && (await ctl.count(u)) === 2, 'URL input');
  },

  async 'Retry-After is honoured as a floor and reported'({ fetchWithBackoff }, ctl) {
    // Seen through onRetry, then aborted: no real wait needed to check the arithmetic.
    for (const [made, want] of [
      [() => '2', 2000],
      [() => new Date(Date.now() + 3000).toUTCString(), 3000],
    ]) {
      const p = path('ra');
      const value = made(); // (the date made now, not before the first case ran)
      await ctl.script(p, [{ status: 429, headers: { 'retry-after': value } }]);
      const ac = new AbortController();
      let info;
      const reason = new Error('stop');
      const err = await fetchWithBackoff(
        ctl.base + p,
        { signal: ac.signal },
        {
          ...FAST,
          onRetry: (i) => {
            info = i;
            ac.abort(reason);
          },
        },
      ).catch((e) => e);
      check(err === reason, 'aborted with the reason');
      // An HTTP-date has whole seconds: 3 s ahead is 2–3 s away once truncated and sent (1.2 s, far above FAST's
      // 20 ms, the room for a loaded machine's round trips).
      const low = value === '2' ? 2000 : want - 1800;
      check(info.retryAfterMs >= low && info.retryAfterMs <= want, `Retry-After ${value}: ${JSON.stringify(info)}`);
      check(
        info.delayMs >= info.retryAfterMs && info.delayMs <= info.retryAfterMs * 1.1 + 1,
        `wait above Retry-After by <= 10 %: ${JSON.stringify(info)}`,
      );
    }
  },

  async 'Retry-After: a real one-second wait'({ fetchWithBackoff }, ctl) {
    const p = path('ra1');
    await ctl.script(p, [{ status: 503, headers: { 'retry-after': '1' } }, { status: 200 }]);
    const t0 = Date.now();
    const res = await fetchWithBackoff(ctl.base + p, undefined, FAST);
    const reqs = await ctl.requests(p);
    check(res.status === 200 && reqs.length === 2, 'retried after Retry-After');
    check(Date.now() - t0 >= 1000, `waited ${Date.now() - t0} ms`);
  },

  async 'Retry-After above maxRetryAfterMs returns that response at once'({ fetchWithBackoff }, ctl) {
    for (const value of ['120', '86400000', '1700000000']) {
      const p = path('ra-long');
      await ctl.script(p, [{ status: 429, headers: { 'retry-after': value } }, { status: 200 }]);
      let done;
      const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, onDone: (d) => (done = d) });
      check(res.status === 429 && (await ctl.count(p)) === 1 && done.reason === 'retry-after', `Retry-After ${value}`);
    }
  },

  async 'garbage or past Retry-After falls back to the backoff'({ fetchWithBackoff }, ctl) {
    for (const value of ['-3', 'soon', '1.5', 'Sun, 06 Nov 1994 08:49:37 GMT', '']) {
      const p = path('ra-bad');
      await ctl.script(p, [{ status: 503, headers: { 'retry-after': value } }, { status: 200 }]);
      const infos = [];
      const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, onRetry: (i) => infos.push(i) });
      check(res.status === 200, `status with Retry-After ${JSON.stringify(value)}`);
      check(
        infos[0].retryAfterMs === undefined && Number.isFinite(infos[0].delayMs) && infos[0].delayMs <= 20,
        `fallback for ${JSON.stringify(value)}: ${JSON.stringify(infos[0])}`,
      );
    }
  },

  async 'a per-attempt timeout recovers from a hung first attempt'({ fetchWithBackoff }, ctl) {
    const p = path('hang');
    await ctl.script(p, [{ hang: true }, { status: 200, body: 'second' }]);
    // (1 s: the second attempt must answer within it on a loaded machine, or a third goes)
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, timeoutMs: 1000 });
    check(res.status === 200 && (await res.text()) === 'second' && (await ctl.count(p)) === 2, 'second attempt answered');
  },

  async 'maxElapsedMs: no wait starts that would end past the deadline'({ fetchWithBackoff }, ctl) {
    const p = path('deadline');
    // (a 500: a 503 is throttling, whose retries wait on 10 × baseMs)
    await ctl.script(p, [{ status: 500 }]);
    let done;
    // Attempts at 0 and 300 ms; the wait after the second would end at
    // 600 ms or later, past the 550 ms deadline, so none starts. Each
    // attempt has 250 ms to answer before the line it must not cross (a
    // loaded CI machine took over 100 ms with a tighter plan).
    const res = await fetchWithBackoff(ctl.base + p, undefined, {
      strategy: 'constant',
      jitter: 'none',
      baseMs: 300,
      maxElapsedMs: 550,
      maxAttempts: 10,
      onDone: (d) => (done = d),
    });
    check(
      res.status === 500 && (await ctl.count(p)) === 2 && done.reason === 'deadline',
      `deadline: ${await ctl.count(p)} requests, ${JSON.stringify(done)}`,
    );
  },

  async 'an aborted signal sends nothing; an abort in a wait rejects at once with the reason'({ fetchWithBackoff }, ctl) {
    const p = path('pre');
    await ctl.script(p, [{ status: 200 }]);
    const reason = { why: 'user left' };
    const err = await fetchWithBackoff(ctl.base + p, { signal: AbortSignal.abort(reason) }).catch((e) => e);
    check(err === reason && (await ctl.count(p)) === 0, 'pre-aborted: no request, exact reason');

    const q = path('wait');
    await ctl.script(q, [{ status: 503 }]);
    const ac = new AbortController();
    const reason2 = new Error('cancelled during the wait');
    let t;
    const pending = fetchWithBackoff(
      ctl.base + q,
      { signal: ac.signal },
      {
        strategy: 'constant',
        jitter: 'none',
        baseMs: 10000,
        onRetry: () => setTimeout(() => ((t = Date.now()), ac.abort(reason2)), 20),
      },
    ).catch((e) => e);
    const got = await pending;
    check(got === reason2, `rejected with the reason: ${got}`);
    // (the wait is 10 s: 2 s tells "at once" from "after the wait" on a loaded machine)
    check(Date.now() - t < 2000, `within ${Date.now() - t} ms of the abort`);
    check((await ctl.count(q)) === 1, 'no further attempt');

    const r = path('during');
    await ctl.script(r, [{ hang: true }]);
    const ac3 = new AbortController();
    const reason3 = new Error('cancelled during the attempt');
    const during = fetchWithBackoff(ctl.base + r, { signal: ac3.signal }, FAST).catch((e) => e);
    await ctl.arrived(r); // (an abort before the request arrived would leave nothing to count)
    ac3.abort(reason3);
    const got3 = await during;
    check(got3 === reason3 && (await ctl.count(r)) === 1, `abort during an attempt: ${got3}`);

    const s = path('reqsignal');
    await ctl.script(s, [{ status: 200 }]);
    const reason4 = new Error('request signal');
    const got4 = await fetchWithBackoff(new Request(ctl.base + s, { signal: AbortSignal.abort(reason4) })).catch((e) => e);
    check(got4 === reason4 && (await ctl.count(s)) === 0, "a Request's own signal is honoured");
  },

  async 'shouldRetry can veto and force'({ fetchWithBackoff }, ctl) {
    const p = path('veto');
    await ctl.script(p, [{ status: 503 }, { status: 200 }]);
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, shouldRetry: () => false });
    check(res.status === 503 && (await ctl.count(p)) === 1, 'vetoed');
    const q = path('force');
    await ctl.script(q, [{ status: 409 }, { status: 200 }]);
    const res2 = await fetchWithBackoff(ctl.base + q, undefined, {
      ...FAST,
      shouldRetry: ({ status }) => (status === 409 ? true : undefined),
    });
    check(res2.status === 200 && (await ctl.count(q)) === 2, 'forced');
  },

  async 'a shared RetryBudget stops retries when spent'({ fetchWithBackoff, RetryBudget }, ctl) {
    const p = path('budget');
    await ctl.script(p, [{ status: 503 }]);
    const budget = new RetryBudget({ minPerSec: 0.2, ttlMs: 10000, retryRatio: 0 }); // 2 retries per window, whatever the traffic
    const reasons = [];
    for (let i = 0; i < 3; i++) {
      await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, maxAttempts: 3, budget, onDone: (d) => reasons.push(d.reason) });
    }
    // 3 calls + 2 retries in all, then the budget says no.
    check((await ctl.count(p)) === 5, `server saw ${await ctl.count(p)}`);
    check(reasons.join() === 'exhausted,budget,budget', reasons.join());
  },

  async 'withBackoff wraps a fetch function and validates options when wrapping'({ withBackoff }, ctl) {
    const p = path('wrap');
    await ctl.script(p, [{ status: 503 }, { status: 200 }]);
    const f = withBackoff(fetch, FAST);
    const res = await f(ctl.base + p);
    check(res.status === 200 && (await ctl.count(p)) === 2, 'wrapped fetch retried');
    let e1, e2;
    try {
      withBackoff(fetch, { retryOn: 'all' });
    } catch (e) {
      e1 = e;
    }
    try {
      withBackoff(fetch, { timeoutMs: -1 });
    } catch (e) {
      e2 = e;
    }
    check(e1 instanceof TypeError && e1.message.startsWith('retryOn'), `retryOn: ${e1}`);
    check(e2 instanceof RangeError && e2.message.startsWith('timeoutMs'), `timeoutMs: ${e2}`);
  },

  async "a Gate from 'wasm-backoff/gate' holds a target's calls: one round, one probe, all released"({ withBackoff, createGate }, ctl) {
    const p = path('gated');
    // The three calls sent together all fail; the probe succeeds; the two others are released.
    await ctl.script(p, [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    // (a 300 ms round: the two other failures must reach the gate within it, or they count after the probe
    // as a new failure and start a second round; a loaded Deno once took longer than a 5 ms round)
    const gate = createGate({ baseMs: 300, maxDelayMs: 300, jitter: 'none', consecutive: 1, key: () => 'target' });
    const f = withBackoff(fetch, { ...FAST, gate });
    const res = await Promise.all([f(ctl.base + p), f(ctl.base + p), f(ctl.base + p)]);
    check(
      res.every((r) => r.status === 200),
      `statuses ${res.map((r) => r.status)}`,
    );
    const { rounds, probes } = gate.stats();
    check(rounds === 1 && probes === 1, `rounds ${rounds}, probes ${probes}`);
    check((await ctl.count(p)) === 6, `server saw ${await ctl.count(p)} (3 failures, 1 probe, 2 released)`);
    check(gate.state('target').state === 'closed', gate.state('target').state);
    gate.free();
  },

  async 'bad options reject without sending anything'({ fetchWithBackoff }, ctl) {
    const p = path('badopt');
    await ctl.script(p, [{ status: 200 }]);
    const err = await fetchWithBackoff(ctl.base + p, undefined, { baseMs: -1 }).catch((e) => e);
    check(err instanceof RangeError && err.message.startsWith('baseMs'), `${err}`);
    const err2 = await fetchWithBackoff(ctl.base + p, undefined, { onRetry: 1 }).catch((e) => e);
    check(err2 instanceof TypeError && err2.message.startsWith('onRetry'), `${err2}`);
    check((await ctl.count(p)) === 0, 'no request sent');
  },

  // ---- drop-in at the edges (each of these failed before fetch driver 2) ----

  async "the caller's signal reaches the body: an abort while the body is read rejects the read"({ fetchWithBackoff }, ctl) {
    for (const extra of [{ timeoutMs: 5000 }, { maxElapsedMs: 5000 }, {}]) {
      const p = path('slowbody');
      await ctl.script(p, [{ status: 200, body: 'head-and-tail', bodyDelayMs: 1500 }]);
      const ac = new AbortController();
      const res = await fetchWithBackoff(ctl.base + p, { signal: ac.signal }, { ...FAST, ...extra });
      const reason = new Error('stop reading');
      const reading = res.text().then(
        () => 'read on',
        (e) => e,
      );
      ac.abort(reason);
      const got = await reading;
      check(got !== 'read on', `${JSON.stringify(extra)}: the body read on after the abort`);
    }
  },

  async 'maxElapsedMs is a hard deadline: an attempt in flight is aborted with a TimeoutError'({ fetchWithBackoff }, ctl) {
    const p = path('slowdeadline');
    await ctl.script(p, [{ status: 503 }, { status: 200, delayMs: 3000 }]);
    let done;
    const err = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, maxElapsedMs: 300, onDone: (d) => (done = d) }).then(
      (r) => `resolved ${r.status}`,
      (e) => e,
    );
    check(err instanceof DOMException && err.name === 'TimeoutError', `${err}`);
    check(done.reason === 'deadline' && done.error === err && done.attempts === 2, `onDone ${JSON.stringify(done)}`);
    check(done.elapsedMs < 2500, `the call ran ${done.elapsedMs} ms`);
  },

  async "a request fetch cannot build, or a custom fetchFn's own error, is not retried"({ fetchWithBackoff, withBackoff }, ctl) {
    let retried = 0;
    const opts = { ...FAST, onRetry: () => retried++ };
    const bad = await fetchWithBackoff('http://exa mple.invalid:99999/', undefined, opts).catch((e) => e);
    check(bad instanceof TypeError, `invalid URL: ${bad}`);
    const p = path('badheader');
    await ctl.script(p, [{ status: 503 }]);
    const badHeader = await fetchWithBackoff(ctl.base + p, { headers: { 'x-bad': 'a\nb' } }, opts).catch((e) => e);
    check(badHeader instanceof TypeError, `bad header: ${badHeader}`);
    check((await ctl.count(p)) === 0, 'nothing sent');
    let calls = 0;
    const boom = new TypeError('boom');
    const custom = withBackoff(() => {
      calls++;
      throw boom;
    }, opts);
    check((await custom(ctl.base + p).catch((e) => e)) === boom && calls === 1, `custom fetchFn tried ${calls} times`);
    check(retried === 0, `retried ${retried} times`);
    const forced = withBackoff(
      () => {
        calls++;
        throw boom;
      },
      { ...FAST, maxAttempts: 3, shouldRetry: ({ error }) => error === boom },
    );
    calls = 0;
    check((await forced(ctl.base + p).catch((e) => e)) === boom && calls === 3, `shouldRetry: tried ${calls} times`);
  },

  async 'an async shouldRetry is awaited; an abort while it runs rejects at once'({ fetchWithBackoff }, ctl) {
    const p = path('asyncshould');
    await ctl.script(p, [{ status: 503 }, { status: 200 }]);
    let done;
    const res = await fetchWithBackoff(ctl.base + p, undefined, {
      ...FAST,
      shouldRetry: async ({ status }) => (status === 503 ? false : undefined),
      onDone: (d) => (done = d),
    });
    check(res.status === 503 && (await ctl.count(p)) === 1 && done.reason === 'vetoed', `vetoed: ${res.status} ${done.reason}`);
    const q = path('asyncforce');
    await ctl.script(q, [{ status: 404 }, { status: 200 }]);
    const res2 = await fetchWithBackoff(ctl.base + q, undefined, { ...FAST, shouldRetry: async () => true, maxAttempts: 2 });
    check(res2.status === 200 && (await ctl.count(q)) === 2, `forced: ${res2.status}`);
    const r = path('asyncabort');
    await ctl.script(r, [{ status: 503 }]);
    const ac = new AbortController();
    const reason = new Error('gone');
    const pending = fetchWithBackoff(
      ctl.base + r,
      { signal: ac.signal },
      {
        shouldRetry: () => {
          ac.abort(reason);
          return new Promise(() => {}); // never settles
        },
      },
    );
    check((await pending.catch((e) => e)) === reason, 'the abort reason');
  },

  async 'rate-limit headers name the wait: retry-after-ms, X-RateLimit-Reset (delta and epoch), RateLimit'({ fetchWithBackoff }, ctl) {
    const p = path('ratems');
    await ctl.script(p, [{ status: 429, headers: { 'retry-after-ms': '120' } }, { status: 200 }]);
    const infos = [];
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, onRetry: (i) => infos.push(i) });
    check(res.status === 200 && infos[0].retryAfterMs === 120 && infos[0].delayMs >= 120, `retry-after-ms: ${JSON.stringify(infos)}`);
    // Long waits: read from onRetry, then the wait is aborted (no real wait in the test).
    const epoch = Math.floor(Date.now() / 1000) + 30;
    for (const [headers, lo, hi] of [
      [{ 'x-ratelimit-reset': String(epoch) }, 27000, 31000],
      [{ 'x-ratelimit-reset': '25' }, 25000, 25000],
      [{ 'ratelimit-reset': '12' }, 12000, 12000],
      [{ 'x-ms-retry-after-ms': '15000' }, 15000, 15000],
      [{ 'x-ratelimit-retry-after': '14' }, 14000, 14000],
      [{ ratelimit: '"default";r=0;t=13' }, 13000, 13000],
    ]) {
      const q = path('ratelong');
      await ctl.script(q, [{ status: 429, headers }, { status: 200 }]);
      const ac = new AbortController();
      let info;
      const err = await fetchWithBackoff(
        ctl.base + q,
        { signal: ac.signal },
        { ...FAST, onRetry: (i) => ((info = i), ac.abort(new Error('enough'))) },
      ).catch((e) => e);
      check(err?.message === 'enough', `${JSON.stringify(headers)}: ${err}`);
      check(
        info.retryAfterMs >= lo && info.retryAfterMs <= hi && info.delayMs >= info.retryAfterMs,
        `${JSON.stringify(headers)}: ${JSON.stringify(info)}`,
      );
      check((await ctl.count(q)) === 1, 'one request');
    }
  },

  async '413, 429 and 503 are retried when the server names a wait; 413 alone is not'({ fetchWithBackoff }, ctl) {
    const p = path('toolarge');
    await ctl.script(p, [{ status: 413, headers: { 'retry-after': '0' } }, { status: 200 }]);
    const res = await fetchWithBackoff(ctl.base + p, undefined, FAST);
    check(res.status === 200 && (await ctl.count(p)) === 2, `413 + Retry-After: ${res.status}`);
    const q = path('toolarge2');
    await ctl.script(q, [{ status: 413 }, { status: 200 }]);
    const res2 = await fetchWithBackoff(ctl.base + q, undefined, FAST);
    check(res2.status === 413 && (await ctl.count(q)) === 1, `413 alone: ${res2.status}`);
    const r = path('unavail');
    await ctl.script(r, [{ status: 503, headers: { 'retry-after-ms': '5' } }, { status: 200 }]);
    const res3 = await fetchWithBackoff(ctl.base + r, undefined, { ...FAST, retryOn: [500] });
    check(res3.status === 200 && (await ctl.count(r)) === 2, `503 + a named wait outside retryOn: ${res3.status}`);
  },

  async 'hooks: a throwing decision hook rejects with its error; observers never change the outcome'({ fetchWithBackoff }, ctl) {
    const bug = new Error('hook bug');
    const p = path('hooks');
    await ctl.script(p, [{ status: 200, body: 'fine' }]);
    let res;
    const logged = await quiet(async () => {
      res = await fetchWithBackoff(ctl.base + p, undefined, {
        onDone: () => {
          throw bug;
        },
      });
    });
    check(res.status === 200 && (await res.text()) === 'fine', 'a throwing onDone on a 200 still resolves');
    check(logged.length === 1 && logged[0].includes(bug), `logged ${logged.length}`);
    // On an abort, the rejection is the signal's reason, not the hook's error.
    const q = path('hooksabort');
    await ctl.script(q, [{ status: 503 }]);
    const ac = new AbortController();
    const reason = new Error('user abort');
    let err;
    const logged2 = await quiet(async () => {
      err = await fetchWithBackoff(
        ctl.base + q,
        { signal: ac.signal },
        {
          baseMs: 5000,
          onRetry: () => setTimeout(() => ac.abort(reason), 10),
          onDone: async () => {
            throw bug;
          },
        },
      ).catch((e) => e);
      await new Promise((r) => setTimeout(r, 20)); // the rejected promise of onDone is reported on a later turn
    });
    check(err === reason, `abort: ${err}`);
    check(logged2.length === 1 && logged2[0].includes(bug), `async onDone logged ${logged2.length}`);
    // Async onRetry rejecting: reported, the call goes on.
    const r = path('hooksretry');
    await ctl.script(r, [{ status: 503 }, { status: 200 }]);
    let res3;
    const logged3 = await quiet(async () => {
      res3 = await fetchWithBackoff(ctl.base + r, undefined, { ...FAST, onRetry: () => Promise.reject(bug) });
      await new Promise((r) => setTimeout(r, 20));
    });
    check(res3.status === 200 && logged3.length === 1, `onRetry rejecting: ${res3.status}, logged ${logged3.length}`);
    // Decision hooks: shouldRetry and beforeRetry reject the call with their error.
    for (const hooks of [{ shouldRetry: () => Promise.reject(bug) }, { beforeRetry: () => Promise.reject(bug) }]) {
      const s = path('hooksdecide');
      await ctl.script(s, [{ status: 503 }, { status: 200 }]);
      let done;
      const e = await fetchWithBackoff(ctl.base + s, undefined, { ...FAST, ...hooks, onDone: (d) => (done = d) }).catch((x) => x);
      check(e === bug && done.reason === 'hook-error' && done.error === bug, `${Object.keys(hooks)}: ${e} ${done?.reason}`);
      check((await ctl.count(s)) === 1, 'one request');
    }
  },

  async 'options are copied when given: changing them later changes nothing'({ withBackoff }, ctl) {
    const opts = { ...FAST, maxAttempts: 3, retryOn: [503], jitter: { ratio: 0.5 } };
    const f = withBackoff(fetch, opts);
    opts.maxAttempts = -1;
    opts.retryOn.push('x');
    opts.jitter.ratio = 7;
    const p = path('snapshot');
    await ctl.script(p, [{ status: 503 }]);
    const res = await f(ctl.base + p);
    check(res.status === 503 && (await ctl.count(p)) === 3, `count ${await ctl.count(p)}`);
  },

  // ---- new capabilities ----

  async 'beforeRetry refreshes Authorization: the server sees the new token on attempt 2'({ fetchWithBackoff }, ctl) {
    const p = path('refresh');
    await ctl.script(p, [{ status: 401 }, { status: 200 }]);
    const seen = [];
    const res = await fetchWithBackoff(
      ctl.base + p,
      { headers: { authorization: 'Bearer old', 'x-keep': 'kept' } },
      {
        ...FAST,
        retryOn: [401],
        beforeRetry: async ({ attempt, request, status }) => {
          seen.push([attempt, status, request.headers.get('authorization')]);
          return { authorization: 'Bearer new' };
        },
      },
    );
    check(res.status === 200, `status ${res.status}`);
    const reqs = await ctl.requests(p);
    check(reqs.map((r) => r.headers.authorization).join() === 'Bearer old,Bearer new', reqs.map((r) => r.headers.authorization).join());
    check(reqs[1].headers['x-keep'] === 'kept', 'other headers kept');
    check(JSON.stringify(seen) === JSON.stringify([[2, 401, 'Bearer old']]), JSON.stringify(seen));
    // A returned Request replaces the request (here: another path).
    const q = path('swapped');
    const q2 = path('swapped-to');
    await ctl.script(q, [{ status: 503 }]);
    await ctl.script(q2, [{ status: 200, body: 'swapped' }]);
    const res2 = await fetchWithBackoff(ctl.base + q, undefined, { ...FAST, beforeRetry: () => new Request(ctl.base + q2) });
    check((await res2.text()) === 'swapped' && (await ctl.count(q)) === 1 && (await ctl.count(q2)) === 1, 'swapped request');
    const e = await fetchWithBackoff(ctl.base + q, undefined, { ...FAST, beforeRetry: () => 42 }).catch((x) => x);
    check(e instanceof TypeError && e.message.startsWith('beforeRetry'), `${e}`);
  },

  async 'methods, idempotencyKey and attemptHeader'({ fetchWithBackoff }, ctl) {
    const p = path('methods');
    await ctl.script(p, [{ status: 503 }]);
    await fetchWithBackoff(ctl.base + p, { method: 'PUT' }, { ...FAST, methods: ['GET'] });
    check((await ctl.count(p)) === 1, 'PUT not retried with methods: [GET]');
    const q = path('methodspost');
    await ctl.script(q, [{ status: 503 }, { status: 200 }]);
    await fetchWithBackoff(ctl.base + q, { method: 'POST', body: 'x' }, { ...FAST, methods: ['post'] });
    check((await ctl.count(q)) === 2, 'POST retried with methods: [post]');
    const r = path('idem');
    await ctl.script(r, [{ status: 503 }, { status: 503 }, { status: 201 }]);
    const res = await fetchWithBackoff(
      ctl.base + r,
      { method: 'POST', body: 'order' },
      { ...FAST, idempotencyKey: true, attemptHeader: 'amz-sdk-request', maxAttempts: 3 },
    );
    check(res.status === 201, `status ${res.status}`);
    const reqs = await ctl.requests(r);
    const keys = reqs.map((x) => x.headers['idempotency-key']);
    check(reqs.length === 3 && new Set(keys).size === 1 && /^[0-9a-f-]{36}$/.test(keys[0]), `keys ${keys}`);
    check(
      reqs.every((x) => x.body === 'order'),
      'body replayed',
    );
    const attempts = reqs.map((x) => x.headers['amz-sdk-request']).join('|');
    check(attempts === 'attempt=1; max=3|attempt=2; max=3|attempt=3; max=3', attempts);
    // A second call gets a key of its own.
    await ctl.script(r, [{ status: 201 }]);
    await fetchWithBackoff(ctl.base + r, { method: 'POST', body: 'order' }, { ...FAST, idempotencyKey: true });
    const all = await ctl.requests(r);
    check(all[3].headers['idempotency-key'] !== keys[0], 'one key per call');
    // (the policy's one rule: a method retried by itself needs no key; the caller's is kept)
    await fetchWithBackoff(ctl.base + r, { method: 'GET' }, { ...FAST, idempotencyKey: true });
    await fetchWithBackoff(
      ctl.base + r,
      { method: 'POST', body: 'o', headers: { 'Idempotency-Key': 'mine' } },
      { ...FAST, idempotencyKey: true },
    );
    const more = (await ctl.requests(r)).slice(4).map((x) => x.headers['idempotency-key']);
    check(more[0] === undefined && more[1] === 'mine', `GET and keyed POST: ${more}`);
    const bad = await fetchWithBackoff(ctl.base + r, undefined, { methods: 'GET' }).catch((x) => x);
    check(bad instanceof TypeError && bad.message.startsWith('methods'), `${bad}`);
    const bad2 = await fetchWithBackoff(ctl.base + r, undefined, { attemptHeader: 'a b' }).catch((x) => x);
    check(bad2 instanceof RangeError && bad2.message.startsWith('attemptHeader'), `${bad2}`);
    const bad3 = await fetchWithBackoff(ctl.base + r, undefined, { idempotencyKey: 'yes' }).catch((x) => x);
    check(bad3 instanceof TypeError && bad3.message.startsWith('idempotencyKey'), `${bad3}`);
  },

  async 'per-call options and extend() merge over the wrapped options'({ withBackoff }, ctl) {
    const f = withBackoff(fetch, { ...FAST, maxAttempts: 2 });
    const p = path('percall');
    await ctl.script(p, [{ status: 503 }]);
    await f(ctl.base + p, undefined, { maxAttempts: 4 });
    check((await ctl.count(p)) === 4, `per call: ${await ctl.count(p)}`);
    const q = path('extended');
    await ctl.script(q, [{ status: 503 }]);
    const g = f.extend({ maxAttempts: 3 });
    await g(ctl.base + q);
    check((await ctl.count(q)) === 3, `extend: ${await ctl.count(q)}`);
    await f(ctl.base + q);
    check((await ctl.count(q)) === 5, 'the original keeps its options');
    const bad = await f(ctl.base + q, undefined, { maxAttempts: 0 }).catch((x) => x);
    check(bad instanceof RangeError && bad.message.startsWith('maxAttempts'), `${bad}`);
  },

  async 'onRetry is told the response'({ fetchWithBackoff }, ctl) {
    const p = path('reqid');
    await ctl.script(p, [{ status: 503, headers: { 'x-request-id': 'r-1' } }, { status: 200 }]);
    let id;
    await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, onRetry: ({ response }) => (id = response.headers.get('x-request-id')) });
    check(id === 'r-1', `request id ${id}`);
  },

  async 'retry(fn) retries any async work with the same options'({ retry }, ctl) {
    const p = path('retryfn');
    await ctl.script(p, [{ status: 503 }, { status: 503 }, { status: 200, body: 'done' }]);
    const seen = [];
    const text = await retry(
      async ({ attempt, signal }) => {
        seen.push(attempt);
        const r = await fetch(ctl.base + p, { signal });
        if (!r.ok) throw new Error(`status ${r.status}`);
        return r.text();
      },
      { ...FAST },
    );
    check(text === 'done' && seen.join() === '1,2,3' && (await ctl.count(p)) === 3, `${text} ${seen}`);
    // Exhausted: the last error; shouldRetry false stops at once.
    let n = 0;
    const last = await retry(() => Promise.reject(new Error(`try ${++n}`)), { ...FAST, maxAttempts: 3 }).catch((e) => e);
    check(last.message === 'try 3', `${last}`);
    n = 0;
    const vetoed = await retry(() => Promise.reject(new Error(`try ${++n}`)), { ...FAST, shouldRetry: () => false }).catch((e) => e);
    check(vetoed.message === 'try 1', `${vetoed}`);
    // The signal aborts a wait; the deadline aborts an attempt that ignores its signal.
    const ac = new AbortController();
    const reason = new Error('stop');
    const aborted = await retry(
      () => {
        setTimeout(() => ac.abort(reason), 5);
        throw new Error('fail');
      },
      { baseMs: 5000, signal: ac.signal },
    ).catch((e) => e);
    check(aborted === reason, `${aborted}`);
    const late = await retry(() => new Promise(() => {}), { maxElapsedMs: 50 }).catch((e) => e);
    check(late instanceof DOMException && late.name === 'TimeoutError', `${late}`);
    const bad = await retry(() => 1, { signal: 'x' }).catch((e) => e);
    check(bad instanceof TypeError && bad.message.startsWith('signal'), `${bad}`);
    check((await retry(() => 7)) === 7, 'a value');
  },

  async 'a rejection after an abort is never left unhandled (fn, shouldRetry, beforeRetry)'({ retry, fetchWithBackoff }, ctl) {
    const stop = watchUnhandled();
    const reason = new Error('stop');
    // The function aborts its own call, then rejects: the call rejects with the reason, and `fn failed` is handled.
    const ac = new AbortController();
    const got = await retry(
      async () => {
        ac.abort(reason);
        throw new Error('fn failed');
      },
      { ...FAST, signal: ac.signal },
    ).catch((e) => e);
    check(got === reason, `retry(fn): ${got}`);
    const p = path('abort-hooks');
    await ctl.script(p, [{ status: 503 }]);
    for (const hook of ['shouldRetry', 'beforeRetry']) {
      const ac2 = new AbortController();
      const got2 = await fetchWithBackoff(
        ctl.base + p,
        { signal: ac2.signal },
        {
          ...FAST,
          [hook]: async () => {
            ac2.abort(reason);
            throw new Error(`${hook} failed`);
          },
        },
      ).catch((e) => e);
      check(got2 === reason, `${hook}: ${got2}`);
    }
    const seen = await stop();
    check(seen.length === 0, `unhandled rejections: ${seen.map(String).join('; ')}`);
  },

  async 'idempotency is judged on the request actually sent (beforeRetry may change it)'({ fetchWithBackoff }, ctl) {
    // A GET whose hook turns it into a POST: the POST is sent once, not retried.
    const p = path('to-post');
    await ctl.script(p, [{ status: 503 }]);
    let done;
    await fetchWithBackoff(ctl.base + p, undefined, {
      ...FAST,
      beforeRetry: ({ request }) => new Request(request.url, { method: 'POST', body: 'x' }),
      onDone: (d) => (done = d),
    });
    const methods = (await ctl.requests(p)).map((r) => r.method);
    check(methods.join() === 'GET,POST', `sent ${methods}`);
    check(done.reason === 'not-idempotent', `onDone ${JSON.stringify(done)}`);
    // A keyed POST whose hook drops the key: not retried without it.
    const q = path('drop-key');
    await ctl.script(q, [{ status: 503 }]);
    await fetchWithBackoff(
      ctl.base + q,
      { method: 'POST', body: 'x', headers: { 'idempotency-key': 'k1' } },
      { ...FAST, beforeRetry: ({ request }) => new Request(request.url, { method: 'POST', body: 'x' }) },
    );
    const keys = (await ctl.requests(q)).map((r) => r.headers['idempotency-key'] ?? '-');
    check(keys.join() === 'k1,-', `keys ${keys}`);
    // The generated key is the same on every attempt, whatever the attempt header.
    const k = path('one-key');
    await ctl.script(k, [{ status: 503 }, { status: 503 }, { status: 200 }]);
    await fetchWithBackoff(ctl.base + k, { method: 'POST', body: 'x' }, { ...FAST, idempotencyKey: true, attemptHeader: 'X-Attempt' });
    const sent = await ctl.requests(k);
    check(sent.length === 3 && new Set(sent.map((r) => r.headers['idempotency-key'])).size === 1, 'one key for three attempts');
    const bad = await fetchWithBackoff(ctl.base + k, undefined, { attemptHeader: 'Idempotency-Key' }).catch((e) => e);
    check(bad instanceof RangeError && bad.message.startsWith('attemptHeader'), `${bad}`);
  },
};

/**
 * Collects unhandled rejections in whatever runtime runs this (and keeps
 * them from ending the process); the function returned stops, after a
 * macrotask, and answers what it saw.
 */
function watchUnhandled() {
  const seen = [];
  const onWeb = (e) => {
    seen.push(e.reason);
    e.preventDefault();
  };
  const onNode = (r) => seen.push(r);
  const node = !globalThis.Deno && typeof globalThis.process?.on === 'function';
  if (node) globalThis.process.on('unhandledRejection', onNode);
  else globalThis.addEventListener('unhandledrejection', onWeb);
  return async () => {
    await new Promise((r) => setTimeout(r, 50));
    if (node) globalThis.process.off('unhandledRejection', onNode);
    else globalThis.removeEventListener('unhandledrejection', onWeb);
    return seen;
  };
}

/** Runs `f` with console.error captured; returns what was logged. */
async function quiet(f) {
  const logged = [];
  const error = console.error;
  console.error = (...args) => logged.push(args);
  try {
    await f();
  } finally {
    console.error = error;
  }
  return logged;
}

/** Runs the scenarios (all, or those whose name passes `filter`; `scenarios`: another set, as waits-checks.mjs's and stream-checks.mjs's); returns failures as strings. */
export async function fetchScenarios(lib, base, filter = () => true, scenarios = SCENARIOS) {
  const ctl = control(base);
  const failures = [];
  for (const [name, fn] of Object.entries(scenarios)) {
    if (!filter(name)) continue;
    try {
      await fn(lib, ctl);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    }
  }
  return failures;
}
