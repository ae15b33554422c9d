// @ts-check
// `auth()` (`wasm-backoff/auth`, the `auth` option of the fetch driver): a
// header set on every attempt from `header()`, and one `refresh()` shared by
// every call that meets a 401 while it runs (single flight). The refresh
// and the request sent again after it are inside one attempt of the engine
// (js/auth/job.js): the loop, its schedule, `maxAttempts` and the budget do
// not see them.
//
// The refresh's state is the auth() value's, shared by every call given it:
//   gen      refreshes that succeeded so far: a header read at an older
//            generation is stale (a 401 for it is sent again with the new
//            header, without another refresh);
//   running  the refresh in flight, joined by every call that meets a 401
//            for a header of the current generation; cleared when it
//            settles, so a later 401 starts the next one.
// A refresh that rejects, or does not settle within `timeoutMs`, rejects
// every call waiting on it with an AuthRefreshError (its `cause`: what the
// refresh threw, or the TimeoutError); a waiting call's own abort or
// deadline ends its wait at once, and never the refresh the others wait on.
import { own, readAll, required, spec, fn, ms, statuses } from '../options.js';
import { abortable, deadline } from '../hooks.js';
import { Authed } from './job.js';

/** An HTTP token (RFC 9110 §5.6.2): a header name. */
const TOKEN = /^[!#$%&'*+.^_`|~\w-]+$/;
/** Header names fetch refuses to send or drops (the Fetch standard's forbidden request headers that matter; undici's refusals). */
const FORBIDDEN = /^(?:connection|content-length|expect|host|keep-alive|te|trailer|transfer-encoding|upgrade|sec-.*|idempotency-key)$/i;

/** The refresh failed: `cause` is what it threw (or the TimeoutError of `timeoutMs`). */
export class AuthRefreshError extends Error {
  /**
   * @param {unknown} cause
   */
  constructor(cause) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`auth: refresh() failed: ${why}`, { cause });
    this.name = /** @type {const} */ ('AuthRefreshError');
  }
}

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

  let gen = 0;
  /** @type {Promise<void> | undefined} */
  let running;
  let refreshes = 0;
  /**
   * The refresh a header of generation `g` waits for: none when a refresh
   * succeeded since it was read (the header is new already); else the one
   * in flight, or a new one.
   * @param {number} g
   * @returns {Promise<void> | undefined}
   */
  const after = (g) => {
    if (gen > g) return undefined;
    if (running) return running;
    refreshes++;
    const [ac, timer] = deadline('auth timeoutMs', timeoutMs);
    const p = abortable(
      Promise.resolve().then(() => refresh({ signal: ac.signal })),
      ac.signal,
    ).then(
      () => {
        gen++;
      },
      (e) => {
        throw new AuthRefreshError(e);
      },
    );
    running = p.finally(() => {
      clearTimeout(timer);
      running = undefined;
    });
    // (every caller may have gone: the refresh's failure is theirs, never unhandled)
    running.catch(() => {});
    return running;
  };

  const a = {
    name: name.toLowerCase(),
    on,
    header,
    /** The current generation (refreshes that succeeded). */
    gen: () => gen,
    after,
  };
  const made = Object.freeze({
    feature: 'auth',
    name: a.name,
    on: Object.freeze([...on]),
    timeoutMs,
    /** Refreshes started so far (each shared by the calls that waited on it). */
    get refreshes() {
      return refreshes;
    },
    /**
     * The call's job, around the one so far: every attempt carries the header; a 401 waits on the shared refresh and is sent once more.
     * @param {import('../fetch/options.js').Wiring} x
     */
    job: (x) => new Authed(x.job, a, x.input),
  });
  // (the .d.ts's Auth carries a type-only mark of what auth() made)
  return /** @type {typeof made & import('../../types/auth/index.js').Auth} */ (made);
}

/** @typedef {{ name: string, on: Set<number>, header: () => unknown, gen: () => number, after: (g: number) => Promise<void> | undefined }} AuthState */
