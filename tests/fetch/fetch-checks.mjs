// The fetch driver's runtime smoke set: what differs between runtimes,
// against the real scripted server (tests/server/scripted.mjs), shared by
// every runtime: Node, a Chromium page and a Web Worker, workerd, Deno and
// Bun import this file and run `fetchScenarios`. Each runtime's own
// network failure and how it is classified, a request it cannot build, an
// abort reaching the network and the response body, request bodies and a
// Request cloned per attempt, the headers the driver sets (a preflight in
// a page), and a server's wait read from a real answer (exposed
// cross-origin). They assert outcomes and order, never a duration: the
// waits (none longer than FAST's tens of milliseconds) are the code's, not
// the test's. Timing and policy — exact waits, Retry-After and rate-limit
// values, deadlines, budgets, backoff, hooks, options, a gate's rounds —
// run once, in virtual time: fetch.virtual.test.mjs, waits.virtual.test.mjs.
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
    /** Lets the answers held on `name` go (step field holdUntil). */
    release: (name) => post('release', { name }),
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
  async 'retries 503s over the network and resolves with the first success'({ fetchWithBackoff }, ctl) {
    const p = path('flaky');
    await ctl.script(p, [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    const infos = [];
    const res = await fetchWithBackoff(ctl.base + p, undefined, { ...FAST, onRetry: (i) => infos.push(i) });
    check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
    check((await ctl.count(p)) === 3, 'server saw 3 requests');
    check(
      infos.length === 2 && infos.every((i, k) => i.attempt === k + 1 && i.status === 503),
      `onRetry ${JSON.stringify(infos.map((i) => [i.attempt, i.status]))}`,
    );
  },

  async "network errors: the runtime's own failure is retried, and the last one is rejected with it"({ fetchWithBackoff }, ctl) {
    // Browsers, Deno and Bun resend a request by themselves when a reused
    // keep-alive connection is reset, so there the server may see more
    // requests than we made: at most one more per scripted reset (seen:
    // Chromium resending both of two). Node's undici and workerd do not
    // (workerd: 126 resets, 123 of them on a connection that had just
    // answered, GET and POST, each arrived once), so there the count is
    // exact. Our own attempts are counted exactly through onDone.
    const seen = async (p, ours, resets) => {
      const n = await ctl.count(p);
      return IN_NODE || IN_WORKERD ? n === ours : n >= ours && n <= ours + resets;
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

  async 'a request the runtime cannot build is rejected at once with its error, not retried'({ fetchWithBackoff }, ctl) {
    let retried = 0;
    const opts = { ...FAST, onRetry: () => retried++ };
    const bad = await fetchWithBackoff('http://exa mple.invalid:99999/', undefined, opts).catch((e) => e);
    check(bad instanceof TypeError, `invalid URL: ${bad}`);
    const p = path('badheader');
    await ctl.script(p, [{ status: 503 }]);
    const badHeader = await fetchWithBackoff(ctl.base + p, { headers: { 'x-bad': 'a\nb' } }, opts).catch((e) => e);
    check(badHeader instanceof TypeError, `bad header: ${badHeader}`);
    check((await ctl.count(p)) === 0 && retried === 0, `nothing sent, nothing retried (${retried})`);
  },

  async 'request bodies reach the server whole on every attempt: a Request cloned, a URL, UTF-8 text, bytes'({ fetchWithBackoff }, ctl) {
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
    const q = path('postkey');
    await ctl.script(q, [{ status: 503 }, { status: 503 }, { echo: true }]);
    const body = JSON.stringify({ order: 42, note: 'é✓' });
    const res3 = await fetchWithBackoff(
      ctl.base + q,
      { method: 'POST', body, headers: { 'Idempotency-Key': 'k-1', 'content-type': 'application/json' } },
      FAST,
    );
    check(res3.status === 200 && (await res3.json()).body === body, `with Idempotency-Key: ${res3.status}`);
    const sent = await ctl.requests(q);
    check(sent.length === 3 && sent.every((r) => r.body === body && r.method === 'POST'), 'identical bodies on every attempt');
    const r = path('bytes');
    await ctl.script(r, [{ status: 503 }, { status: 200 }]);
    const res4 = await fetchWithBackoff(
      ctl.base + r,
      { method: 'POST', body: new Uint8Array([1, 2, 3]) },
      { ...FAST, retryNonIdempotent: true },
    );
    const bytes = (await ctl.requests(r)).map((x) => x.body);
    check(res4.status === 200 && bytes.length === 2 && bytes.every((b) => b === '\x01\x02\x03'), `bytes ${JSON.stringify(bytes)}`);
  },

  async 'the headers the driver sets reach the server (a preflight in a page): a key, an attempt header, a new Authorization'(
    { fetchWithBackoff },
    ctl,
  ) {
    const p = path('headers');
    await ctl.script(p, [{ status: 503 }, { status: 401 }, { status: 201 }]);
    const res = await fetchWithBackoff(
      ctl.base + p,
      { method: 'POST', body: 'order', headers: { authorization: 'Bearer old', 'x-keep': 'kept' } },
      {
        ...FAST,
        retryOn: [401, 503],
        idempotencyKey: true,
        attemptHeader: 'amz-sdk-request',
        maxAttempts: 3,
        beforeRetry: ({ status }) => (status === 401 ? { authorization: 'Bearer new' } : undefined),
      },
    );
    check(res.status === 201, `status ${res.status}`);
    const reqs = await ctl.requests(p);
    const keys = reqs.map((x) => x.headers['idempotency-key']);
    check(reqs.length === 3 && new Set(keys).size === 1 && /^[0-9a-f-]{36}$/.test(keys[0]), `keys ${keys}`);
    const attempts = reqs.map((x) => x.headers['amz-sdk-request']).join('|');
    check(attempts === 'attempt=1; max=3|attempt=2; max=3|attempt=3; max=3', attempts);
    const auth = reqs.map((x) => x.headers.authorization).join();
    check(auth === 'Bearer old,Bearer old,Bearer new', auth);
    check(
      reqs.every((x) => x.headers['x-keep'] === 'kept' && x.body === 'order'),
      'other headers and the body kept',
    );
  },

  async "the server's wait is read from a real answer (Retry-After, retry-after-ms; exposed cross-origin)"({ fetchWithBackoff }, ctl) {
    const p = path('named');
    await ctl.script(p, [
      { status: 503, headers: { 'retry-after': '0' } },
      { status: 429, headers: { 'retry-after-ms': '30', 'x-request-id': 'r-2' } },
      { status: 200, body: 'ok' },
    ]);
    const infos = [];
    const res = await fetchWithBackoff(ctl.base + p, undefined, {
      ...FAST,
      onRetry: (i) => infos.push([i.status, i.retryAfterMs, i.response?.headers.get('x-request-id') ?? null]),
    });
    check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
    check(JSON.stringify(infos) === '[[503,0,null],[429,30,"r-2"]]', `onRetry ${JSON.stringify(infos)}`);
    check((await ctl.count(p)) === 3, 'three requests');
  },

  async 'an abort reaches the network: nothing sent when aborted before; an attempt in flight, or a Request’s own signal'(
    { fetchWithBackoff },
    ctl,
  ) {
    const p = path('pre');
    await ctl.script(p, [{ status: 200 }]);
    const reason = { why: 'user left' };
    const err = await fetchWithBackoff(ctl.base + p, { signal: AbortSignal.abort(reason) }).catch((e) => e);
    check(err === reason && (await ctl.count(p)) === 0, 'pre-aborted: no request, exact reason');

    const r = path('during');
    await ctl.script(r, [{ hang: true }]);
    const ac = new AbortController();
    const reason2 = new Error('cancelled during the attempt');
    const during = fetchWithBackoff(ctl.base + r, { signal: ac.signal }, FAST).catch((e) => e);
    await ctl.arrived(r); // (an abort before the request arrived would leave nothing to count)
    ac.abort(reason2);
    const got = await during;
    check(got === reason2 && (await ctl.count(r)) === 1, `abort during an attempt: ${got}`);

    const s = path('reqsignal');
    await ctl.script(s, [{ status: 200 }]);
    const reason3 = new Error('request signal');
    const got3 = await fetchWithBackoff(new Request(ctl.base + s, { signal: AbortSignal.abort(reason3) })).catch((e) => e);
    check(got3 === reason3 && (await ctl.count(s)) === 0, "a Request's own signal is honoured");
  },

  async "the caller's signal reaches the body: an abort while the body is read rejects the read"({ fetchWithBackoff }, ctl) {
    for (const extra of [{ timeoutMs: 5000 }, { maxElapsedMs: 5000 }, {}]) {
      const p = path('slowbody');
      // (the tail 10 s late: the read cannot end before the abort, however slow the machine)
      await ctl.script(p, [{ status: 200, body: 'head-and-tail', bodyDelayMs: 10_000 }]);
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
};

/** Runs the scenarios (all, or those whose name passes `filter`; `scenarios`: another set, as stream-checks.mjs's); returns failures as strings. */
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
