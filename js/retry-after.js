// @ts-check
// `Retry-After` (RFC 9110 §10.2.3): delta-seconds or an HTTP-date in any of
// the three formats a recipient must accept (IMF-fixdate, RFC 850, asctime),
// turned into a wait in ms. It is JavaScript because the header is a
// JavaScript string and the wasm boundary carries numbers only. The
// semantics are those of the Rust parser (core/src/retry_after.rs), to the
// bit; both are tested against the same vectors,
// core/tests/retry_after_vectors.json. Every regular expression here runs
// in linear time: a header has no length limit.
import { SERVER_WAIT_HEADERS, REMAINING_HEADERS } from './gen/boundary.js';

// The tokens (separators: space, comma, dash, colon) joined by single
// spaces, a first ' GMT ' token after the weekday taken out: the weekday
// (known prefix, letters only), then IMF-fixdate / RFC 850 `day Mon year h m s`
// or asctime `Mon day h m s year`.
const DATE = /^ (?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[A-Za-z]*( \d{1,4})? (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)((?: \d{1,4})+) $/;

/**
 * The wait a `Retry-After` value asks for, in ms from `nowMs` (Unix epoch
 * ms): Infinity for an absurd delta; undefined when absent, invalid (any
 * non-ASCII character included) or a date at or before `nowMs`. Never NaN,
 * never negative.
 * @param {unknown} value
 * @param {number} [nowMs]
 * @returns {number | undefined}
 */
export function parseRetryAfter(value, nowMs = Date.now()) {
  let v = String(value ?? '');
  // Printable ASCII and tabs only: then trim() removes spaces and tabs alone.
  if (!/^[\t -~]*$/.test(v)) return;
  v = v.trim();
  // delta-seconds, accumulated as the Rust does (it saturates to Infinity).
  if (/^\d+$/.test(v)) return [...v].reduce((a, c) => a * 10 + +c, 0) * 1e3;
  let s = ` ${v} `.replace(/[ ,:-]+/g, ' ');
  // GMT: required by IMF-fixdate and RFC 850, forbidden in asctime, once.
  const gmt = s !== (s = s.replace(/\b GMT /, ' '));
  const m = DATE.exec(s);
  if (!m) return;
  const [, a = '', mon, b] = m;
  let [, d, y, h, i, c, more] = (a + b).split(' ');
  if (!a === gmt || more || !c) return;
  if (!a) [y, h, i, c] = [c, y, h, i];
  // A leap second (60) is allowed. A two-digit year is the most recent one
  // no more than 50 years after the year of `nowMs` (in Rust's average years).
  if (y.length & 1 || +h > 23 || +i > 59 || +c > 60) return;
  let year = +y;
  if (y.length < 3) {
    const now = 1970 + Math.trunc(nowMs / 31556952e3);
    year += now - (now % 100);
    if (year > now + 50) year -= 100;
  }
  // setUTCFullYear, unlike Date.UTC, leaves years 0-99 alone. A day that
  // does not exist in its month (Feb 30, day 0) moves to another month; a
  // negative year is none, as in Rust (u32). Dates beyond JavaScript's range
  // (year 275760) are none, where Rust would read them: a clock that far on.
  const date = new Date(0);
  const t = date.setUTCFullYear(year, 'JanFebMarAprMayJunJulAugSepOctNovDec'.indexOf(mon) / 3, +d);
  if (year < 0 || date.getUTCDate() !== +d) return;
  const w = t + ((+h * 60 + +i) * 60 + +c) * 1e3 - nowMs;
  return w > 0 ? w : undefined;
}

/**
 * The wait a response's headers name, in ms from `nowMs`: the headers of
 * SERVER_WAIT_HEADERS (from the core), in its order: the ms headers
 * (`retry-after-ms` wins over a Retry-After beside it, as the OpenAI and
 * Anthropic SDKs read them), Retry-After, then the rate-limit headers in
 * seconds (`ratelimit`: its first `t` / `reset` parameter); the first that
 * names a wait wins (absent, invalid or past values fall through). Seconds
 * of 1e9 or more are a Unix time (GitHub's X-RateLimit-Reset), fewer a delta.
 * Tested against core/tests/server_wait_vectors.json, shared with the Rust
 * `server_wait`.
 * @param {{ get(name: string): string | null }} headers
 * @param {number} [nowMs]
 * @returns {number | undefined}
 */
export function serverWait(headers, nowMs = Date.now()) {
  let ms;
  for (const name of SERVER_WAIT_HEADERS) {
    if (ms !== undefined) break;
    /** @type {string | null | undefined} */
    let v = headers.get(name);
    if (name === 'retry-after') {
      ms = parseRetryAfter(v, nowMs);
      continue;
    }
    v = v?.replace(/^[\t ]+|[\t ]+$/g, '');
    if (name === 'ratelimit') v = /(?:^|[\t ,;])(?:t|reset)=(\d+)(?![^\t ,;])/.exec(v ?? '')?.[1];
    if (v && /^\d+(\.\d+)?$/.test(v)) {
      if (name.endsWith('ms')) ms = +v;
      else if (!v.includes('.')) ms = +v < 1e9 ? +v * 1e3 : +v * 1e3 > nowMs ? +v * 1e3 - nowMs : undefined;
    }
  }
  return ms;
}

/**
 * The wait until the window resets when a response says no request remains
 * (the core's `spent_wait`): the first of REMAINING_HEADERS present
 * (`RateLimit-Remaining`, `X-RateLimit-Remaining`, `RateLimit`'s `r` or
 * `remaining`) is all zeros, and `serverWait` names the reset; else
 * undefined. Tested against core/tests/server_wait_vectors.json ("spent").
 * @param {{ get(name: string): string | null }} headers
 * @param {number} [nowMs]
 */
export function spentWait(headers, nowMs) {
  for (const name of REMAINING_HEADERS) {
    let v = headers.get(name)?.replace(/^[\t ]+|[\t ]+$/g, '');
    if (name === 'ratelimit' && v != null) v = /(?:^|[\t ,;])(?:r|remaining)=(\d+)(?![^\t ,;])/.exec(v)?.[1];
    if (v != null) return /^0+$/.test(v) ? serverWait(headers, nowMs) : undefined;
  }
}

/**
 * The headers of a failed request as an error carries them: `get(name)`
 * (Headers, AxiosHeaders) or a plain record (any case; the OpenAI and
 * Anthropic SDKs' errors), else undefined. Shared by `carried` and the
 * query adapters (js/query/wait.js).
 * @param {any} h
 * @returns {{ get(name: string): string | null } | undefined}
 */
export function headersOf(h) {
  if (h == null || typeof h !== 'object') return;
  if (typeof h.get === 'function') return h;
  return {
    get: (name) => {
      for (const k in h) if (k.toLowerCase() === name && h[k] != null) return String(h[k]);
      return null;
    },
  };
}

/**
 * The wait a thrown error carries, in ms: its `retryAfterMs` (a number >=
 * 0), else what `serverWait` reads in its `headers` or `response.headers`
 * (`headersOf`); and the headers, for the server's advice.
 * @param {any} e
 * @returns {[number | undefined, { get(name: string): string | null } | undefined]}
 */
export function carried(e) {
  const h = headersOf(e?.headers ?? e?.response?.headers);
  const ms = e?.retryAfterMs;
  return [typeof ms === 'number' && ms >= 0 ? ms : h && serverWait(h), h];
}
