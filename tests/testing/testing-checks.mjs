// Checks of wasm-backoff/testing that run unchanged in every runtime: Node
// (testing.node.test.mjs) and workerd (worker.mjs, through miniflare). Each
// is `async (lib) => void` and throws on a failure; `testingFailures` runs
// them all and returns the failures (empty = pass). `lib` is the package as
// a user imports it: { virtualClock, scriptedFetch, chaos } of
// wasm-backoff/testing, { withBackoff, retry } of wasm-backoff, { createGate,
// BrokenCircuitError } of wasm-backoff/gate.
// Nothing here waits for real: every wait is virtual, and the checks that
// drive the package measure that little real time passed.

// (the real clock and timers, taken before any virtual clock is installed)
const realNow = Date.now;
const REAL = { setTimeout, clearTimeout, setInterval, clearInterval, Date };

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}
const same = (a, b, msg) => check(JSON.stringify(a) === JSON.stringify(b), `${msg}: got ${JSON.stringify(a)}, want ${JSON.stringify(b)}`);

/** What `p` rejects with (it must reject). */
async function rejection(p, what) {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error(`${what}: resolved, expected a rejection`);
}

/** Runs `body(clock)` with a clock installed, uninstalling it however the body ends. */
async function withClock(lib, body, options) {
  const clock = lib.virtualClock(options);
  try {
    return await body(clock);
  } finally {
    clock.uninstall();
  }
}

