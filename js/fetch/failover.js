// @ts-check
// Failover (`wasm-backoff/failover`, the `endpoints` option): the lane of a call (js/engine/loop.js)
// whose attempts may go to several origins. It applies only to a request
// for one of the listed origins: any other is sent to its own origin, on the
// call's plain lane (index.js). Each attempt goes to one endpoint (the
// request's origin replaced by it) through that endpoint's own lane: with a
// gate, a ticket keyed by the endpoint, so the gate (a fleet's shared gate
// too) keeps each endpoint's health; without one, the call's own schedule.
// A retry goes to the next endpoint whose circuit is closed (or half-open
// with no probe out: that call is the probe); the first attempt of every
// call goes to the preferred one (the first in the list, or one drawn by
// weight) when it is usable, so a preferred endpoint that recovers is
// probed and returned to. With no endpoint usable, the call is held by the
// one whose round ends first (the earlier in the list on a tie), leaving the
// queue it was in; while held, it goes to another endpoint whose round
// ends first or that becomes usable. A request sent to another origin than its own
// loses its credential headers, as fetch drops them on a cross-origin
// redirect, unless that endpoint says `credentials: true`.
import { own, readAll, required, spec, ms, flag } from '../options.js';
import { MAX_TIMER } from '../gen/boundary.js';

/** The headers fetch drops when a redirect leaves the origin (RFC 9110 §15.4; Fetch, "HTTP-redirect fetch"). */
const CREDENTIALS = ['authorization', 'cookie', 'proxy-authorization'];

/**
 * @typedef {object} Endpoint
 * @property {string} origin
 * @property {number} weight its weight over the largest (in (0, 1]: the draw's sum stays finite)
 * @property {boolean} credentials requests for the list's other origins keep their credential headers here
 */

/**
 * @typedef {object} Endpoints
 * @property {Endpoint[]} list
 * @property {boolean} weighted
 * @property {Set<string>} origins the listed origins
 */

/**
 * The URL of `input` (a URL, a string, or a Request), against the page's
 * where there is one; undefined when it is not a URL (fetch will say so).
 * @param {any} input
 */
function urlOf(input) {
  try {
    return new URL(input instanceof Request ? input.url : String(input), globalThis.location?.href);
  } catch {
    return undefined;
  }
}

/** What `endpoints` must be (the start of each error about the list). */
const ENDPOINTS = 'endpoints must be a non-empty array of absolute http(s) origins (strings, URLs or { url, weight, credentials })';

/** An endpoint's fields (Endpoint's object form; each message begins `endpoints[i].`, the url's `endpoints must be …`). */
export const ENDPOINT_OPTIONS = {
  url: required(
    spec(
      () => true,
      'an absolute http(s) origin',
      undefined,
      undefined,
      (v) => {
        let u;
        try {
          u = new URL(String(v));
        } catch {
          throw new TypeError(`${ENDPOINTS}: ${String(v)} is not an absolute URL`);
        }
        if (!/^https?:$/.test(u.protocol) || u.href !== `${u.origin}/`) throw new RangeError(`${ENDPOINTS}: ${u.href} is not an origin`);
        return u.origin;
      },
    ),
  ),
  weight: ms(1, true, true),
  credentials: flag(),
};

/**
 * The `endpoints` option of the fetch driver (what `failover(endpoints)` of
 * `wasm-backoff/failover` makes): the endpoints, checked now, and the lane
 * of a call (the fetch driver calls `lane`).
 * @param {unknown} endpoints
 */
export function failover(endpoints) {
  if (!Array.isArray(endpoints)) throw new TypeError(ENDPOINTS);
  if (!endpoints.length) throw new RangeError(ENDPOINTS);
  let weighted = false;
  const list = endpoints.map((x, i) => {
    const at = `endpoints[${i}]`;
    const e = typeof x === 'string' || x instanceof URL ? { url: x } : own(x, at);
    // (only undefined is "not given": null is a mistake, as any other non-number)
    weighted ||= e.weight !== undefined;
    const { url: origin, weight, credentials } = readAll(e, ENDPOINT_OPTIONS, `${at}.`);
    return { origin, weight, credentials };
  });
  const origins = new Set(list.map((e) => e.origin));
  if (origins.size < list.length) throw new RangeError('endpoints must not repeat an origin');
  // Drawn by each weight over the largest: in (0, 1], their sum at most the
  // list's length, where the weights' own sum may overflow (two of 1e308)
  // or round away (subnormals).
  const top = Math.max(...list.map((e) => e.weight));
  for (const e of list) e.weight /= top;
  /** @type {Endpoints} */
  const eps = { list, weighted, origins };
  const made = Object.freeze({
    endpoints: Object.freeze(list.map((e) => e.origin)),
    weighted,
    feature: 'endpoints',
    /**
     * The lane of a call for one of the listed origins; undefined for any
     * other (it goes to its own origin, on the call's plain lane).
     * @param {import('./options.js').Wiring} x
     */
    lane: (x) => {
      const from = urlOf(x.job.input)?.origin;
      return origins.has(/** @type {string} */ (from)) ? new Failover(x.c, x.job, x.call, eps, x.own) : undefined;
    },
  });
  // (the .d.ts's Failover carries a type-only mark of what failover() made)
  return /** @type {typeof made & import('../../types/failover/index.js').Failover} */ (made);
}

