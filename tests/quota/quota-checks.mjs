// The runtime smokes of wasm-backoff/quota against the real scripted server
// (control API `a`), run by Node (quota.node.test.mjs) and a Chromium page
// (tests/browser/around.js: the rate-limit headers read through CORS).
// Outcomes and what the server saw; the pace and the waits are
// quota.node.test.mjs's, on virtual time.
import { check, path, runSmokes } from '../auth/around.mjs';

/** name -> async (lib, a) => void */
export const SMOKES = {
  async "the answers' headers set the budget: past what remains, a call that cannot wait is refused, nothing sent"(
    { withBackoff, quota, QuotaError },
    a,
  ) {
    const p = path('quota');
    await a.script(p, {
      status: 200,
      body: '{}',
      headers: { 'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '30s' },
    });
    const q = quota({ key: (r) => r.json?.model ?? '' });
    const post = withBackoff(fetch, { limit: q, idempotencyKey: true });
    const body = JSON.stringify({ model: 'small' });
    const res = await post(a.base + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    check(res.status === 200, `status ${res.status}`);
    const s = q.state('small');
    // (none left when it answered; a little refilled since, in real time)
    check(s?.rpm === 2 && s.requests < 0.1, JSON.stringify(s));
    const e = await post(a.base + p, { method: 'POST', body }, { maxElapsedMs: 1000 }).catch((x) => x);
    check(e instanceof QuotaError && e.key === 'small' && e.retryAfterMs > 1000, String(e));
    check((await a.count(p)) === 1, 'nothing sent for the refused call');
  },
};

/** Runs the smokes named in `only` (every one without it) against control API `a`; resolves with the failures. */
export const quotaSmokes = (lib, a, only) => runSmokes(SMOKES, lib, a, only);
