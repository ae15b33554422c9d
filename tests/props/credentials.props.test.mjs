// Property (issue 34): a request's credentials reach only its own origin,
// unless configured otherwise. withBackoff with random endpoint lists
// (wasm-backoff/failover: one to three of three scripted servers, origins
// that differ by port, each taking the others' credentials or not, weights),
// requests for listed and unlisted origins (a URL, a string, a Request),
// Authorization, Cookie and Proxy-Authorization in init, in a Request, in
// both, set by beforeRetry (headers, or a Request of its own for any
// origin), with attemptHeader, idempotencyKey, hedge and a gate, against
// servers whose statuses, resets and redirects (to any of the three) make
// the call move between endpoints.
// Every request a server saw carries only credentials of its own origin,
// or of a listed origin when that server is an endpoint that opted in.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { withBackoff } from 'wasm-backoff';
import { failover } from 'wasm-backoff/failover';
import { hedge } from 'wasm-backoff/hedge';
import { createGate } from 'wasm-backoff/gate';
import { startScripted } from '../server/scripted.mjs';
import { property } from './props.mjs';

/** @type {any[]} */
let servers = [];
before(async () => {
  servers = await Promise.all([startScripted(), startScripted(), startScripted()]);
});
after(() => Promise.all(servers.map((s) => s.close())));

const NAMES = ['A', 'B', 'C'];
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

/** The credential headers of origin `o` (0, 1, 2): each value names it. */
const creds = (kinds, o) => {
  /** @type {Record<string, string>} */
  const h = { 'x-keep': 'kept' };
  if (kinds.includes('authorization')) h.authorization = `Bearer for-${NAMES[o]}`;
  if (kinds.includes('cookie')) h.cookie = `session=for-${NAMES[o]}`;
  if (kinds.includes('proxy-authorization')) h['proxy-authorization'] = `Basic for-${NAMES[o]}`;
  return h;
};

/** A server's answers for the case's path. */
const script = (g) => {
  const step = () =>
    g.weighted([
      [3, () => ({ status: g.pick([503, 500, 502]) })],
      [1, () => ({ reset: true })],
      [1, () => ({ status: 429, headers: { 'retry-after-ms': '1' } })],
      [0.5, () => ({ status: 401 })],
      [2, () => ({ status: 200, body: 'ok' })],
      [1, () => ({ status: g.pick([200, 503]), delayMs: g.int(5, 40) })],
      // (a redirect to another server's same path: fetch's own rules then)
      [0.7, () => ({ redirect: g.int(0, 2), status: g.pick([302, 307]) })],
    ])();
  return [
    ...g.many(g.int(0, 4), step),
    g.weighted([
      [3, { status: 200, body: 'ok' }],
      [1, { status: 503 }],
    ]),
  ];
};

let unique = 0;

property('credentials reach only their own origin, or an endpoint that opted in', {
  cases: 120,
  generate(g) {
    const order = [0, 1, 2].sort(() => g.rand() - 0.5);
    const listed = g.chance(0.15) ? [] : order.slice(0, g.int(1, 3));
    const kinds = CREDENTIALS.filter(() => g.chance(0.7));
    return {
      endpoints: listed.map((i) => ({ i, credentials: g.chance(0.4), ...(g.chance(0.2) && { weight: g.pick([1, 3]) }) })),
      target: g.int(0, 2),
      input: g.pick(['string', 'URL', 'Request']),
      carrier: g.pick(['init', 'Request', 'both', 'beforeRetry headers', 'beforeRetry Request']),
      /** beforeRetry's Request: for this origin. */
      other: g.int(0, 2),
      kinds: kinds.length ? kinds : ['authorization'],
      scripts: [script(g), script(g), script(g)],
      options: {
        maxAttempts: g.int(1, 6),
        baseMs: g.int(1, 3),
        ...(g.chance(0.2) && { retryOn: [401, 500, 502, 503] }),
        ...(g.chance(0.2) && { attemptHeader: 'x-attempt' }),
        ...(g.chance(0.2) && { idempotencyKey: true }),
      },
      hedge: g.chance(0.15) ? g.int(2, 20) : undefined,
      gate: g.chance(0.2),
    };
  },
  async check(c) {
    const p = `/creds-${unique++}`;
    const origin = (i) => servers[i].url;
    const steps = (s) =>
      s.map(({ redirect, ...step }) => (redirect === undefined ? step : { ...step, headers: { location: `${origin(redirect)}${p}?r=1` } }));
    for (const [i, s] of c.scripts.entries()) servers[i].script(p, steps(s));
    const url = `${origin(c.target)}${p}?q=1`;
    const mine = creds(c.kinds, c.target);
    const gate = c.gate ? createGate({ baseMs: 5, maxDelayMs: 5, jitter: 'none', consecutive: 1 }) : undefined;
    /** @type {Record<string, any>} */
    const options = { ...c.options };
    if (c.endpoints.length) options.endpoints = failover(c.endpoints.map(({ i, ...e }) => ({ url: origin(i), ...e })));
    if (c.hedge !== undefined) options.hedge = hedge({ delayMs: c.hedge });
    if (gate) options.gate = gate;
    if (c.carrier === 'beforeRetry headers') options.beforeRetry = () => creds(c.kinds, c.target);
    if (c.carrier === 'beforeRetry Request')
      options.beforeRetry = () => new Request(`${origin(c.other)}${p}?q=2`, { headers: creds(c.kinds, c.other) });
    const inInit = c.carrier === 'init' || c.carrier === 'both';
    const inReq = c.carrier === 'Request' || c.carrier === 'both';
    const input =
      c.input === 'Request' || inReq ? new Request(url, inReq ? { headers: mine } : undefined) : c.input === 'URL' ? new URL(url) : url;
    const f = withBackoff(fetch, options);
    let outcome;
    try {
      const res = await f(input, inInit ? { headers: mine } : undefined);
      await res.body?.cancel();
      outcome = `${res.status}`;
    } catch (e) {
      outcome = `rejected ${e?.name}`;
    } finally {
      gate?.free();
    }
    // What each server saw: credentials of its own origin, or of a listed one where it opted in.
    const listed = new Set(c.endpoints.map((e) => e.i));
    let away = 0;
    for (const [s, srv] of servers.entries()) {
      const optedIn = c.endpoints.some((e) => e.i === s && e.credentials);
      for (const r of srv.requests.filter((x) => x.path === p)) {
        for (const h of CREDENTIALS) {
          const v = r.headers[h];
          if (v === undefined) continue;
          const o = NAMES.indexOf(/for-([ABC])$/.exec(v)?.[1] ?? '');
          assert.ok(o >= 0, `${NAMES[s]} got ${h}: ${v}, which the caller never set`);
          if (o === s) continue;
          assert.ok(
            optedIn && listed.has(o),
            `${NAMES[s]}${optedIn ? ' (opted in)' : ''} got ${h} of ${NAMES[o]}${listed.has(o) ? '' : ' (not listed)'}`,
          );
          away++;
        }
      }
    }
    return `${outcome}${away ? ', taken by an opted-in endpoint' : ''}`;
  },
});