/**
 * A Request's init without its body: the stream entry sends its own body
 * (`init.body`), and the Request's, read already, could not be copied.
 * @param {Request} r
 * @returns {RequestInit}
 */
const without = (r) => ({
  method: r.method,
  headers: r.headers,
  mode: r.mode === 'navigate' ? 'same-origin' : r.mode,
  credentials: r.credentials,
  cache: r.cache,
  redirect: r.redirect,
  referrer: r.referrer,
  referrerPolicy: r.referrerPolicy,
  integrity: r.integrity,
  keepalive: r.keepalive,
  signal: r.signal,
});

/**
 * fetch's arguments `input`, `init` sent to endpoint `ep` instead of the
 * request's own origin (its path, query and fragment kept). Away from its
 * own origin, the credential headers are dropped (from the Request and
 * from `init`), unless `ep` takes those of the list's other origins.
 * @param {any} input a URL, a string, or a Request
 * @param {RequestInit | undefined} init
 * @param {Endpoint} ep
 * @param {Set<string>} origins the listed origins
 * @returns {[any, RequestInit | undefined]}
 */
function moved(input, init, ep, origins) {
  const u = /** @type {URL} */ (urlOf(input));
  if (u.origin === ep.origin) return [input, init];
  const to = ep.origin + u.pathname + u.search + u.hash;
  const req = input instanceof Request ? new Request(to, init?.body === undefined ? input : without(input)) : undefined;
  if (!(ep.credentials && origins.has(u.origin))) {
    const drop = (/** @type {Headers} */ h) => {
      for (const n of CREDENTIALS) h.delete(n);
      return h;
    };
    if (req) drop(req.headers);
    if (init?.headers) init = { ...init, headers: drop(new Headers(init.headers)) };
  }
  return [req ?? to, init];
}

/**
 * The lane of a call with endpoints.
 */
export class Failover {
  /** The current endpoint's index (-1: none yet). */
  i = -1;
  /** @type {any} the current endpoint's lane (a gate's ticket, or the plain schedule) */
  t;
  /** @type {Endpoint | undefined} the current endpoint */
  ep;
  /** @type {Endpoint | undefined} where the last attempt went */
  went;
  /** The next pass enters the current endpoint's queue at once (the call was moved there to be held: the wait told was its round's). */
  into = false;

  /**
   * @param {import('./options.js').Config} c
   * @param {import('./request.js').FetchJob} job
   * @param {import('../engine/call.js').Call} call
   * @param {Endpoints} eps
   * @param {import('../engine/loop.js').Lane} scheduled
   */
  constructor(c, job, call, eps, scheduled) {
    this.c = c;
    this.job = job;
    this.call = call;
    this.eps = eps;
    this.scheduled = scheduled;
    // (the job's request stage: each attempt goes to the current endpoint)
    job.use((input, init) => (this.ep ? moved(input, init, this.ep, eps.origins) : [input, init]));
  }

  /** Why the current lane's pass refused. */
  get why() {
    return this.t?.why;
  }

  /** The gate's key of the current endpoint. */
  get key() {
    return this.t?.key;
  }

  /** The gate's key of endpoint `i`. @param {number} i */
  keyOf(i) {
    const { job } = this;
    const u = /** @type {URL} */ (urlOf(job.input));
    return this.c.gate?.keyOf(this.eps.list[i].origin + u.pathname + u.search + u.hash, job.init);
  }

  /** Whether endpoint `i` may take an attempt now: no gate, its circuit closed, or half-open with no probe out. @param {number} i */
  usable(i) {
    const g = this.c.gate;
    if (!g) return true;
    const s = g.state(this.keyOf(i));
    return s.state === 'closed' || (s.state === 'half-open' && !s.probing);
  }

  /** How long until endpoint `i`'s round ends, in ms: 0 when it has (or no gate), Infinity while isolated. @param {number} i */
  waitOf(i) {
    return this.c.gate?.state(this.keyOf(i)).retryAfterMs ?? 0;
  }

  /** With no usable endpoint, the one to be held by: whose round ends first (the earlier in the list on a tie). */
  soonest() {
    let [best, least] = [0, Infinity];
    this.eps.list.forEach((_, i) => {
      const w = this.waitOf(i);
      if (w < least) [best, least] = [i, w];
    });
    return best;
  }

  /** The first attempt's endpoint: the preferred usable one (or, none usable, the one to be held by). */
  first() {
    const { list, weighted } = this.eps;
    const ok = list.map((_, i) => i).filter((i) => this.usable(i));
    if (!weighted || ok.length < 2) return ok[0] ?? this.soonest();
    let r = Math.random() * ok.reduce((s, i) => s + list[i].weight, 0);
    for (const i of ok) if ((r -= list[i].weight) < 0) return i;
    return ok[ok.length - 1];
  }

