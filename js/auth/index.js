// @ts-check
// `auth()` (`wasm-backoff/auth`, the `auth` option of the fetch driver): a
// header set on every attempt from `header()`, and one `refresh()` shared by
// every call that meets a 401 while it runs (single flight). The refresh
// and the request sent again after it are inside one attempt of the engine
// (js/auth/job.js): the loop, its schedule, `maxAttempts` and the budget do
// not see them.
//
// The refresh's state is the auth() value's, shared by every call given it
// (js/auth/refresh.js: its generation, the refresh in flight). A refresh
// that rejects, or does not settle within `timeoutMs`, rejects every call
// waiting on it with an AuthRefreshError (its `cause`: what the refresh
// threw, or the TimeoutError); a waiting call's own abort or deadline ends
// its wait at once, and never the refresh the others wait on.
import { own, readAll, required, spec, fn, ms, statuses } from '../options.js';
import { Authed } from './job.js';
import { Refresh } from './refresh.js';

export { AuthRefreshError } from './error.js';

/** An HTTP token (RFC 9110 §5.6.2): a header name. */
const TOKEN = /^[!#$%&'*+.^_`|~\w-]+$/;
/** Header names fetch refuses to send or drops (the Fetch standard's forbidden request headers that matter; undici's refusals). */
const FORBIDDEN = /^(?:connection|content-length|expect|host|keep-alive|te|trailer|transfer-encoding|upgrade|sec-.*|idempotency-key)$/i;

/** auth()'s options (AuthOptions), in the order they are checked (each message begins `auth: `). */
export const AUTH_OPTIONS = {
  header: required(fn(undefined, 'a function returning the header value')),
  refresh: required(fn(undefined, 'a function returning a promise')),
  name: spec(
    (v) => typeof v === 'string',
    'a header name',
    undefined,
    'authorization',
    (v) => {
      if (!TOKEN.test(v) || FORBIDDEN.test(v)) throw new RangeError(`auth: name must be a header name that fetch sends, not ${v}`);
      return v;
    },
  ),
  on: statuses(new Set([401])),
  timeoutMs: ms(30_000, true),
};

/**
 * The `auth` option of the fetch driver: the header, the refresh, checked
 * now, and the refresh's shared state.
 * @param {{ header: () => string | undefined | null | Promise<string | undefined | null>, refresh: (info: { signal: AbortSignal }) => unknown, name?: string, on?: number[], timeoutMs?: number }} options
 */
export function auth(options) {
  const { header, refresh, name, on, timeoutMs } = readAll(own(options, 'auth options'), AUTH_OPTIONS, 'auth: ');
  if (!on.size) throw new RangeError('auth: on must name at least one status');

  const r = new Refresh(refresh, timeoutMs);
  const a = {
    name: name.toLowerCase(),
    on,
    header,
    /** The current generation (refreshes that succeeded). */
    gen: () => r.gen,
    after: (/** @type {number} */ g) => r.after(g),
  };
  const made = Object.freeze({
    feature: 'auth',
    name: a.name,
    on: Object.freeze([...on]),
    timeoutMs,
    /** Refreshes started so far (each shared by the calls that waited on it). */
    get refreshes() {
      return r.started;
    },
    /**
     * The call's job, around the one so far: every attempt carries the header; a 401 waits on the shared refresh and is sent once more.
     * @param {import('../fetch/options.js').Wiring} x
     */
    job: (x) => new Authed(x.job, a, x.input, x),
  });
  // (the .d.ts's Auth carries a type-only mark of what auth() made)
  return /** @type {typeof made & import('../../types/auth/index.js').Auth} */ (made);
}

/** @typedef {{ name: string, on: Set<number>, header: () => unknown, gen: () => number, after: (g: number) => Promise<void> | undefined }} AuthState */
