// @ts-check
// The rate-limit headers of the APIs that publish requests- and
// tokens-per-minute limits, read for a quota (js/quota/index.js):
//
//   OpenAI      x-ratelimit-limit-requests, x-ratelimit-remaining-requests,
//               x-ratelimit-reset-requests (a duration: `1s`, `6m0s`,
//               `20ms`, `1h2m3.5s`); the same with -tokens
//   Anthropic   anthropic-ratelimit-requests-limit, -requests-remaining,
//               -requests-reset (an RFC 3339 time); the same with -tokens
//               (the most restrictive token limit in effect), else
//               -input-tokens
//
// The first family present wins. A value that does not parse is absent.

/**
 * What an answer says of one budget: its limit, what remains, and the ms
 * until it is full again.
 * @typedef {{ limit?: number, remaining?: number, resetMs?: number }} Said
 */

/** A count: a non-negative integer (digits only). @param {string | null} v */
const count = (v) => (v !== null && /^\s*\d{1,15}\s*$/.test(v) ? Number(v) : undefined);

/** The ms of each duration unit OpenAI's resets use. */
const UNITS = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/**
 * A duration as OpenAI writes it (`1s`, `6m0s`, `20ms`, `1h2m3.5s`; a bare
 * number is seconds), in ms.
 * @param {string | null} v
 */
export function duration(v) {
  if (v === null) return undefined;
  const s = v.trim();
  if (/^\d+(?:\.\d+)?$/.test(s)) return Number(s) * 1000;
  if (!/^(?:\d+(?:\.\d+)?(?:ms|h|m|s))+$/.test(s)) return undefined;
  let ms = 0;
  for (const [, n, u] of s.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) ms += Number(n) * UNITS[/** @type {keyof typeof UNITS} */ (u)];
  return ms;
}

/**
 * An RFC 3339 time, as ms from the answer's own `Date` (the server's clock:
 * no skew with ours), or from `now` when it has none.
 * @param {string | null} v
 * @param {{ get(name: string): string | null }} h
 * @param {number} now
 */
function until(v, h, now) {
  if (v === null || !/^\d{4}-\d\d-\d\dT/.test(v.trim())) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  const date = Date.parse(h.get('date') ?? '');
  return Math.max(0, at - (Number.isNaN(date) ? now : date));
}

/**
 * What headers `h` say of the requests and the tokens, or undefined for
 * either when they say nothing of it.
 * @param {{ get(name: string): string | null }} h
 * @param {number} now
 * @returns {{ requests?: Said, tokens?: Said }}
 */
export function said(h, now) {
  /** @param {string} k @param {boolean} anthropic @returns {Said | undefined} */
  const of = (k, anthropic) => {
    const [limit, remaining, reset] = anthropic
      ? ['limit', 'remaining', 'reset'].map((x) => h.get(`anthropic-ratelimit-${k}-${x}`))
      : ['limit', 'remaining', 'reset'].map((x) => h.get(`x-ratelimit-${x}-${k}`));
    if (limit === null && remaining === null && reset === null) return undefined;
    return { limit: count(limit), remaining: count(remaining), resetMs: anthropic ? until(reset, h, now) : duration(reset) };
  };
  const openai = { requests: of('requests', false), tokens: of('tokens', false) };
  if (openai.requests || openai.tokens) return openai;
  return { requests: of('requests', true), tokens: of('tokens', true) ?? of('input-tokens', true) };
}
