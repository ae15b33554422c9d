// Quotas against an API that publishes its limits (wasm-backoff/quota), in
// virtual time (the package's own clock, wasm-backoff/testing), with the
// shipped package's real code. The API is scripted: per key, a requests-
// and a tokens-per-minute budget that refills continuously up to the limit
// (Anthropic's and OpenAI's model); a request that finds its budget short
// gets a 429 with `retry-after-ms` (when it would fit), else it spends one
// request and its tokens (the prompt plus `max_tokens`, counted before it
// answers, as OpenAI does); every answer carries OpenAI's
// `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`. Latency is
// seeded, 200–800 ms, half before the budget is counted, half after.
//
// Compared, on the same calls: `withBackoff(fetch)` with the package's
// defaults (the server's wait honoured, 5 attempts), and the same with
// `limit: quota({ rpm, tpm, cost })` set to the published limits. Counted:
// the 429s the API sent, the calls that failed for good, and the goodput:
// what the successful calls spent of the limit that binds (requests or
// tokens), over what the API allows in the run (its full budget at the
// start plus its refill until the last call ended).
//
// The shapes: a burst (every call at once), a steady load over the limit
// (calls at 1.5× what the limit allows, for 10 minutes), and two clients
// sharing one API key, each with its own quota (the headers keep each in
// step with the other's spending), at 0.75× each.
//
//   node bench/quota.mjs      after the package is built (pkg/); prints the table and writes bench/QUOTA.md
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { withBackoff } from 'wasm-backoff';
import { quota } from 'wasm-backoff/quota';
import { virtualClock } from 'wasm-backoff/testing';
import { mulberry32 as random } from '../js/testing/random.js';

/** The published limits, per key. */
const RPM = 60;
const TPM = 40_000;
/** A call's tokens: a prompt of 200–600 and max_tokens 300 (mean 700: TPM binds, at ~57 calls a minute). */
const MAX_TOKENS = 300;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** A duration as OpenAI writes it (`1.234s`). */
const dur = (ms) => `${(Math.max(0, ms) / 1000).toFixed(3)}s`;

/**
 * The scripted API: `fetch` and what it counted. One budget per key (the
 * body's `model`), continuous refill up to the limit.
 * @param {() => number} rnd
 */
function api(rnd) {
  const keys = new Map();
  const counts = { sent: 0, throttled: 0, ok: 0, okTokens: 0, start: Date.now(), end: 0 };
  const budget = (k) => {
    let b = keys.get(k);
    if (!b) keys.set(k, (b = { req: RPM, tok: TPM, at: Date.now() }));
    const dt = Date.now() - b.at;
    b.req = Math.min(RPM, b.req + (dt * RPM) / 60_000);
    b.tok = Math.min(TPM, b.tok + (dt * TPM) / 60_000);
    b.at = Date.now();
    return b;
  };
  const headers = (b) => ({
    'x-ratelimit-limit-requests': String(RPM),
    'x-ratelimit-remaining-requests': String(Math.max(0, Math.floor(b.req))),
    'x-ratelimit-reset-requests': dur(((RPM - b.req) * 60_000) / RPM),
    'x-ratelimit-limit-tokens': String(TPM),
    'x-ratelimit-remaining-tokens': String(Math.max(0, Math.floor(b.tok))),
    'x-ratelimit-reset-tokens': dur(((TPM - b.tok) * 60_000) / TPM),
  });
  const fetch = async (_input, init) => {
    const latency = 200 + rnd() * 600;
    await sleep(latency / 2);
    counts.sent++;
    const { model, prompt_tokens: prompt, max_tokens: max } = JSON.parse(init.body);
    const cost = prompt + max;
    const b = budget(model);
    if (b.req < 1 || b.tok < cost) {
      counts.throttled++;
      const wait = Math.max(((1 - b.req) * 60_000) / RPM, ((cost - b.tok) * 60_000) / TPM, 0);
      await sleep(latency / 2);
      return new Response('{"error":"rate_limit"}', { status: 429, headers: { ...headers(b), 'retry-after-ms': String(Math.ceil(wait)) } });
    }
    b.req -= 1;
    b.tok -= cost;
    const h = headers(b);
    await sleep(latency / 2);
    counts.ok++;
    counts.okTokens += cost;
    counts.end = Math.max(counts.end, Date.now());
    return new Response('{"choices":[]}', { status: 200, headers: h });
  };
  return { fetch, counts };
}

/** The calls of a shape: [start ms, prompt tokens] each, seeded. */
const SHAPES = {
  burst: (rnd) => Array.from({ length: 300 }, () => [0, 200 + Math.floor(rnd() * 400)]),
  'steady, 1.5× the limit': (rnd) => {
    // (TPM binds: 40 000 / 700 ≈ 57 calls a minute; 1.5× that, for 10 minutes)
    const perMs = (1.5 * TPM) / (MAX_TOKENS + 400) / 60_000;
    const calls = [];
    for (let t = 0; t < 600_000; t += -Math.log(1 - rnd()) / perMs) calls.push([t, 200 + Math.floor(rnd() * 400)]);
    return calls;
  },
};

