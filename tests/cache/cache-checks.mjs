// The runtime smokes of the `fallback` option and wasm-backoff/cache's
// staleIfError against the real scripted server (control API `a`), run by
// Node (cache.node.test.mjs: the memory store) and a Chromium page
// (tests/browser/around.js: the Cache API). Outcomes and what the server
// saw; the timing logic (ages, maxStaleMs) is cache.node.test.mjs's, on
// virtual time.
import { check, path, runSmokes } from '../auth/around.mjs';

/**
 * Calls `f()` until `done(value)` holds or `ms` passed (every 20 ms, a
 * runtime's timers: no Node API); resolves with the last value, for the
 * caller to check. A bounded wait for what a runtime does off the caller's
 * path, in place of a fixed sleep a loaded machine can outlast.
 */
async function polled(f, done, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (done(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** name -> async (lib, a) => void */
export const SMOKES = {
  async 'a fallback answers a call that failed for good, never a 404'({ withBackoff }, a) {
    const p = path('fb');
    await a.script(p, [{ status: 503 }, { status: 503 }, { status: 404 }]);
    const told = [];
    const api = withBackoff(fetch, {
      baseMs: 1,
      maxAttempts: 2,
      fallback: (info) => (told.push(info), new Response('default', { status: 200 })),
    });
    const res = await api(a.base + p);
    check((await res.text()) === 'default', `status ${res.status}`);
    check(told.length === 1 && told[0].reason === 'exhausted' && told[0].response?.status === 503, JSON.stringify(told[0]));
    check((await api(a.base + p)).status === 404 && told.length === 1, 'a 404 is an answer');
  },

  async 'staleIfError: the last good copy, with an Age, when the service fails'({ withBackoff, staleIfError }, a) {
    const p = path('stale');
    await a.script(p, [{ status: 200, body: 'fresh data', headers: { 'x-v': '1' } }, { status: 503 }]);
    const stale = staleIfError({ maxStaleMs: 60_000, cacheName: `wasm-backoff-test${p}` });
    // (a page over http://127.0.0.1 is a secure context: the Cache API; Node: memory)
    check(stale.store === (typeof caches === 'undefined' ? 'memory' : 'cache'), `store ${stale.store}`);
    try {
      const api = withBackoff(fetch, { baseMs: 1, maxAttempts: 2, fallback: stale });
      check((await (await api(a.base + p)).text()) === 'fresh data', 'the first answer');
      // (the copy is stored beside the caller's read: wait for it)
      const res = await polled(
        () => api(a.base + p),
        (r) => r.status === 200,
      );
      check(res.status === 200 && (await res.text()) === 'fresh data', `status ${res.status}`);
      check(res.headers.get('x-v') === '1' && /^\d+$/.test(res.headers.get('age') ?? ''), `headers age=${res.headers.get('age')}`);
      check(res.headers.get('x-wasm-backoff-stored') === null, 'no header of ours left on the copy');
    } finally {
      await stale.clear();
    }
  },

  async 'staleIfError keeps at most `max` copies: the least recently stored goes'({ withBackoff, staleIfError }, a) {
    const ps = [path('b1'), path('b2'), path('b3')];
    for (const p of ps) await a.script(p, [{ status: 200, body: p }, { status: 503 }]);
    const stale = staleIfError({ max: 2, cacheName: `wasm-backoff-test${ps[0]}` });
    try {
      const api = withBackoff(fetch, { maxAttempts: 1, fallback: stale });
      /** What a call for `p` ends with now that the server fails it: its copy's body, or 503 (none kept). */
      const served = async (p) => {
        const res = await api(a.base + p);
        return res.status === 200 ? await res.text() : res.status;
      };
      const servedAll = async () => {
        const got = [];
        for (const p of ps) got.push(await served(p));
        return got;
      };
      for (const p of ps) {
        await (await api(a.base + p)).text();
        // (each copy stored before the next: the order of storing is the order of eviction;
        // it is stored beside the caller's read, off the call's path: wait for it)
        const got = await polled(
          () => served(p),
          (body) => body === p,
        );
        check(got === p, `the copy of ${p} never stored: served ${got}`);
      }
      // (the third copy's store deletes one past `max` after writing it: wait until at most 2 are served)
      const got = await polled(servedAll, (g) => g.filter((x) => x !== 503).length <= 2);
      check(got[0] === 503 && got[1] === ps[1] && got[2] === ps[2], `served: ${got}`);
    } finally {
      await stale.clear();
    }
  },
};

/** Runs the smokes named in `only` (every one without it) against control API `a`; resolves with the failures. */
export const cacheSmokes = (lib, a, only) => runSmokes(SMOKES, lib, a, only);