  /** A retry's endpoint: the next usable one after the current, in order (-1: none but the current). */
  next() {
    const n = this.eps.list.length;
    for (let k = 1; k < n; k++) if (this.usable((this.i + k) % n)) return (this.i + k) % n;
    return -1;
  }

  /**
   * Goes to endpoint `i`: the job's requests go there, through its lane.
   * @param {number} i
   */
  to(i) {
    const { c, call } = this;
    this.i = i;
    this.ep = this.eps.list[i];
    const g = c.gate;
    this.t = g ? g.enter(this.keyOf(i), call.signal, call.end, (/** @type {number=} */ h) => call.next(h), !!c.pace) : this.scheduled;
  }

  /**
   * The current endpoint's pass (its gate's hold, or the wait the loop was
   * told). With a gate, while the current endpoint is down or the call
   * waits first, the pass is watched: see `watch`.
   * @param {import('../engine/call.js').Call} call
   * @param {number} delayMs
   */
  pass(call, delayMs) {
    if (this.i < 0) this.to(this.first());
    const wait = this.into ? 0 : delayMs;
    this.into = false;
    const p = this.t.pass(call, wait);
    return p && this.c.gate && this.eps.list.length > 1 && (wait > 0 || !this.usable(this.i)) ? this.watch(call, p, Date.now() + wait) : p;
  }

  /**
   * Pass `p` of the current endpoint, watched: when another endpoint's round
   * ends (not before `from`, when the call's own wait is over) and the call
   * is held by a target that is not usable, it leaves that queue for the next
   * usable endpoint, or, none usable, for the one whose round ends first.
   * Resolves or rejects as the pass of the endpoint the call is with.
   * @param {import('../engine/call.js').Call} call
   * @param {Promise<void>} p
   * @param {number} from
   */
  async watch(call, p, from) {
    for (;;) {
      const at = this.wake(from);
      if (at === Infinity) return p;
      /** @type {any} */
      let timer;
      let rang;
      try {
        rang = await Promise.race([p, new Promise((r) => (timer = setTimeout(r, Math.min(at - Date.now(), MAX_TIMER), true)))]);
      } finally {
        clearTimeout(timer);
      }
      if (!rang) return; // (let through)
      // (not in a queue now: its own wait, the limiter's token or a fleet's answer; looked at again at the next round's end)
      if (!this.t.held?.() || this.usable(this.i)) continue;
      let j = this.next();
      if (j < 0) j = this.soonest();
      if (j === this.i) continue;
      p.catch(() => {}); // (it leaves the queue: the old pass rejects, unheard)
      this.t.cancel?.();
      this.to(j);
      p = this.t.pass(call, 0);
    }
  }

  /**
   * When the watch looks next: the soonest end of another endpoint's round
   * still to come, or, while the call's own wait runs (to `from`), that
   * wait's end if another endpoint's round is over; Infinity: never.
   * @param {number} from
   */
  wake(from) {
    const now = Date.now();
    let at = Infinity;
    this.eps.list.forEach((_, j) => {
      const w = j === this.i ? Infinity : this.waitOf(j);
      if (w < Infinity && (w > 0 || from > now)) at = Math.min(at, now + w);
    });
    return Math.max(at, from);
  }

  /**
   * The current endpoint's lane decides; a retry it grants (or a circuit it
   * found open, failing fast) goes to the next usable endpoint, if any: at
   * once when the old endpoint's round held it, else after the call's own
   * backoff (which the next endpoint's lane is told). With none usable, a
   * call held by its endpoint's round is held by the endpoint whose round
   * ends first instead (it leaves the old queue for that one's).
   * @param {import('../engine/call.js').Call} call
   * @param {import('../engine/loop.js').Verdict} v
   * @param {import('../engine/loop.js').Outcome} o
   * @returns {import('../engine/loop.js').Decision}
   */
  after(call, v, o) {
    const t = this.t;
    this.went = this.ep;
    const d = t.after(call, v, o);
    if (!v.why && (!d.why || d.why === 'circuit-open')) {
      let j = this.next();
      if (j >= 0) {
        t.cancel?.(); // (held by the old endpoint's gate: it leaves that queue)
        this.to(j);
        return { why: '', delayMs: d.why || d.held ? 0 : d.delayMs, hintMs: d.hintMs };
      }
      if (d.held && !this.usable(this.i) && (j = this.soonest()) !== this.i) {
        t.cancel?.();
        this.to(j);
        this.into = true;
        return { why: '', delayMs: this.waitOf(j), hintMs: d.hintMs, held: true };
      }
    }
    return d;
  }

  /** Where the call's last attempt went, for onDone. */
  about() {
    return this.went && { endpoint: this.went.origin };
  }

  /** Whether the current endpoint looks healthy (a hedge may go). */
  healthy() {
    return this.t?.healthy?.() ?? true;
  }

  cancel() {
    this.t?.cancel?.();
  }
}
