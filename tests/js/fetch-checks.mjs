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
  return {
    base,
    script: (path, steps) => post('script', { path, steps }),
    reset: () => post('reset'),
    requests: (path) => fetch(`${base}/__control/requests?path=${encodeURIComponent(path)}`).then((r) => r.json()),
    count: (path) =>
      fetch(`${base}/__control/requests?path=${encodeURIComponent(path)}`)
        .then((r) => r.json())
        .then((l) => l.length),
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
    for (const [value, want] of [
      ['2', 2000],
      [new Date(Date.now() + 3000).toUTCString(), 3000],
    ]) {
      const p = path('ra');
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
      // An HTTP-date has whole seconds: 3 s ahead is 2–3 s away once truncated and sent.
      const low = value === '2' ? 2000 : want - 1300;
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
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, timeoutMs: 150 });
    check(res.status === 200 && (await res.text()) === 'second' && (await ctl.count(p)) === 2, 'second attempt answered');
  },

  async 'maxElapsedMs: no wait starts that would end past the deadline'({ fetchWithBackoff }, ctl) {
    const p = path('deadline');
    await ctl.script(p, [{ status: 503 }]);
    let done;
    const res = await fetchWithBackoff(ctl.base + p, undefined, {
      strategy: 'constant',
      jitter: 'none',
      baseMs: 200,
      maxElapsedMs: 500,
      maxAttempts: 10,
      onDone: (d) => (done = d),
    });
    check(
      res.status === 503 && (await ctl.count(p)) === 3 && done.reason === 'deadline',
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
    check(Date.now() - t < 300, `within ${Date.now() - t} ms of the abort`);
    check((await ctl.count(q)) === 1, 'no further attempt');

    const r = path('during');
    await ctl.script(r, [{ hang: true }]);
    const ac3 = new AbortController();
    const reason3 = new Error('cancelled during the attempt');
    setTimeout(() => ac3.abort(reason3), 50);
    const got3 = await fetchWithBackoff(ctl.base + r, { signal: ac3.signal }, FAST).catch((e) => e);
    check(got3 === reason3 && (await ctl.count(r)) === 1, 'abort during an attempt');

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
    const gate = createGate({ baseMs: 5, maxDelayMs: 20, jitter: 'none', key: () => 'target' });
    const f = withBackoff(fetch, { ...FAST, gate });
    const res = await Promise.all([f(ctl.base + p), f(ctl.base + p), f(ctl.base + p)]);
    check(
      res.every((r) => r.status === 200),
      `statuses ${res.map((r) => r.status)}`,
    );
    const { rounds, probes } = gate.stats();
    check(rounds === 1 && probes === 1, `rounds ${rounds}, probes ${probes}`);
    check((await ctl.count(p)) === 6, `server saw ${await ctl.count(p)} (3 failures, 1 probe, 2 released)`);
    check(gate.state('target').phase === 'healthy', gate.state('target').phase);
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
};

/** Runs the scenarios (all, or those whose name passes `filter`); returns failures as strings. */
export async function fetchScenarios(lib, base, filter = () => true) {
  const ctl = control(base);
  const failures = [];
  for (const [name, fn] of Object.entries(SCENARIOS)) {
    if (!filter(name)) continue;
    try {
      await fn(lib, ctl);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    }
  }
  return failures;
}