/**
 * Runs `calls` through `clients` (each call to client i % n), in virtual
 * time; resolves with the API's counts and the calls that failed for good.
 */
async function run(calls, clients, rnd) {
  const clock = virtualClock({ now: 1_750_000_000_000 });
  try {
    const server = api(rnd);
    const made = clients.map((options) => withBackoff(server.fetch, options()));
    let failed = 0;
    const all = calls.map(async ([at, prompt], i) => {
      await sleep(at);
      const body = JSON.stringify({ model: 'gpt-x', prompt_tokens: prompt, max_tokens: MAX_TOKENS });
      // (each call seeded: the same jitter in every run)
      const res = await made[i % made.length]('https://api.test/v1/chat/completions', { method: 'POST', body }, { seed: i + 1 }).catch(
        () => undefined,
      );
      if (res?.status !== 200) failed++;
      await res?.arrayBuffer();
    });
    await clock.run(Promise.all(all), { maxMs: 24 * 3_600_000 });
    const c = server.counts;
    const minutes = (c.end - c.start) / 60_000;
    // (what the API allows in the run: its full budget at the start, and its refill until the last success)
    const allowReq = RPM + RPM * minutes;
    const allowTok = TPM + TPM * minutes;
    const goodput = Math.max(c.ok / allowReq, c.okTokens / allowTok);
    return { calls: calls.length, sent: c.sent, throttled: c.throttled, failed, goodput, minutes };
  } finally {
    clock.uninstall();
  }
}

const cost = (r) => (r.json?.prompt_tokens ?? 0) + (r.json?.max_tokens ?? 0);
const base = { idempotencyKey: true };
const POLICIES = {
  'withBackoff (defaults)': (n) => Array.from({ length: n }, () => () => ({ ...base })),
  'withBackoff + quota()': (n) => Array.from({ length: n }, () => () => ({ ...base, limit: quota({ rpm: RPM, tpm: TPM, cost }) })),
};

/** Every shape and policy: rows of the table. */
export async function measure() {
  const rows = [];
  const shapes = [
    ...Object.entries(SHAPES).map(([name, make]) => [name, make, 1]),
    ['two clients, one key, 0.75× each', SHAPES['steady, 1.5× the limit'], 2],
  ];
  for (const [shape, make, n] of shapes) {
    const results = {};
    for (const [name, clients] of Object.entries(POLICIES)) {
      const calls = make(random(7));
      const cs = clients(n);
      // (one quota per client, made once: shared by all its calls)
      const fixed = cs.map((f) => {
        const o = f();
        return () => o;
      });
      results[name] = await run(calls, fixed, random(11));
    }
    const [off, on] = Object.values(results);
    for (const [name, r] of Object.entries(results)) {
      rows.push({
        shape,
        name,
        ...r,
        ratio429: r === on ? on.throttled / Math.max(1, off.throttled) : 1,
        goodRatio: r === on ? on.goodput / off.goodput : 1,
      });
    }
  }
  return rows;
}

/** The table, in markdown. */
export function table(rows) {
  const lines = [
    `| shape | client | calls | requests sent | 429s | failed for good | goodput (of what the limit allows) |`,
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    lines.push(`| ${r.shape} | ${r.name} | ${r.calls} | ${r.sent} | ${r.throttled} | ${r.failed} | ${(r.goodput * 100).toFixed(1)} % |`);
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = await measure();
  const t = table(rows);
  console.log(t);
  const check = rows
    .filter((r) => r.name.includes('quota'))
    .map((r) => `- ${r.shape}: ${r.ratio429.toFixed(3)}× the 429s, ${r.goodRatio.toFixed(3)}× the goodput of the defaults`);
  console.log(check.join('\n'));
  const md = [
    '# Quotas against an API with published limits',
    '',
    `Generated by \`node bench/quota.mjs\` (virtual time; the scripted API: ${RPM} requests and ${TPM.toLocaleString('en')} tokens per minute per key, refilled continuously; a call spends its prompt (200–600 tokens) plus \`max_tokens\` ${MAX_TOKENS}; latency 200–800 ms; OpenAI's rate-limit headers on every answer, \`retry-after-ms\` on a 429). Goodput: what the successful calls spent of the binding limit, over what the API allows in the run (its full budget at the start plus its refill).`,
    '',
    t,
    '',
    'With `limit: quota(...)`, against the defaults on the same calls:',
    '',
    check.join('\n'),
    '',
  ].join('\n');
  writeFileSync(new URL('QUOTA.md', import.meta.url), md);
}
