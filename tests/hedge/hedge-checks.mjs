// Scenarios of hedging (`hedge`) and failover (`endpoints`) against three real
// scripted servers (tests/server/scripted.mjs): `a` and `b` are their
// control APIs (two origins: a primary and a secondary), `c` a third origin
// the endpoints do not list. Shared by Node, a Chromium page and workerd,
// which import this file and run `hedgeScenarios`.
import { control } from '../fetch/fetch-checks.mjs';

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

const FAST = { baseMs: 5, maxDelayMs: 20, jitter: 'none' };
const thrown = (f) => {
  try {
    f();
  } catch (e) {
    return e;
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let unique = 0;
const path = (name) => `/${name}-${Date.now().toString(36)}-${unique++}`;
/** A page (not a Worker): `Cookie` and `Proxy-Authorization` are forbidden request headers, dropped by fetch itself. */
const IN_PAGE = typeof document !== 'undefined';
/** The credential headers fetch drops on a cross-origin redirect. */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

/** Where the first attempts of `n` calls for a went, with the weights `wa` and `wb` of a and b: [to a, to b]. */
async function split({ withBackoff, failover }, a, b, [wa, wb], n) {
  const p = path('weighted');
  await a.script(p, [{ status: 200 }]);
  await b.script(p, [{ status: 200 }]);
  const f = withBackoff(fetch, {
    endpoints: failover([
      { url: a.base, weight: wa },
      { url: new URL(b.base), weight: wb },
    ]),
  });
  for (let i = 0; i < n; i++) await f(a.base + p);
  return [await a.count(p), await b.count(p)];
}

/** name -> async (lib, a, b, c) => void */
export const SCENARIOS = {
  // ---- hedging ----

  async 'a slow attempt is hedged: the hedge wins, the slow one is aborted'({ withBackoff, hedge }, a) {
    const p = path('slow');
    await a.script(p, [{ hang: true }, { status: 200, body: 'fast' }]);
    let done;
    // (150 ms: the hedge must arrive second, after the hung first, which the script answers by arrival)
    const f = withBackoff(fetch, { ...FAST, hedge: hedge({ delayMs: 150 }), onDone: (d) => (done = d) });
    const t0 = Date.now();
    const res = await f(a.base + p);
    check(res.status === 200 && (await res.text()) === 'fast', `status ${res.status}`);
    check(Date.now() - t0 < 2000, 'answered without waiting for the hung attempt');
    check((await a.count(p)) === 2, `server saw ${await a.count(p)} (the attempt and one hedge)`);
    check(done.won === 2 && done.hedges === 1 && done.attempts === 2 && done.reason === 'success', JSON.stringify(done));
  },

  async "a loser is aborted on the network: its connection closes (no options; the caller's signal)"({ fetchWithBackoff, hedge }, a) {
    for (const init of [undefined, { signal: new AbortController().signal }]) {
      const p = path('loser');
      await a.script(p, [{ hang: true }, { status: 200, body: 'fast' }]);
      const res = await fetchWithBackoff(a.base + p, init, { hedge: hedge({ delayMs: 150 }) });
      check((await res.text()) === 'fast', `status ${res.status}`);
      let seen = [];
      for (let i = 0; i < 100 && !seen[0]?.closed; i++) {
        await sleep(20);
        seen = await a.requests(p);
      }
      check(seen.length === 2 && seen[0].closed && !seen[1].closed, `signal ${!!init}: ${JSON.stringify(seen.map((r) => r.closed))}`);
    }
  },

  async 'each racer carries its own number in attemptHeader; max counts the hedges the call may send'({ withBackoff, hedge }, a) {
    const p = path('numbered');
    await a.script(p, [{ hang: true }, { status: 200, body: 'fast' }]);
    const f = withBackoff(fetch, { ...FAST, maxAttempts: 3, attemptHeader: 'x-attempt', hedge: hedge({ delayMs: 30, maxHedges: 1 }) });
    const res = await f(a.base + p);
    check((await res.text()) === 'fast', `status ${res.status}`);
    // (sorted: the two may arrive in either order; 3 rounds of a request and its hedge are at most 6 requests)
    const sent = (await a.requests(p)).map((r) => r.headers['x-attempt']).sort();
    check(JSON.stringify(sent) === '["attempt=1; max=6","attempt=2; max=6"]', JSON.stringify(sent));
  },

  async 'a fast answer sends no hedge'({ fetchWithBackoff, hedge }, a) {
    const p = path('fast');
    await a.script(p, [{ status: 200, body: 'ok' }]);
    let done;
    const res = await fetchWithBackoff(a.base + p, undefined, { hedge: hedge({ delayMs: 300, maxHedges: 3 }), onDone: (d) => (done = d) });
    check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
    await sleep(350); // (past the hedge's delay: nothing more may go out)
    check((await a.count(p)) === 1, `server saw ${await a.count(p)}`);
    check(done.won === 1 && done.hedges === 0 && done.attempts === 1, JSON.stringify(done));
  },

  async 'a delayMs past the longest timer (2^31 ms) sends no hedge'({ fetchWithBackoff, hedge }, a) {
    const p = path('huge');
    await a.script(p, [{ status: 200, body: 'ok', delayMs: 150 }]);
    let done;
    const res = await fetchWithBackoff(a.base + p, undefined, { hedge: hedge({ delayMs: 2 ** 31 }), onDone: (d) => (done = d) });
    check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
    check((await a.count(p)) === 1 && done.hedges === 0, `server saw ${await a.count(p)}: ${JSON.stringify(done)}`);
  },

  async 'a retryable answer with no racer left ends the race: the call backs off as usual'({ fetchWithBackoff, hedge }, a) {
    const p = path('503');
    await a.script(p, [{ status: 503 }, { status: 200, body: 'second' }]);
    let done;
    const res = await fetchWithBackoff(a.base + p, undefined, { ...FAST, hedge: hedge({ delayMs: 5000 }), onDone: (d) => (done = d) });
    check(res.status === 200 && (await res.text()) === 'second', `status ${res.status}`);
    check(done.won === 2 && done.hedges === 0 && done.attempts === 2, JSON.stringify(done));
  },

  async 'every racer failing: the call backs off and races again'({ fetchWithBackoff, hedge }, a) {
    const p = path('allfail');
    // The attempt answers 503 late, its hedge 503 at once: the race ends with both failed.
    await a.script(p, [{ status: 503, delayMs: 150 }, { status: 503 }, { status: 200, body: 'third' }]);
    let done;
    const res = await fetchWithBackoff(a.base + p, undefined, {
      ...FAST,
      hedge: hedge({ delayMs: 40, maxHedges: 1 }),
      onDone: (d) => (done = d),
    });
    check(res.status === 200 && (await res.text()) === 'third', `status ${res.status}`);
    check(done.won === 3 && done.hedges >= 1 && done.attempts === 2 + done.hedges, JSON.stringify(done));
  },

  async 'a POST is not hedged unless it carries an idempotency key (the same on every racer)'({ fetchWithBackoff, hedge }, a) {
    const p = path('post');
    await a.script(p, [{ status: 201, delayMs: 150 }]);
    const res = await fetchWithBackoff(a.base + p, { method: 'POST', body: 'x' }, { hedge: hedge({ delayMs: 10 }) });
    check(res.status === 201 && (await a.count(p)) === 1, `POST hedged: ${await a.count(p)} requests`);
    const q = path('keyed');
    await a.script(q, [{ status: 201, delayMs: 150 }]);
    let done;
    const res2 = await fetchWithBackoff(
      a.base + q,
      { method: 'POST', body: 'x' },
      { idempotencyKey: true, hedge: hedge({ delayMs: 10 }), onDone: (d) => (done = d) },
    );
    check(res2.status === 201, `status ${res2.status}`);
    const seen = await a.requests(q);
    const keys = new Set(seen.map((r) => r.headers['idempotency-key']));
    check(seen.length === 2 && keys.size === 1 && !keys.has(undefined), `requests ${seen.length}, keys ${[...keys]}`);
    // (either may win: both answer after 150 ms, sent 10 ms apart, each after its own preflight in a page)
    check((done.won === 1 || done.won === 2) && done.hedges === 1, JSON.stringify(done));
  },

  async 'hedges draw from the budget: an empty one sends none'({ fetchWithBackoff, hedge }, a) {
    const p = path('budget');
    await a.script(p, [{ status: 200, delayMs: 120 }]);
    let asked = 0;
    const budget = { deposit() {}, withdraw: () => (asked++, false) };
    const res = await fetchWithBackoff(a.base + p, undefined, { hedge: hedge({ delayMs: 10, maxHedges: 2 }), budget });
    check(res.status === 200 && (await a.count(p)) === 1, `server saw ${await a.count(p)}`);
    check(asked === 1, `the budget was asked ${asked} times`);
  },

  async 'no hedge while the gate has the target half-open (its probe)'({ withBackoff, createGate, hedge }, a) {
    const p = path('probe');
    await a.script(p, [{ status: 503 }, { status: 200, delayMs: 200 }]);
    const gate = createGate({ baseMs: 30, maxDelayMs: 30, jitter: 'none', consecutive: 1 });
    // A call without hedging opens the circuit; the hedged call is held, then sent as the probe.
    await withBackoff(fetch, { gate, maxAttempts: 1 })(a.base + p);
    check(gate.state(new URL(a.base).origin).state === 'open', 'the circuit is open');
    let done;
    const f = withBackoff(fetch, { ...FAST, gate, hedge: hedge({ delayMs: 10 }), onDone: (d) => (done = d) });
    const res = await f(a.base + p);
    check(res.status === 200 && (await a.count(p)) === 2, `server saw ${await a.count(p)}`);
    check(done.hedges === 0, `hedged the probe: ${JSON.stringify(done)}`);
    gate.free();
  },

  async "the caller's abort ends every racer and rejects with its reason"({ fetchWithBackoff, hedge }, a) {
    const p = path('abort');
    await a.script(p, [{ hang: true }]);
    const ac = new AbortController();
    const reason = new Error('stop');
    const pending = fetchWithBackoff(a.base + p, { signal: ac.signal }, { hedge: hedge({ delayMs: 10, maxHedges: 2 }) });
    pending.catch(() => {});
    await a.arrived(p, 3); // (the first and its two hedges, all hanging)
    ac.abort(reason);
    const got = await pending.catch((e) => e);
    check(got === reason, `rejected with ${got}`);
    check((await a.count(p)) === 3, `server saw ${await a.count(p)}`);
  },

  async 'the deadline ends a race with a TimeoutError'({ fetchWithBackoff, hedge }, a) {
    const p = path('deadline');
    await a.script(p, [{ hang: true }]);
    const got = await fetchWithBackoff(a.base + p, undefined, { hedge: hedge({ delayMs: 10 }), maxElapsedMs: 100 }).catch((e) => e);
    check(got?.name === 'TimeoutError', `rejected with ${got}`);
  },

  async 'bad hedge options throw, naming the option'({ withBackoff, hedge }) {
    const bad = [
      [1, TypeError, 'hedge options'],
      [{}, TypeError, 'hedge: delayMs'],
      [{ delayMs: -1 }, RangeError, 'hedge: delayMs'],
      [{ delayMs: '5' }, TypeError, 'hedge: delayMs'],
      [{ delayMs: Infinity }, RangeError, 'hedge: delayMs'],
      [{ delayMs: 5, maxHedges: 0 }, RangeError, 'hedge: maxHedges'],
      [{ delayMs: 5, maxHedges: 11 }, RangeError, 'hedge: maxHedges'],
      [{ delayMs: 5, maxHedges: 1.5 }, RangeError, 'hedge: maxHedges'],
    ];
    for (const [options, type, name] of bad) {
      const e = thrown(() => hedge(options));
      check(e instanceof type && e.message.startsWith(name), `hedge(${JSON.stringify(options)}): ${e}`);
    }
    // The option takes what hedge() makes, nothing else (its code is in the subpath).
    const e = thrown(() => withBackoff(fetch, { hedge: { delayMs: 5 } }));
    check(e instanceof TypeError && e.message.includes("'wasm-backoff/hedge'"), `plain object: ${e}`);
  },

  // ---- failover ----

  async 'a retry goes to the next endpoint; beforeRetry sees where; onDone tells'({ withBackoff, failover }, a, b) {
    const p = path('fo');
    await a.script(p, [{ status: 503 }]);
    await b.script(p, [{ status: 200, body: 'from b' }]);
    const seen = [];
    let done;
    const f = withBackoff(fetch, {
      ...FAST,
      endpoints: failover([a.base, b.base]),
      beforeRetry: ({ request }) => void seen.push(request.url),
      onDone: (d) => (done = d),
    });
    const res = await f(`${a.base}${p}?q=1`);
    check(res.status === 200 && (await res.text()) === 'from b', `status ${res.status}`);
    check(seen.length === 1 && seen[0] === `${b.base}${p}?q=1`, `beforeRetry saw ${seen}`);
    check((await a.count(p)) === 1 && (await b.count(p)) === 1, 'one request each');
    check(done.endpoint === b.base && done.attempts === 2, JSON.stringify(done));
    // Without a gate, every call starts at the preferred endpoint again.
    await f(`${b.base}${p}`);
    check((await a.count(p)) === 2, 'the next call went to the preferred endpoint first');
  },

  async 'with a gate, a failed endpoint is skipped, then probed and returned to when it recovers'(
    { withBackoff, createGate, failover },
    a,
    b,
  ) {
    const p = path('gatefo');
    await a.script(p, [{ status: 503 }]);
    await b.script(p, [{ status: 200, body: 'b' }]);
    // (a round of 400 ms: the second call must come while the primary is still open, even on a busy machine)
    const gate = createGate({ baseMs: 400, maxDelayMs: 400, jitter: 'none', consecutive: 1 });
    const ends = [];
    const f = withBackoff(fetch, { ...FAST, gate, endpoints: failover([a.base, b.base]), onDone: (d) => ends.push(d.endpoint) });
    check((await f(a.base + p)).status === 200, 'first call failed over');
    check(gate.state(new URL(a.base).origin).state !== 'closed', 'the primary is open');
    check((await f(a.base + p)).status === 200, 'second call');
    check((await a.count(p)) === 1, `the open primary was sent ${await a.count(p)} requests`);
    await a.script(p, [{ status: 200, body: 'a' }]);
    await sleep(450); // (past the primary's round)
    const back = await f(a.base + p);
    check((await back.text()) === 'a', 'the recovered primary took the probe');
    const again = await f(a.base + p);
    check((await again.text()) === 'a', 'and the calls after it');
    check(ends.join() === [b.base, b.base, a.base, a.base].join(), `endpoints ${ends}`);
    check(gate.state(new URL(a.base).origin).state === 'closed', 'the primary is closed again');
    gate.free();
  },

  async 'weighted endpoints share first attempts by weight'(lib, a, b) {
    const [na, nb] = await split(lib, a, b, [4, 1], 200);
    // (binomial(200, 0.8): mean 160, sd 5.7; outside [130, 190] p < 1e-6; an even split or all on a fails)
    check(na + nb === 200 && na >= 130 && na <= 190, `a ${na}, b ${nb}`);
  },

  async 'hedging and failover together: a hedge goes out, a retry fails over'({ withBackoff, hedge, failover }, a, b) {
    const p = path('both');
    await a.script(p, [{ status: 503 }]);
    await b.script(p, [{ status: 200, body: 'b' }]);
    let done;
    const f = withBackoff(fetch, {
      ...FAST,
      endpoints: failover([a.base, b.base]),
      hedge: hedge({ delayMs: 2000 }),
      onDone: (d) => (done = d),
    });
    const res = await f(a.base + p);
    check((await res.text()) === 'b' && done.endpoint === b.base, JSON.stringify(done));
  },

  async 'a request for an origin not in the list is sent to its own origin, untouched'({ withBackoff, createGate, failover }, a, b, c) {
    const p = path('unlisted');
    await a.script(p, [{ status: 200, body: 'from a' }]);
    await b.script(p, [{ status: 200, body: 'from b' }]);
    await c.script(p, [{ status: 503 }, { status: 200, body: 'from c' }]);
    let done;
    const f = withBackoff(fetch, { ...FAST, endpoints: failover([a.base, b.base]), onDone: (d) => (done = d) });
    const res = await f(`${c.base}${p}?q=1`, { headers: { authorization: 'Bearer token-for-C' } });
    const text = await res.text();
    check(res.status === 200 && text === 'from c', `answered ${res.status} '${text}' (${done.endpoint})`);
    const [na, nb] = [await a.count(p), await b.count(p)];
    check(na === 0 && nb === 0, `the endpoints were sent ${na} and ${nb} requests for another origin`);
    const seen = await c.requests(p);
    check(seen.length === 2, `its own origin saw ${seen.length} (the attempt and its retry)`);
    for (const r of seen) check(r.url === `${p}?q=1` && r.headers.authorization === 'Bearer token-for-C', JSON.stringify(r.headers));
    check(done.endpoint === undefined && done.attempts === 2, JSON.stringify(done));
    // With a gate, its circuit is its own origin's: the endpoints' stay closed.
    const q = path('unlisted-gate');
    await c.script(q, [{ status: 503 }]);
    const gate = createGate({ baseMs: 400, maxDelayMs: 400, jitter: 'none', consecutive: 1 });
    const g = withBackoff(fetch, { ...FAST, gate, maxAttempts: 1, endpoints: failover([a.base, b.base]) });
    check((await g(c.base + q)).status === 503, 'the answer of its own origin');
    check((await c.count(q)) === 1 && (await a.count(q)) === 0 && (await b.count(q)) === 0, 'sent to its own origin alone');
    const st = [c.base, a.base, b.base].map((x) => gate.state(new URL(x).origin).state);
    check(st.join() === 'open,closed,closed', `circuits ${st}`);
    gate.free();
  },

  async "a request's credentials reach only its own origin: a move to another endpoint drops them"({ withBackoff, failover }, a, b) {
    const headers = {
      authorization: 'Bearer token-for-A',
      cookie: 'session=for-a',
      'proxy-authorization': 'Basic cHJveHk6Zm9yLWE=',
      'x-keep': 'kept',
    };
    // Headers in init, in a Request, and in a Request whose headers the driver rebuilds (attemptHeader).
    const forms = [
      ['init', (u) => [u, { headers }], {}],
      ['Request', (u) => [new Request(u, { headers })], {}],
      ['Request + attemptHeader', (u) => [new Request(u, { headers })], { attemptHeader: 'x-attempt' }],
    ];
    for (const [form, args, more] of forms) {
      const p = path('creds');
      await a.script(p, [{ status: 503 }]);
      await b.script(p, [{ status: 200, body: 'from b' }]);
      const hook = [];
      const f = withBackoff(fetch, {
        ...FAST,
        ...more,
        endpoints: failover([a.base, b.base]),
        beforeRetry: ({ request }) => void hook.push(CREDENTIALS.filter((h) => request.headers.has(h))),
      });
      const res = await f(...args(`${a.base}${p}?q=1`));
      check(res.status === 200 && (await res.text()) === 'from b', `${form}: status ${res.status}`);
      const [[ra], [rb]] = [await a.requests(p), await b.requests(p)];
      check(ra?.headers.authorization === 'Bearer token-for-A', `${form}: its own origin got ${JSON.stringify(ra?.headers)}`);
      if (!IN_PAGE)
        check(ra.headers.cookie === 'session=for-a' && ra.headers['proxy-authorization'], `${form}: ${JSON.stringify(ra.headers)}`);
      const leaked = CREDENTIALS.filter((h) => rb?.headers[h] !== undefined);
      check(rb && leaked.length === 0, `${form}: the other endpoint got ${leaked.join(', ')}`);
      check(rb.headers['x-keep'] === 'kept' && rb.url === `${p}?q=1`, `${form}: other headers and the path stay: ${JSON.stringify(rb)}`);
      check(hook.length === 1 && hook[0].length === 0, `${form}: beforeRetry's request carried ${hook}`);
    }
    // An endpoint that says so takes them (only it: the list's other origin does not).
    const p = path('creds-opt-in');
    await a.script(p, [{ status: 503 }]);
    await b.script(p, [{ status: 503 }]);
    const f = withBackoff(fetch, { ...FAST, maxAttempts: 3, endpoints: failover([a.base, { url: b.base, credentials: true }]) });
    await f(`${a.base}${p}`, { headers });
    const [, back] = await a.requests(p);
    const [rb] = await b.requests(p);
    check(rb?.headers.authorization === 'Bearer token-for-A', `opted in: ${JSON.stringify(rb?.headers)}`);
    if (!IN_PAGE)
      check(rb.headers.cookie === 'session=for-a' && rb.headers['proxy-authorization'], `opted in: ${JSON.stringify(rb.headers)}`);
    check(back?.headers.authorization === 'Bearer token-for-A', 'the third attempt, back at its own origin, carries them');
    // A request for b starts at the preferred a, which did not opt in.
    const q = path('creds-other-way');
    await a.script(q, [{ status: 200 }]);
    await f(`${b.base}${q}`, { headers: { ...headers, authorization: 'Bearer token-for-B' } });
    const [ra] = await a.requests(q);
    const leaked = CREDENTIALS.filter((h) => ra?.headers[h] !== undefined);
    check(ra && leaked.length === 0, `a request for b moved to a carried ${leaked.join(', ')}`);
  },

  async 'weights whose sum overflows still share first attempts by weight'(lib, a, b) {
    const [na, nb] = await split(lib, a, b, [1e308, 1e308], 60);
    // (binomial(60, 0.5): mean 30, sd 3.9; below 10 either way p < 1e-6; all on one endpoint fails)
    check(na + nb === 60 && na >= 10 && nb >= 10, `a ${na}, b ${nb}`);
  },

  async 'bad endpoints throw, naming the option'({ withBackoff, failover }, a, b) {
    const bad = [
      ['x', TypeError],
      [[], RangeError],
      [['/relative'], TypeError],
      [['not a url'], TypeError],
      [['ftp://a.example'], RangeError],
      [['https://a.example/api'], RangeError],
      [['https://a.example?x=1'], RangeError],
      [[a.base, `${a.base}/`], RangeError],
      [[{ url: a.base, weight: 0 }], RangeError],
      [[{ url: a.base, weight: -1 }], RangeError],
      [[{ url: a.base, weight: Infinity }], RangeError],
      [[{ url: a.base, weight: '2' }], TypeError],
      [[{ url: a.base, weight: null }], TypeError, 'endpoints[0].weight'],
      [[a.base, { url: b.base, weight: Number.NaN }], RangeError, 'endpoints[1].weight'],
      [[a.base, { url: b.base, credentials: 'yes' }], TypeError, 'endpoints[1].credentials'],
      [[{ url: a.base, credentials: 1 }], TypeError, 'endpoints[0].credentials'],
      [[{ url: a.base, credentials: null }], TypeError, 'endpoints[0].credentials'],
      [[5], TypeError],
    ];
    for (const [endpoints, type, name = 'endpoints'] of bad) {
      const e = thrown(() => failover(endpoints));
      check(e instanceof type && e.message.startsWith(name), `failover(${JSON.stringify(endpoints)}): ${e}`);
    }
    // (credentials: false, and a weight with it, are fine)
    check(failover([{ url: a.base, credentials: false, weight: 2 }, b.base]).weighted, 'credentials: false');
    const e = thrown(() => withBackoff(fetch, { endpoints: [a.base] }));
    check(e instanceof TypeError && e.message.includes("'wasm-backoff/failover'"), `plain array: ${e}`);
  },
};

/** Runs the scenarios against the three servers' `bases` (all, or those whose name passes `filter`); returns failures as strings. */
export async function hedgeScenarios(lib, bases, filter = () => true) {
  const [a, b, c] = bases.map(control);
  const failures = [];
  for (const [name, fn] of Object.entries(SCENARIOS)) {
    if (!filter(name)) continue;
    try {
      await fn(lib, a, b, c);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    }
  }
  return failures;
}
