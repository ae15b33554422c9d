// Scenarios of the waits the outcome chooses (issue 26), against the real
// scripted server (tests/server/scripted.mjs), shared by every runtime that
// runs them (Node, a Chromium page, workerd, Deno and Bun via
// tests/runtimes/run.mjs): the `delay` hook, the
// throttling base, `x-should-retry`, a wait carried by an error in
// retry(fn), pacing after `RateLimit-Remaining: 0`, `retryOnTimeout` and
// `retryAfterOverMax`. Real waits stay below half a second; times are
// measured by the server (`at` of its request log) where they matter.
import { fetchScenarios } from './fetch-checks.mjs';

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

const FAST = { baseMs: 5, maxDelayMs: 20 };

let unique = 0;
const path = (name) => `/${name}-${Date.now().toString(36)}-${unique++}`;

/** ms between the server's first two requests to `p`. */
async function gap(ctl, p) {
  const [a, b] = await ctl.requests(p);
  return b.at - a.at;
}

/** name -> async (lib, ctl) => void */
export const WAIT_SCENARIOS = {
  async 'the delay hook chooses the wait (told the server’s wait and the proposal); false gives up'({ fetchWithBackoff }, ctl) {
    const p = path('delay');
    await ctl.script(p, [
      { status: 503, headers: { 'retry-after': '30' } },
      { status: 200, body: 'ok' },
    ]);
    const infos = [];
    const t0 = Date.now();
    const res = await fetchWithBackoff(ctl.base + p, undefined, {
      ...FAST,
      delay: (info) => (infos.push({ ...info, response: info.response?.status }), 20),
    });
    check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
    check(Date.now() - t0 < 5000, `waited the hook's 20 ms, not Retry-After's 30 s: ${Date.now() - t0} ms`);
    const [i] = infos;
    check(infos.length === 1 && i.attempt === 1 && i.status === 503 && i.response === 503, JSON.stringify(infos));
    check(
      i.retryAfterMs === 30_000 && i.delayMs >= 30_000 && i.delayMs <= 31_000,
      `told the server's wait and the proposal: ${JSON.stringify(i)}`,
    );
    check((await gap(ctl, p)) >= 15, 'the wait chosen was waited');

    const q = path('delay-no');
    await ctl.script(q, [{ status: 503 }, { status: 200 }]);
    let done;
    const last = await fetchWithBackoff(ctl.base + q, undefined, { ...FAST, delay: () => false, onDone: (d) => (done = d) });
    check(last.status === 503 && (await ctl.count(q)) === 1 && done.reason === 'vetoed', `gave up: ${done?.reason}`);

    const r = path('delay-bad');
    await ctl.script(r, [{ status: 503 }, { status: 200 }]);
    const bad = await fetchWithBackoff(ctl.base + r, undefined, { ...FAST, delay: () => 'soon', onDone: (d) => (done = d) }).catch(
      (e) => e,
    );
    check(bad instanceof TypeError && bad.message.startsWith('delay must return'), `${bad}`);
    check(done.reason === 'hook-error' && (await ctl.count(r)) === 1, done.reason);
  },

  async 'throttleBaseMs: a 429 waits on the throttling base, a 500 on the schedule’s'({ fetchWithBackoff }, ctl) {
    const p = path('throttle');
    await ctl.script(p, [{ status: 500 }, { status: 429 }, { status: 200 }]);
    const waits = [];
    const res = await fetchWithBackoff(ctl.base + p, undefined, {
      baseMs: 2,
      jitter: 'none',
      throttleBaseMs: 100,
      onRetry: (i) => waits.push([i.status, i.delayMs]),
    });
    check(res.status === 200, `status ${res.status}`);
    // Attempt 1 (500): 2 ms; attempt 2 (429): the second step on base 100 (factor 2).
    check(JSON.stringify(waits) === '[[500,2],[429,200]]', JSON.stringify(waits));
    const [, b, c] = await ctl.requests(p);
    check(c.at - b.at >= 190, `the throttled retry waited ${c.at - b.at} ms`);
  },

  async 'x-should-retry: true retries a 404, false stops a 503'({ fetchWithBackoff }, ctl) {
    const p = path('advice-yes');
    await ctl.script(p, [{ status: 404, headers: { 'x-should-retry': 'true' } }, { status: 200 }]);
    const yes = await fetchWithBackoff(ctl.base + p, undefined, FAST);
    check(yes.status === 200 && (await ctl.count(p)) === 2, `advised retry: ${yes.status}`);
    const q = path('advice-no');
    await ctl.script(q, [{ status: 503, headers: { 'x-should-retry': 'false', 'retry-after': '0' } }, { status: 200 }]);
    let done;
    const no = await fetchWithBackoff(ctl.base + q, undefined, { ...FAST, onDone: (d) => (done = d) });
    check(no.status === 503 && (await ctl.count(q)) === 1 && done.reason === 'not-retryable', `advised stop: ${done?.reason}`);
    // The caller's shouldRetry still has the last word.
    const r = path('advice-forced');
    await ctl.script(r, [{ status: 503, headers: { 'x-should-retry': 'false' } }, { status: 200 }]);
    const forced = await fetchWithBackoff(ctl.base + r, undefined, {
      ...FAST,
      shouldRetry: ({ status }) => (status === 503 ? true : undefined),
    });
    check(forced.status === 200 && (await ctl.count(r)) === 2, 'shouldRetry over the advice');
  },

  async 'retry(fn) honours the wait an error carries (its headers, as the SDKs throw) and its x-should-retry'({ retry }, ctl) {
    const p = path('carried');
    await ctl.script(p, [
      { status: 429, headers: { 'retry-after-ms': '150' } },
      { status: 200, body: 'ok' },
    ]);
    const call = async ({ signal }) => {
      const r = await fetch(ctl.base + p, { signal });
      if (r.ok) return r.text();
      await r.body?.cancel();
      throw Object.assign(new Error(`status ${r.status}`), { status: r.status, headers: r.headers });
    };
    const retried = [];
    const v = await retry(call, { ...FAST, onRetry: (i) => retried.push([i.status, i.retryAfterMs, i.delayMs]) });
    check(v === 'ok', String(v));
    check(retried.length === 1 && retried[0][0] === 429 && retried[0][1] === 150 && retried[0][2] >= 150, JSON.stringify(retried));
    check((await gap(ctl, p)) >= 140, `waited the carried 150 ms: ${await gap(ctl, p)}`);
    // A plain record of headers (the OpenAI/Anthropic v4 shape), saying not to retry.
    let n = 0;
    let done;
    const e = await retry(
      () => {
        n++;
        throw Object.assign(new Error('overloaded'), { status: 529, headers: { 'X-Should-Retry': 'false' } });
      },
      { ...FAST, onDone: (d) => (done = d) },
    ).catch((x) => x);
    check(e.message === 'overloaded' && n === 1 && done.reason === 'not-retryable', `${n} attempts, ${done?.reason}`);
    // retryAfterMs over maxRetryAfterMs: rejected at once.
    n = 0;
    await retry(
      () => {
        n++;
        throw Object.assign(new Error('later'), { retryAfterMs: 90_000 });
      },
      { ...FAST, onDone: (d) => (done = d) },
    ).catch(() => {});
    check(n === 1 && done.reason === 'retry-after', `${n} attempts, ${done?.reason}`);
  },

  async 'a success saying RateLimit-Remaining: 0 paces the client’s next call to that origin until the reset'({ withBackoff }, ctl) {
    const p = path('paced');
    await ctl.script(p, [{ status: 200, headers: { 'x-ratelimit-remaining': '0', 'retry-after-ms': '250' } }, { status: 200 }]);
    const f = withBackoff(fetch, FAST);
    await (await f(ctl.base + p)).text();
    await (await f(ctl.base + p)).text();
    check((await gap(ctl, p)) >= 240, `the next call waited for the reset: ${await gap(ctl, p)} ms`);
    // pace: false, and a plain fetchWithBackoff-like client per call, do not.
    const q = path('unpaced');
    // (a 3 s reset: two calls in a row stay far below it on a loaded machine)
    await ctl.script(q, [{ status: 200, headers: { 'x-ratelimit-remaining': '0', 'retry-after-ms': '3000' } }, { status: 200 }]);
    const g = withBackoff(fetch, { ...FAST, pace: false });
    await (await g(ctl.base + q)).text();
    await (await g(ctl.base + q)).text();
    check((await gap(ctl, q)) < 2000, `pace: false: ${await gap(ctl, q)} ms`);
    // A reset past maxRetryAfterMs is not waited (the next call goes; the server's answer decides).
    const m = path('paced-over-max');
    await ctl.script(m, [{ status: 200, headers: { 'x-ratelimit-remaining': '0', 'retry-after-ms': '3000' } }, { status: 200 }]);
    const capped = withBackoff(fetch, { ...FAST, maxRetryAfterMs: 200 });
    await (await capped(ctl.base + m)).text();
    await (await capped(ctl.base + m)).text();
    check((await gap(ctl, m)) < 2000, `a reset past maxRetryAfterMs: ${await gap(ctl, m)} ms`);
    // An abort while held rejects at once with its reason.
    const r = path('paced-abort');
    await ctl.script(r, [{ status: 200, headers: { 'x-ratelimit-remaining': '0', 'retry-after-ms': '5000' } }]);
    const h = withBackoff(fetch, FAST);
    await (await h(ctl.base + r)).text();
    const ac = new AbortController();
    const reason = new Error('stop');
    setTimeout(() => ac.abort(reason), 20);
    const t0 = Date.now();
    const e = await h(ctl.base + r, { signal: ac.signal }).catch((x) => x);
    check(e === reason && Date.now() - t0 < 2000 && (await ctl.count(r)) === 1, `aborted while held: ${e}`);
  },

  async 'with a gate, the pause after RateLimit-Remaining: 0 holds the target’s next calls'({ withBackoff, createGate }, ctl) {
    const p = path('paced-gate');
    await ctl.script(p, [{ status: 200, headers: { ratelimit: '"default";r=0', 'retry-after-ms': '250' } }, { status: 200 }]);
    const gate = createGate({ ...FAST, key: () => 'api' });
    const f = withBackoff(fetch, { ...FAST, gate });
    await (await f(ctl.base + p)).text();
    await Promise.all([f(ctl.base + p), f(ctl.base + p)].map(async (x) => (await x).text()));
    const reqs = await ctl.requests(p);
    check(
      reqs.length === 3 && reqs[1].at - reqs[0].at >= 240 && reqs[2].at - reqs[0].at >= 240,
      JSON.stringify(reqs.map((r) => r.at - reqs[0].at)),
    );
    gate.free();
  },

  async 'retryOnTimeout: false returns the first timeout; retryAfterOverMax: clamp waits the maximum'({ fetchWithBackoff }, ctl) {
    const p = path('timeout-once');
    await ctl.script(p, [{ hang: true }, { status: 200 }]);
    let done;
    const e = await fetchWithBackoff(ctl.base + p, undefined, {
      ...FAST,
      timeoutMs: 200,
      retryOnTimeout: false,
      onDone: (d) => (done = d),
    }).catch((x) => x);
    // (≤ 1: a loaded machine may time out before the request arrives; a retry would have met the 200)
    const n = await ctl.count(p);
    check(
      e?.name === 'TimeoutError' && n <= 1 && done.reason === 'not-retryable' && done.attempts === 1,
      `${e}: ${done?.reason}, ${n} sent`,
    );

    const q = path('clamp');
    await ctl.script(q, [{ status: 503, headers: { 'retry-after': '120' } }, { status: 200 }]);
    const infos = [];
    const res = await fetchWithBackoff(ctl.base + q, undefined, {
      ...FAST,
      maxRetryAfterMs: 150,
      retryAfterOverMax: 'clamp',
      onRetry: (i) => infos.push(i.retryAfterMs),
    });
    check(res.status === 200 && infos[0] === 150, `clamped to the maximum: ${infos}`);
    const g = await gap(ctl, q);
    check(g >= 140 && g < 2000, `waited ${g} ms`);
  },

  async 'every new option is checked: a TypeError or RangeError naming it, nothing sent'({ fetchWithBackoff, retry }, ctl) {
    const p = path('bad-waits');
    await ctl.script(p, [{ status: 200 }]);
    const cases = [
      [{ delay: 5 }, TypeError, 'delay'],
      [{ throttleBaseMs: '1s' }, TypeError, 'throttleBaseMs'],
      [{ throttleBaseMs: -1 }, RangeError, 'throttleBaseMs'],
      [{ throttleBaseMs: Infinity }, RangeError, 'throttleBaseMs'],
      [{ retryOnTimeout: 'no' }, TypeError, 'retryOnTimeout'],
      [{ retryAfterOverMax: 'wait' }, RangeError, 'retryAfterOverMax'],
      [{ retryAfterOverMax: true }, TypeError, 'retryAfterOverMax'],
      [{ pace: 0 }, TypeError, 'pace'],
    ];
    for (const [o, E, name] of cases) {
      const e = await fetchWithBackoff(ctl.base + p, undefined, o).catch((x) => x);
      check(e instanceof E && e.message.startsWith(name), `${JSON.stringify(o)}: ${e}`);
      const r = await retry(() => 1, o).catch((x) => x);
      check(r instanceof E && r.message.startsWith(name), `retry ${JSON.stringify(o)}: ${r}`);
    }
    check((await ctl.count(p)) === 0, 'nothing sent');
  },
};

/** Runs the scenarios (all, or those whose name passes `filter`); returns failures as strings. */
export const waitScenarios = (lib, base, filter = () => true) => fetchScenarios(lib, base, filter, WAIT_SCENARIOS);
