// The runtime smokes of wasm-backoff/dedupe against the real scripted server
// (control API `a`), run by Node (dedupe.node.test.mjs) and a Chromium page
// (tests/browser/around.js): one request for many callers through a real
// fetch, each caller's body its own, one caller's abort leaving the others'
// answers whole. Outcomes and what the server saw, never a duration.
import { check, path, runSmokes } from '../auth/around.mjs';

/** name -> async (lib, a) => void */
export const SMOKES = {
  async '100 concurrent identical GETs: one request, a whole body each'({ withBackoff, dedupe }, a) {
    const p = path('dedupe');
    await a.script(p, [{ status: 503 }, { status: 200, body: 'shared answer', delayMs: 100 }]);
    const get = withBackoff(fetch, { baseMs: 1, dedupe: dedupe() });
    // (one caller with a signal: its body is its own stream, following it; its URL is the answer's)
    const res = await Promise.all(
      Array.from({ length: 100 }, (_, i) => get(a.base + p, i ? undefined : { signal: new AbortController().signal })),
    );
    check(res[0].url === a.base + p && res[1].url === a.base + p, `URLs ${res[0].url} ${res[1].url}`);
    const texts = await Promise.all(res.map((r) => r.text()));
    check(
      texts.every((t) => t === 'shared answer'),
      `bodies: ${[...new Set(texts)]}`,
    );
    check((await a.count(p)) === 2, `${await a.count(p)} requests: one, and its retry`);
  },

  async "one caller's abort: it rejects, the others get the answer"({ withBackoff, dedupe }, a) {
    const p = path('dedupeabort');
    // (the answer waits until the test has aborted: released after)
    await a.script(p, { status: 200, body: 'still here', holdUntil: p });
    const get = withBackoff(fetch, { dedupe: dedupe() });
    const ac = new AbortController();
    const mine = get(a.base + p, { signal: ac.signal });
    const others = [get(a.base + p), get(a.base + p)];
    await a.arrived(p);
    ac.abort(new Error('gone'));
    const e = await mine.catch((x) => x);
    check(e?.message === 'gone', String(e));
    await a.release(p);
    const texts = await Promise.all(others.map((r) => r.then((x) => x.text())));
    check(
      texts.every((t) => t === 'still here'),
      texts.join(),
    );
    const [req] = await a.requests(p);
    check((await a.count(p)) === 1 && !req.closed, 'one request, answered whole');
  },
};

/** Runs the smokes named in `only` (every one without it) against control API `a`; resolves with the failures. */
export const dedupeSmokes = (lib, a, only) => runSmokes(SMOKES, lib, a, only);
