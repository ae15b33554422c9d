// The runtime smokes of wasm-backoff/auth: what only a real runtime's fetch
// shows, against the real scripted server (tests/server/scripted.mjs,
// driven by its control API `a`), run by Node (auth.node.test.mjs) and a
// Chromium page (tests/browser/around.js: a cross-origin server, so the
// Authorization header goes through CORS and its preflight). Outcomes and
// what the server saw, never a duration: the timing logic is
// auth.node.test.mjs's, on virtual time.
import { check, path, runSmokes } from '../auth/around.mjs';

/** name -> async (lib, a) => void */
export const SMOKES = {
  async '50 concurrent calls meet a 401: one refresh, each sent once more with the new token'({ withBackoff, auth }, a) {
    const p = path('auth');
    // (the server answers by arrival: the 50 first requests 401, the rest 200)
    await a.script(p, [...Array(50).fill({ status: 401 }), { status: 200, body: 'ok' }]);
    let token = 'old';
    let refreshes = 0;
    const session = auth({
      header: () => `Bearer ${token}`,
      refresh: async () => {
        refreshes++;
        // (long enough for every first request to have met its 401)
        await a.arrived(p, 50);
        token = 'new';
      },
    });
    const api = withBackoff(fetch, { auth: session });
    const res = await Promise.all(Array.from({ length: 50 }, () => api(a.base + p)));
    const texts = await Promise.all(res.map((r) => r.text()));
    check(
      texts.every((t) => t === 'ok'),
      `statuses ${res.map((r) => r.status)}`,
    );
    check(refreshes === 1 && session.refreshes === 1, `${refreshes} refreshes`);
    const seen = (await a.requests(p)).map((r) => r.headers.authorization);
    check(seen.length === 100, `${seen.length} requests`);
    check(seen.slice(0, 50).every((h) => h === 'Bearer old') && seen.slice(50).every((h) => h === 'Bearer new'), `tokens: ${seen}`);
  },

  async 'a refresh that rejects rejects the waiting call with an AuthRefreshError; its cause is the refresh’s error'(
    { withBackoff, auth },
    a,
  ) {
    const p = path('authfail');
    await a.script(p, { status: 401 });
    const boom = new Error('invalid_grant');
    const api = withBackoff(fetch, {
      auth: auth({
        header: () => 'Bearer x',
        refresh: async () => {
          throw boom;
        },
      }),
    });
    const e = await api(a.base + p).catch((x) => x);
    check(e?.name === 'AuthRefreshError' && e.cause === boom && /invalid_grant/.test(e.message), String(e));
    check((await a.count(p)) === 1, 'nothing sent after the failed refresh');
  },
};

/** Runs the smokes named in `only` (every one without it) against control API `a`; resolves with the failures. */
export const authSmokes = (lib, a, only) => runSmokes(SMOKES, lib, a, only);
