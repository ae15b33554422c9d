// @ts-check
// Failover (`wasm-backoff/failover`, the `endpoints` option): the lane of a call (js/engine/loop.js)
// whose attempts may go to several origins. Each attempt goes to one
// endpoint (the request's origin replaced by it) through that endpoint's own
// lane: with a gate, a ticket keyed by the endpoint, so the gate (a fleet's
// shared gate too) keeps each endpoint's health; without one, the call's own
// schedule. A retry goes to the next endpoint whose circuit is closed (or
// half-open with no probe out: that call is the probe); the first attempt
// of every call goes to the preferred one (the first in the list, or one
// drawn by weight) when it is usable, so a preferred endpoint that recovers
// is probed and returned to.
import { own } from '../options.js';

/**
 * @typedef {object} Endpoint
 * @property {string} origin
 * @property {number} weight
 */

/**
 * The `endpoints` option of the fetch driver (what `failover(endpoints)` of
 * `wasm-backoff/failover` makes): the endpoints, checked now, and the lane
 * of a call (the fetch driver calls `lane`).
 * @param {unknown} endpoints
 */
export function failover(endpoints) {
  const msg = 'endpoints must be a non-empty array of absolute http(s) origins (strings, URLs or { url, weight })';
  if (!Array.isArray(endpoints)) throw new TypeError(msg);
  if (!endpoints.length) throw new RangeError(msg);
  let weighted = false;
  const list = endpoints.map((x) => {
    const e = typeof x === 'string' || x instanceof URL ? { url: x } : own(x, 'endpoints[i]');
    let u;
    try {
      u = new URL(String(e.url));
    } catch {
      throw new TypeError(`${msg}: ${String(e.url)} is not an absolute URL`);
    }
    if (!/^https?:$/.test(u.protocol) || u.href !== `${u.origin}/`) throw new RangeError(`${msg}: ${u.href} is not an origin`);
    const weight = e.weight ?? 1;
    weighted ||= e.weight !== undefined;
    if (typeof weight !== 'number') throw new TypeError('endpoints[i].weight must be a number > 0');
    if (!(weight > 0 && weight < Infinity)) throw new RangeError('endpoints[i].weight must be a finite number > 0');
    return { origin: u.origin, weight };
  });
  if (new Set(list.map((e) => e.origin)).size < list.length) throw new RangeError('endpoints must not repeat an origin');
  const eps = { list, weighted };
  const made = Object.freeze({
    endpoints: Object.freeze(list.map((e) => e.origin)),
    weighted,
    /**
     * @param {import('./options.js').Config} c
     * @param {import('./request.js').FetchJob} job
     * @param {import('../engine/call.js').Call} call
     * @param {import('../engine/loop.js').Lane} scheduled the plain lane (without a gate)
     */
    lane: (c, job, call, scheduled) => new Failover(c, job, call, eps, scheduled),
  });
  // (the .d.ts's Failover carries a type-only mark of what failover() made)
  return /** @type {typeof made & import('../../types/failover/index.js').Failover} */ (made);
}

/**
 * `input` (a URL, a string, or a Request) sent to `origin` instead of its own.
 * @param {any} input
 * @param {string} origin
 */
function moved(input, origin) {
  const u = new URL(input instanceof Request ? input.url : String(input), globalThis.location?.href);
  const to = origin + u.pathname + u.search + u.hash;
  return input instanceof Request ? new Request(to, input) : to;
}

/**
 * The lane of a call with endpoints.
 */
export class Failover {
  /** The current endpoint's index (-1: none yet). */
  i = -1;
  /** @type {any} the current endpoint's lane (a gate's ticket, or the plain schedule) */
  t;

  /**
   * @param {import('./options.js').Config} c
   * @param {import('./request.js').FetchJob} job
   * @param {import('../engine/call.js').Call} call
   * @param {{ list: Endpoint[], weighted: boolean }} eps
   * @param {import('../engine/loop.js').Lane} scheduled
   */
  constructor(c, job, call, eps, scheduled) {
    this.c = c;
    this.job = job;
    this.call = call;
    this.eps = eps;
    this.scheduled = scheduled;
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
    return this.c.gate?.keyOf(moved(job.isReq ? job.input.url : job.input, this.eps.list[i].origin), job.init);
  }

  /** Whether endpoint `i` may take an attempt now: no gate, its circuit closed, or half-open with no probe out. @param {number} i */
  usable(i) {
    const g = this.c.gate;
    if (!g) return true;
    const s = g.state(this.keyOf(i));
    return s.state === 'closed' || (s.state === 'half-open' && !s.probing);
  }

  /** The first attempt's endpoint: the preferred usable one (or the first, to be held by its gate). */
  first() {
    const { list, weighted } = this.eps;
    const ok = list.map((_, i) => i).filter((i) => this.usable(i));
    if (!weighted || ok.length < 2) return ok[0] ?? 0;
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
    const { c, call, job } = this;
    const origin = this.eps.list[i].origin;
    const old = this.t;
    this.i = i;
    job.move = (/** @type {any} */ input) => moved(input, origin);
    const g = c.gate;
    this.t = g ? g.enter(this.keyOf(i), call.signal, call.end, (/** @type {number=} */ h) => call.next(h)) : this.scheduled;
    // (a retry's own backoff below the gate's threshold carries over to the next endpoint)
    if (g && old) (this.t.inner ?? this.t).delayMs = (old.inner ?? old).delayMs;
  }

  /** @param {import('../engine/call.js').Call} call */
  pass(call) {
    if (this.i < 0) this.to(this.first());
    return this.t.pass(call);
  }

  /**
   * The current endpoint's lane decides; a retry it grants (or a circuit it
   * found open, failing fast) goes to the next usable endpoint, if any.
   * @param {import('../engine/call.js').Call} call
   * @param {string} why
   * @param {import('../engine/loop.js').Outcome} o
   */
  after(call, why, o) {
    o.about = { ...o.about, endpoint: this.eps.list[this.i].origin };
    const t = this.t;
    let r = t.after(call, why, o);
    if (!why && (!r || r === 'circuit-open')) {
      const j = this.next();
      if (j >= 0) {
        t.cancel?.(); // (held by the old endpoint's gate: it leaves that queue)
        this.to(j);
        r = '';
      }
    }
    return r;
  }

  cancel() {
    this.t?.cancel?.();
  }
}
