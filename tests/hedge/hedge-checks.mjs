// The runtime smokes of hedging (`hedge`) and failover (`endpoints`): what
// only a real runtime's fetch can show, against real scripted servers
// (tests/server/scripted.mjs; `a` and `b` are their control APIs, two
// origins), run by Node (hedge.node.test.mjs), a Chromium page
// (tests/browser/hedge.js) and workerd (tests/workerd/hedge.mjs). They
// assert outcomes and order, never a duration: when a hedge goes, how many,
// what the budget and the gate allow and where a retry goes are timing
// logic, asserted to the millisecond on virtual time in hedge.node.test.mjs.
import { control } from '../fetch/fetch-checks.mjs';

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

let unique = 0;
const path = (name) => `/${name}-${Date.now().toString(36)}-${unique++}`;
/** A page (not a Worker): its fetch goes through the HTTP cache, whose lock a hedge skips (`cache: 'no-store'`). */
const IN_PAGE = typeof document !== 'undefined';

/** The requests to `p` once `ok(requests)` holds (polled: the server's log is the order of events), or the last seen. */
async function seen(a, p, ok) {
  let got = [];
  for (let i = 0; i < 250 && !ok(got); i++) {
    if (i) await new Promise((r) => setTimeout(r, 20));
    got = await a.requests(p);
  }
  return got;
}

/** name -> async (lib, a, b) => void */
export const SMOKES = {
  async "a hedge goes while the first request hangs and wins; the loser's connection closes (no options; the caller's signal)"(
    { fetchWithBackoff, hedge },
    a,
  ) {
    for (const init of [undefined, { signal: new AbortController().signal }]) {
      const p = path('loser');
      // (the server answers by arrival: the first hangs, the second gets 200. The first request arrives
      // first unless its connection took longer than the 100 ms to the hedge, as on a loaded machine
      // (a stressed run: won 1, in 232 ms): then the hedge hangs and the first request wins. Either way
      // one hedge went, and the request that hung is the loser whose connection closes.)
      await a.script(p, [{ hang: true }, { status: 200, body: 'fast' }]);
      let done;
      const res = await fetchWithBackoff(a.base + p, init, { hedge: hedge({ delayMs: 100 }), onDone: (d) => (done = d) });
      check((await res.text()) === 'fast', `status ${res.status}`);
      check([1, 2].includes(done.won) && done.hedges === 1 && done.attempts === 2, JSON.stringify(done));
      const reqs = await seen(a, p, (r) => r[0]?.closed);
      const what = `signal ${!!init}: ${JSON.stringify(reqs.map((r) => ({ closed: r.closed, cache: r.headers['cache-control'] })))}`;
      check(reqs.length === 2 && reqs[0].closed && !reqs[1].closed, `the loser's connection closed, the winner's answered: ${what}`);
      // A page's hedge skips the HTTP cache (its lock would hold it until the first answered): the
      // browser says so on the request (Fetch: a "no-store" request carries Cache-Control: no-cache).
      // (by arrival: the first request then the hedge, or the other way round when the first won)
      if (IN_PAGE) {
        const cache = JSON.stringify(reqs.map((r) => r.headers['cache-control'] ?? null));
        check(cache === JSON.stringify(done.won === 2 ? [null, 'no-cache'] : ['no-cache', null]), `cache: ${what}`);
      }
    }
  },

  async "failover: a retry goes to the other origin, without the request's credentials"({ withBackoff, failover }, a, b) {
    const p = path('fo');
    await a.script(p, [{ status: 503 }]);
    await b.script(p, [{ status: 200, body: 'from b' }]);
    let done;
    const f = withBackoff(fetch, { baseMs: 1, endpoints: failover([a.base, b.base]), onDone: (d) => (done = d) });
    const res = await f(`${a.base}${p}?q=1`, { headers: { authorization: 'Bearer token-for-A', 'x-keep': 'kept' } });
    check(res.status === 200 && (await res.text()) === 'from b', `status ${res.status}`);
    check(done.endpoint === b.base && done.attempts === 2, JSON.stringify(done));
    const [[ra], [rb]] = [await a.requests(p), await b.requests(p)];
    check(ra?.headers.authorization === 'Bearer token-for-A', `its own origin: ${JSON.stringify(ra?.headers)}`);
    check(rb && rb.headers.authorization === undefined && rb.headers['x-keep'] === 'kept', `the other: ${JSON.stringify(rb?.headers)}`);
    check(rb.url === `${p}?q=1`, `path and query kept: ${rb.url}`);
  },
};

/** Runs the smokes against the servers' `bases`; returns failures as strings. */
export async function hedgeSmokes(lib, bases) {
  const [a, b] = bases.map(control);
  const failures = [];
  for (const [name, fn] of Object.entries(SMOKES)) {
    try {
      await fn(lib, a, b);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    }
  }
  return failures;
}