/** name → async (lib) => void */
export const TESTING_CHECKS = {
  async 'install stands in for the timer globals and Date; uninstall puts the real ones back'(lib) {
    const perfNow = globalThis.performance?.now;
    const clock = lib.virtualClock({ now: 5000 });
    try {
      for (const k of Object.keys(REAL)) check(globalThis[k] !== REAL[k], `${k} is the clock's while installed`);
      check(Date.now() === 5000 && new Date().toISOString() === '1970-01-01T00:00:05.000Z', `Date.now() ${Date.now()}`);
      check(Date() === new REAL.Date(5000).toString(), `Date() ${Date()}`);
      check(new Date(0).getTime() === 0 && new Date(2020, 0).getFullYear() === 2020, 'new Date(args) as the real one');
      check(new Date() instanceof REAL.Date && new REAL.Date() instanceof Date, 'instanceof both ways');
      check(Date.parse('1970-01-01T00:00:01Z') === 1000 && Date.UTC(1970, 0, 1) === 0, 'Date.parse and Date.UTC');
      if (perfNow) {
        const p0 = performance.now();
        await clock.tick(250);
        check(Math.abs(performance.now() - p0 - 250) < 1e-6, `performance.now() follows: ${performance.now() - p0}`);
      }
      check(clock.now() === 5250 && Date.now() === 5250, 'tick moves both');
      let threw;
      try {
        lib.virtualClock();
      } catch (e) {
        threw = e;
      }
      check(/already installed/.test(threw?.message), `a second clock throws: ${threw?.message}`);
      setTimeout(() => {}, 10);
    } finally {
      clock.uninstall();
    }
    clock.uninstall(); // (again: nothing)
    for (const k of Object.keys(REAL)) check(globalThis[k] === REAL[k], `${k} is the real one again`);
    if (perfNow) check(performance.now === perfNow, 'performance.now is the real one again');
    const [before, now, after] = [realNow(), Date.now(), realNow()];
    check(before <= now && now <= after, 'Date.now() is real again');
    const e = await rejection(clock.tick(1), 'tick after uninstall');
    check(/uninstalled/.test(e.message), e.message);
    // A new clock may be installed now.
    lib.virtualClock().uninstall();
  },

  async 'timers fire in due order, same due time first armed first, each at its own time'(lib) {
    await withClock(lib, async (clock) => {
      const log = [];
      const at = (name) => () => log.push(`${name}@${Date.now()}`);
      setTimeout(at('c'), 30);
      setTimeout(at('a1'), 10);
      setTimeout(at('a2'), 10);
      const gone = setTimeout(at('cleared'), 5);
      setTimeout(at('zero'));
      setTimeout(at('negative'), -5);
      setTimeout(at('nan'), Number.NaN);
      setTimeout(at('b'), 20.5);
      clearTimeout(gone);
      check(clock.pending() === 7, `7 pending: ${clock.pending()}`);
      same(clock.asked, [30, 10, 10, 5, 0, -5, Number.NaN, 20.5], 'asked as given');
      check((await clock.tick(10)) === 10, 'tick resolves with now');
      same(log, ['zero@0', 'negative@0', 'nan@0', 'a1@10', 'a2@10'], 'after 10 ms');
      await clock.tick(100);
      same(log.slice(5), ['b@20', 'c@30'], 'b at 20.5 (Date.now() rounds down), then c');
      check(clock.now() === 110 && clock.pending() === 0, `now ${clock.now()}, pending ${clock.pending()}`);
      // Past a long's range: wraps, as browsers (2^31 → −2^31 → 0).
      setTimeout(at('wrapped'), 2 ** 31);
      await clock.tick(0);
      same(log.at(-1), 'wrapped@110', 'a delay of 2^31 fires at once');
      // A timer's arguments, and the callback must be a function.
      let got;
      setTimeout((x, y) => (got = [x, y]), 1, 'x', 'y');
      await clock.tick(1);
      same(got, ['x', 'y'], 'arguments passed');
      let bad;
      try {
        setTimeout('code', 1);
      } catch (e) {
        bad = e;
      }
      check(bad instanceof TypeError, 'a string callback is a TypeError');
    });
  },

  async 'near today’s epoch, Date.now() is the start plus the waits rounded down, exactly'(lib) {
    // (a double near 1.8e12 holds a ms to 2.4e-4 only: start + 150.99995 would round to start + 151)
    const start = Date.UTC(2026, 10, 2, 9);
    await withClock(
      lib,
      async (clock) => {
        const log = [];
        setTimeout(() => log.push(Date.now() - start), 150.99995);
        setTimeout(() => log.push(Date.now() - start), 151);
        await clock.runUntilIdle();
        same(log, [150, 151], 'fired at 150.99995, then at 151');
        check(clock.elapsed() === 151 && clock.now() === start + 151, `elapsed ${clock.elapsed()}`);
        await clock.tick(0.99995);
        check(Date.now() - start === 151 && clock.elapsed() === 151.99995, `151.99995 ms on: Date.now() ${Date.now() - start}`);
      },
      { now: start },
    );
  },

  async 'promise reactions run between two timers due at the same time'(lib) {
    await withClock(lib, async (clock) => {
      const log = [];
      setTimeout(() => {
        log.push('A');
        Promise.resolve()
          .then(() => log.push('A then'))
          .then(() => new Response('body').text())
          .then((t) => log.push(`A ${t}`));
      }, 10);
      setTimeout(() => log.push('B'), 10);
      await clock.tick(10);
      same(log, ['A', 'A then', 'A body', 'B'], 'A and its reactions (a body read too), then B');
    });
  },

  async 'nested timers are clamped to 4 ms past 5 levels, as browsers do; intervals repeat until cleared'(lib) {
    await withClock(lib, async (clock) => {
      const times = [];
      const nest = () => {
        times.push(clock.now());
        if (times.length < 9) setTimeout(nest, 0);
      };
      setTimeout(nest, 0);
      await clock.runUntilIdle();
      same(times, [0, 0, 0, 0, 0, 0, 4, 8, 12], 'levels 1-6 at 0 ms; one armed more than 5 deep waits 4 ms');
      const ticks = [];
      const t0 = clock.now();
      const id = setInterval(() => ticks.push(clock.now() - t0) === 3 && clearInterval(id), 100);
      check(clock.pending() === 1, 'an interval is one pending timer');
      await clock.tick(1000);
      same(ticks, [100, 200, 300], 'three runs, then cleared in its own callback');
      check(clock.pending() === 0, 'nothing pending');
      // A timer that re-arms forever: runUntilIdle fails, naming it.
      const poll = setInterval(() => {}, 1000);
      const e = await rejection(clock.runUntilIdle({ maxMs: 10_000 }), 'an endless interval');
      check(/still pending after 10000 ms/.test(e.message), e.message);
      clearInterval(poll);
      check((await clock.runUntilIdle()) === clock.now(), 'idle once cleared');
    });
  },

  async 'run advances until the promise settles; a promise nothing ends is stuck, not hung'(lib) {
    await withClock(lib, async (clock) => {
      const sleep = (ms, v) => new Promise((r) => setTimeout(() => r(v), ms));
      check((await clock.run(sleep(1500, 'v'))) === 'v' && clock.now() === 1500, `run: ${clock.now()}`);
      const err = await rejection(clock.run(sleep(10).then(() => Promise.reject(new Error('late')))), 'a rejection');
      check(err.message === 'late', 'run rejects as the promise');
      const t0 = realNow();
      const stuck = await rejection(clock.run(new Promise(() => {}), { graceMs: 0 }), 'a promise nothing ends');
      // (the bound: the default graceMs, 1 s, which graceMs: 0 must not wait)
      check(/stuck/.test(stuck.message) && realNow() - t0 < 1000, `stuck at once: ${stuck.message}`);
      const far = await rejection(clock.run(sleep(120_000), { maxMs: 60_000 }), 'past maxMs');
      check(/after 60000 ms/.test(far.message), far.message);
      check(!(await clock.settled(sleep(5))) && (await clock.settled(Promise.resolve())), 'settled');
      const busy = clock.tick(10);
      const twice = await rejection(clock.tick(10), 'a second tick meanwhile');
      check(/already moving/.test(twice.message), twice.message);
      await busy;
    });
  },

  async 'scriptedFetch: statuses, headers, bodies, JSON; a list repeats its last; calls are recorded'(lib) {
    const f = lib.scriptedFetch([503, { status: 429, headers: { 'retry-after': '2' }, body: 'slow down' }, { body: { id: 7 } }]);
    const a = await f('https://api.test/items?x=1', { method: 'POST', body: 'hello', headers: { 'x-k': 'v' } });
    check(a.status === 503 && a.url === 'https://api.test/items?x=1', `first: ${a.status} ${a.url}`);
    const b = await f(new Request('https://api.test/items'));
    check(b.status === 429 && b.headers.get('retry-after') === '2' && (await b.text()) === 'slow down', 'second');
    const c = await f('https://api.test/items');
    check(c.headers.get('content-type') === 'application/json' && (await c.json()).id === 7, 'third: JSON');
    check((await f('https://api.test/items')).status === 200 && f.count === 4, 'the last repeats');
    const [first] = f.calls;
    same(
      { method: first.method, url: first.url, body: first.body, k: first.headers['x-k'] },
      { method: 'POST', url: 'https://api.test/items?x=1', body: 'hello', k: 'v' },
      'the call recorded',
    );
    check(f.calls[1].body === null && typeof f.calls[1].at === 'number', 'no body: null');
    // By path ('*' for the others; the query is not matched), a function of the call and n, a Response as is.
    const mine = new Response('mine', { status: 201 });
    const g = lib.scriptedFetch({
      '/a': (call, n) => (call.headers.authorization === 'Bearer ok' ? 200 : 401 + n),
      '/r': mine,
      '*': 'reset',
    });
    check((await g('https://x.test/a')).status === 401 && (await g('https://x.test/a?q')).status === 402, 'function, n from 0');
    check((await g('https://x.test/a', { headers: { authorization: 'Bearer ok' } })).status === 200, 'the call is told');
    check((await g('https://x.test/r')) === mine, 'a Response is returned as is');
    const again = await g('https://x.test/r');
    check(again !== mine && again.status === 201 && (await again.text()) === 'mine', 'then a clone of it');
    const reset = await rejection(g('https://x.test/other'), "'*' → reset");
    check(reset instanceof TypeError && reset.message === 'fetch failed' && reset.cause?.code === 'ECONNRESET', String(reset));
    check((await lib.scriptedFetch({ '/a': 200 })('https://x.test/b')).status === 404, 'an unscripted path is a 404');
    // fetch's own errors for a request it cannot build.
    const bad = await rejection(f('not a url'), 'a bad URL');
    check(bad instanceof TypeError && f.count === 4, 'a bad URL is fetch’s TypeError, not recorded');
  },

  async 'scriptedFetch: delays, hangs and stalls are virtual and end with the signal’s reason'(lib) {
    await withClock(lib, async (clock) => {
      const f = lib.scriptedFetch([
        { delayMs: 2000, body: 'late' },
        { hang: true },
        { body: 'abcdefgh', stallAfter: 3 },
        { size: 10, cutAfter: 4 },
      ]);
      const slow = f('https://x.test/');
      check(!(await clock.settled(slow)), 'not before its delay');
      await clock.tick(1999);
      check(!(await clock.settled(slow)), 'not at 1999 ms');
      await clock.tick(1);
      check((await (await slow).text()) === 'late' && clock.pending() === 0, 'at 2000 ms');
      const ac = new AbortController();
      const hung = f('https://x.test/', { signal: ac.signal });
      await clock.tick(60_000);
      check(!(await clock.settled(hung)), 'a hang never answers');
      ac.abort(new Error('gave up'));
      check((await rejection(hung, 'hang')).message === 'gave up', 'the abort rejects with its reason');
      const ac2 = new AbortController();
      const res = await f('https://x.test/', { signal: ac2.signal });
      const reader = res.body.getReader();
      const { value } = await reader.read();
      check(new TextDecoder().decode(value) === 'abc', 'the first 3 bytes');
      const rest = reader.read();
      await clock.tick(60_000);
      check(!(await clock.settled(rest)), 'then the body stalls');
      ac2.abort(new Error('stop'));
      check((await rejection(rest, 'stall')).message === 'stop', 'the stalled read errors with the reason');
      const cutRes = await f('https://x.test/');
      const cut = await rejection(cutRes.arrayBuffer(), 'cut');
      check(cut instanceof TypeError && cut.message === 'terminated', `cut: ${cut}`);
      const pre = new AbortController();
      pre.abort(new Error('before'));
      check((await rejection(f('https://x.test/', { signal: pre.signal }), 'aborted before')).message === 'before', 'aborted before');
    });
  },

  async 'withBackoff: a 503 with Retry-After: 2, twice, then 200 waits exactly what onRetry says, in virtual time'(lib) {
    await withClock(lib, async (clock) => {
      const busy = { status: 503, headers: { 'retry-after': '2' } };
      const fetch = lib.scriptedFetch([busy, busy, { body: 'ok' }]);
      const waits = [];
      const api = lib.withBackoff(fetch, { seed: 1, onRetry: ({ delayMs, retryAfterMs }) => waits.push([delayMs, retryAfterMs]) });
      const t0 = realNow();
      const res = await clock.run(api('https://api.test/items'));
      check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
      check(waits.length === 2, `two retries: ${waits}`);
      for (const [d, ra] of waits) check(ra === 2000 && d >= 2000 && d < 2200, `a wait of 2 s plus < 10 % jitter: ${d}`);
      same(
        clock.asked,
        waits.map(([d]) => d),
        'the only timers: the two waits',
      );
      check(clock.now() === waits[0][0] + waits[1][0], `resolved at the sum of the waits: ${clock.now()}`);
      same(
        fetch.calls.map((c) => c.at),
        [0, Math.floor(waits[0][0]), Math.floor(waits[0][0] + waits[1][0])],
        'each attempt when its wait ended',
      );
      // (the bound is the waits: real waiting would take at least their 4 s)
      check(realNow() - t0 < clock.now(), `no real waiting: ${realNow() - t0} ms`);
      check(clock.pending() === 0, 'nothing left behind');
    });
  },

  async 'withBackoff: maxElapsedMs ends the attempt in flight at the deadline; a reset is retried'(lib) {
    await withClock(lib, async (clock) => {
      const fetch = lib.scriptedFetch(['reset', { status: 503 }, { hang: true }]);
      const done = [];
      const api = lib.withBackoff(fetch, { baseMs: 100, seed: 3, maxElapsedMs: 5000, onDone: (d) => done.push(d) });
      const e = await rejection(clock.run(api('https://api.test/')), 'the deadline');
      check(e.name === 'TimeoutError', `a TimeoutError: ${e.name} ${e.message}`);
      check(clock.now() === 5000, `at the deadline exactly: ${clock.now()}`);
      check(fetch.count === 3 && done[0]?.attempts === 3, `three attempts: ${fetch.count}`);
      check(clock.pending() === 0, 'no timer left');
    });
  },

  async 'retry(fn): its waits follow the clock'(lib) {
    await withClock(lib, async (clock) => {
      const at = [];
      const p = lib.retry(
        () => {
          at.push(clock.now());
          if (at.length < 3) throw new Error('not yet');
          return 'done';
        },
        { strategy: 'constant', baseMs: 250, jitter: 'none' },
      );
      check((await clock.run(p)) === 'done', 'done');
      same(at, [0, 250, 500], 'attempts every 250 ms');
    });
  },

  async 'a breaker opens after 3 failures, refuses at once, then probes after its round'(lib) {
    await withClock(lib, async (clock) => {
      const fetch = lib.scriptedFetch({ '/down': (_, n) => (n < 3 ? 503 : 200) });
      const changes = [];
      const breaker = lib.createGate({
        consecutive: 3,
        mode: 'fail-fast',
        baseMs: 1000,
        seed: 1,
        key: () => 'api',
        onStateChange: ({ to }) => changes.push(`${to}@${Math.round(clock.now())}`),
      });
      const api = lib.withBackoff(fetch, { gate: breaker, maxAttempts: 1 });
      for (let i = 0; i < 3; i++) check((await clock.run(api('https://api.test/down'))).status === 503, `call ${i + 1}: 503`);
      same(changes, ['open@0'], 'open after the third');
      const refused = await rejection(clock.run(api('https://api.test/down')), 'open');
      check(refused instanceof lib.BrokenCircuitError && refused.retryAfterMs > 0, `refused: ${refused}`);
      check(refused.retryAfterMs <= 1000 && fetch.count === 3, `nothing sent; next probe in ${refused.retryAfterMs} ms`);
      // (retryAfterMs may carry a fraction; Date.now() counts whole ms, so the round is over at the next one)
      await clock.tick(Math.ceil(refused.retryAfterMs));
      const probe = await clock.run(api('https://api.test/down'));
      check(probe.status === 200 && fetch.count === 4, `the probe: ${probe.status}`);
      check(breaker.state('api').state === 'closed', `closed again: ${breaker.state('api').state}`);
      breaker.free();
    });
  },

  async 'chaos: seeded faults, statuses and resets, latency on the clock; bad options named'(lib) {
    await withClock(lib, async (clock) => {
      const inner = lib.scriptedFetch(200);
      const run = async (options, n) => {
        const f = lib.chaos(inner, options);
        const out = [];
        for (let i = 0; i < n; i++) {
          const r = await clock.run(
            f('https://x.test/').then(
              (res) => res.status,
              (e) => e.message,
            ),
          );
          out.push(r);
        }
        return { out, f };
      };
      const a = await run({ rate: 0.3, seed: 42 }, 40);
      const b = await run({ rate: 0.3, seed: 42, latencyMs: [10, 20], statuses: [500, 502], reset: 0.5 }, 40);
      const faulted = (xs) => xs.map((x) => x !== 200);
      same(faulted(b.out), faulted(a.out), 'the same calls fault for the same seed and rate');
      const n = a.out.filter((x) => x === 503).length;
      check(n > 4 && n < 20 && a.out.every((x) => x === 200 || x === 503), `about 30 % 503: ${n}/40`);
      check(new Set(b.out).size === 4, `200, 500, 502 and resets: ${[...new Set(b.out)]}`);
      check(
        b.f.injected.every((i) => i.latencyMs >= 10 && i.latencyMs <= 20),
        'latency in range',
      );
      same(
        b.f.injected.map((i) => i.fault ?? 200),
        b.out.map((x) => (x === 'fetch failed' ? 'reset' : x)),
        'injected says what each call got',
      );
      const t = clock.now();
      const c = await run({ rate: 0, latencyMs: 100 }, 3);
      same(c.out, [200, 200, 200], 'rate 0: none');
      check(clock.now() - t === 300, `latency is virtual: ${clock.now() - t}`);
      same((await run({ rate: 1, reset: true }, 2)).out, ['fetch failed', 'fetch failed'], 'rate 1, resets');
      const bad = [
        [{}, TypeError, 'rate must be a number in [0, 1]'],
        [{ rate: 2 }, RangeError, 'rate must be a number in [0, 1]'],
        [{ rate: 0.1, status: 99 }, RangeError, 'status must be an integer HTTP status in [200, 599]'],
        [{ rate: 0.1, statuses: [] }, RangeError, 'statuses must be a non-empty array'],
        [{ rate: 0.1, statuses: 503 }, TypeError, 'statuses must be a non-empty array'],
        [{ rate: 0.1, reset: 'yes' }, TypeError, 'reset must be a boolean or a number in [0, 1]'],
        [{ rate: 0.1, latencyMs: -1 }, RangeError, 'latencyMs must be a finite number >= 0'],
        [{ rate: 0.1, latencyMs: [5, 1] }, RangeError, 'latencyMs must be a finite number >= 0'],
        [{ rate: 0.1, seed: 1.5 }, RangeError, 'seed must be a safe integer'],
      ];
      for (const [o, cls, msg] of bad) {
        let e;
        try {
          lib.chaos(inner, o);
        } catch (x) {
          e = x;
        }
        check(e instanceof cls && e.message.startsWith(msg), `chaos(${JSON.stringify(o)}): ${e}`);
      }
    });
  },
};

/** Runs every check (those `pick` keeps, by name); returns `name: message` per failure. */
export async function testingFailures(lib, pick = () => true) {
  const failures = [];
  for (const [name, fn] of Object.entries(TESTING_CHECKS)) {
    if (!pick(name)) continue;
    try {
      await fn(lib);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    }
  }
  return failures;
}
