// @ts-check
// auth's job (js/auth/index.js): the fetch job's attempts, each carrying the
// header `header()` gives, and a 401 (any status of `on`) for a request that
// carried it answered inside the same attempt: the call waits on the shared
// refresh, then sends the request once more with the new header. The loop
// sees one attempt (its count, the attempt header, `maxAttempts`, the
// budget and the schedule are untouched). Once per call: a 401 for a header
// read after the call's refresh is returned as it is.
//
// Credentials stay with their origin. The header is set by a request stage
// that runs before every other (before failover's move, js/fetch/failover.js
// `moved`): a request failover sends to another origin loses it there as it
// loses its own `Authorization` (unless that endpoint says `credentials:
// true`). A header of another name, which failover does not drop, is
// dropped by a second stage, after failover's, from any request that goes
// to another origin than the caller's: it never leaves the origin the call
// was made for. A 401 for a request that did not carry the header (it went
// elsewhere) starts no refresh.
import { abortable, drop } from '../hooks.js';
import { originOf } from '../request-model.js';
import { Around } from './around.js';

/** The headers failover drops when a request leaves its origin (js/fetch/failover.js). */
const CREDENTIALS = new Set(['authorization', 'cookie', 'proxy-authorization']);

/**
 * The headers fetch will send for `input`, `init`: init's, else the Request's (a copy).
 * @param {any} input
 * @param {RequestInit | undefined} init
 */
const headersOf = (input, init) => new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));

/**
 * What one send of an attempt carries: the header's value (undefined: none),
 * the generation it was read at, and whether the request as sent carried it.
 * @typedef {{ value: string | undefined, g: number, sent: boolean }} Sending
 */

export class Authed extends Around {
  /** The sends under way, by attempt number (a hedge's racers have their own). @type {Map<number, Sending>} */
  #sending = new Map();
  /** The generation after this call's refresh (-1: it has not waited on one). */
  #fresh = -1;
  /** The call was sent again after a refresh (told to onDone). */
  refreshed = false;
  /** The call's wiring (its lane, read at the resend: the features after this one may wrap it). @type {{ lane: import('../engine/loop.js').Lane }} */
  #x;

  /**
   * @param {any} job the fetch job (auth is the first feature around it)
   * @param {import('./index.js').AuthState} a
   * @param {any} input the request as the caller passed it: its origin is the header's
   * @param {{ lane: import('../engine/loop.js').Lane }} x the call's wiring (its lane: a quota counts the resend)
   */
  constructor(job, a, input, x) {
    super(job);
    this.a = a;
    this.#x = x;
    this.origin = originOf(input);
    const name = a.name;
    // (first of the fetch job's stages: before failover's move, whose credential rule then applies)
    /** @type {import('../fetch/request.js').Stage[]} */ (job.stages).unshift((input, init, n) => {
      const value = this.#sending.get(n)?.value;
      if (value === undefined) return [input, init];
      const h = headersOf(input, init);
      h.set(name, value);
      return [input, { ...init, headers: h }];
    });
    job.use((/** @type {any} */ input, /** @type {RequestInit | undefined} */ init, /** @type {number} */ n) => {
      const t = this.#sending.get(n);
      if (!t) return [input, init];
      // (no token yet: a 401 from the call's own origin asks for one)
      if (t.value === undefined) return ((t.sent = originOf(input) === this.origin), [input, init]);
      const h = headersOf(input, init);
      if (!CREDENTIALS.has(name) && originOf(input) !== this.origin && h.get(name) === t.value) {
        h.delete(name);
        init = { ...init, headers: h };
      }
      t.sent = h.get(name) === t.value;
      return [input, init];
    });
  }

  /** onDone is told `refreshed` when the call was sent again after a refresh. */
  about() {
    const more = this.job.about?.();
    return this.refreshed ? { ...more, refreshed: true } : more;
  }

  /**
   * One send of attempt `n`: the header read (its wait cut short by the
   * signal and the deadline), then the fetch job's attempt.
   * @param {import('../engine/call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<[import('../engine/loop.js').Outcome, Sending]>}
   */
  async #send(call, n, signal) {
    const a = this.a;
    // (the generation before the read: a refresh that ends during it makes the value old, never new)
    const g = a.gen();
    const value = await abortable(a.header(), signal, call.ds);
    if (value != null && typeof value !== 'string') throw new TypeError('auth: header() must return a string (or undefined: no header)');
    /** @type {Sending} */
    const t = { value: value ?? undefined, g, sent: false };
    this.#sending.set(n, t);
    try {
      return [await this.job.attempt(call, n, signal), t];
    } finally {
      this.#sending.delete(n);
    }
  }

  /**
   * Attempt `n`: sent with the header; a 401 for it waits on the shared
   * refresh and is sent once more (the first 401 of the call only, and only
   * when the body can be sent again).
   * @param {import('../engine/call.js').Call} call
   * @param {number} n
   * @param {AbortSignal | undefined} signal
   */
  async attempt(call, n, signal) {
    const [o, t] = await this.#send(call, n, signal);
    if (o.failed || !this.a.on.has(/** @type {number} */ (o.status)) || !t.sent || !this.job.body) return o;
    // (a second 401 of the call, for a header read after its refresh: returned as it is)
    if (this.#fresh >= 0 && t.g >= this.#fresh) return o;
    const wait = this.a.after(t.g);
    drop(o);
    if (wait) await abortable(wait, signal, call.ds);
    this.#fresh = this.a.gen();
    // (the resend is a request too: a quota reserves its units, waiting for them as an attempt does)
    await this.#x.lane.again?.(call, signal);
    this.refreshed = true;
    return (await this.#send(call, n, signal))[0];
  }
}
