// @ts-check
// One retry budget for a fleet of isolates (Cloudflare Workers): a real
// RetryBudget (js/budget.js) per key, kept in the fleet's Durable Object
// (GateObject, js/fleet/gate-object.js, which runs a BudgetHub), handed out to the
// isolates as allotments of retry credit: a round trip per slice of
// retries, not per request. Plain JavaScript over the budget (no
// `cloudflare:workers` here), so the benchmark runs the same code in Node.
//
// The protocol, one RPC: `budget(key, deposits, ask, options)`.
// - An isolate counts its first attempts (deposit) and sends them with its
//   next request, those of the last ttlMs only (older ones would have left
//   the object's window already); the object deposits them.
// - It asks for `ask` retries; the object withdraws min(ask, floor(available))
//   from its budget and answers how many. Each granted retry is credit the
//   isolate spends in withdraw() with no round trip, until ttlMs after the
//   request was sent: the object counts it as withdrawn in its window that
//   long, so spent later it would be spent twice.
// - The isolate's target is the larger of the retries it tried to take in
//   the last ttlMs (withdraw calls, granted or not) and those its own first
//   attempts earned there (retryRatio × its deposits), at least 1 (a retry
//   in reserve) and at most maxSlice. When its credit falls below half the
//   target it asks for the difference: the first time at its first deposit
//   (so the first retry normally finds credit), then as retries use it up,
//   or as the reserve expires (a healthy isolate: one request per ttlMs,
//   which also carries its deposits). One request at a time, sent after the
//   macrotask that wanted it (a burst's deposits and withdrawals are one
//   request); after a short grant (the fleet's budget is spent) the next
//   waits a slot (ttlMs / 10, the window's step, when withdrawals expire).
// - withdraw() with no credit left is false: the retry is refused (the fetch
//   driver's reason 'budget'), as by a spent RetryBudget, even while a grant
//   is on its way.
// - An object that fails (the RPC rejects, the stub cannot be had, a
//   malformed answer, no answer within STALE_MS: in workerd, a request
//   whose Worker request ended first is never answered): until a later request
//   succeeds (tried a slot later), the retries beyond the isolate's credit
//   are taken from a local RetryBudget of the same options, fed with every
//   deposit all along: the isolate then never refuses more than alone.
import { RetryBudget, SLOTS, BUDGET_OPTIONS } from '../budget.js';
import { own, readAll, must, required, nullable, spec, int } from '../options.js';
import { workerd } from '../hooks.js';

/** Most retries one request may ask for (maxSlice's bound). */
const MAX_SLICE = 1000;
/**
 * A request unanswered this long (ms) is taken for failed (its Worker
 * request ended first, say: workerd then never settles it). Short: while
 * it is out, a retry with no credit left is refused.
 */
const STALE_MS = 1000;
/** The scope of a budget when `key` is not given. */
const DEFAULT_KEY = 'default';

const WORKERD = workerd();

/** SharedBudget's options (SharedBudgetOptions): its scope, RetryBudget's, and its slice. */
export const SHARED_BUDGET_OPTIONS = {
  // (null: the default, as undefined)
  key: nullable(
    spec(
      (v) => typeof v === 'string',
      'a non-empty string',
      (v) => v !== '',
      DEFAULT_KEY,
    ),
  ),
  ...BUDGET_OPTIONS,
  maxSlice: int(1, MAX_SLICE, 10),
};

/**
 * The object's side, runtime-free: one RetryBudget per key, made at the
 * key's first request from the options it carries (the first wins).
 */
export class BudgetHub {
  /** @type {Map<string, { budget: RetryBudget, ttlMs: number }>} */
  #budgets = new Map();
  /** Requests answered, first attempts deposited, retries asked for and granted (for tests and the benchmark). */
  counts = { rpcs: 0, deposits: 0, asked: 0, granted: 0 };

  /**
   * RPC: `deposits` first attempts one isolate saw since its last request,
   * and `ask` retries it wants to hold. Deposits them, then withdraws up to
   * `ask` retries from the key's budget; answers how many (`granted`), what
   * is left (`available`) and the window (`ttlMs`) the grant counts in.
   * @param {string} key
   * @param {number} deposits
   * @param {number} ask
   * @param {Record<string, any>} options
   * @returns {{ granted: number, available: number, ttlMs: number }}
   */
  budget(key, deposits, ask, options) {
    const c = this.counts;
    c.rpcs++;
    if (typeof key !== 'string' || !key) throw new TypeError('key must be a non-empty string');
    must(deposits, 'deposits', required(int(0, Number.MAX_SAFE_INTEGER)));
    must(ask, 'ask', required(int(0, MAX_SLICE)));
    let b = this.#budgets.get(key);
    if (!b) {
      const o = own(options);
      b = { budget: new RetryBudget(o), ttlMs: readAll(o, BUDGET_OPTIONS).ttlMs };
      this.#budgets.set(key, b);
    }
    const now = Date.now();
    b.budget.deposit(now, deposits);
    let granted = 0;
    while (granted < ask && b.budget.withdraw(now)) granted++;
    c.deposits += deposits;
    c.asked += ask;
    c.granted += granted;
    return { granted, available: b.budget.available(now), ttlMs: b.ttlMs };
  }
}

/**
 * An isolate's retry budget whose credit comes from the BudgetHub of one
 * object (a GateObject named `key`). A `budget` for the fetch driver:
 * deposit() and withdraw() are synchronous and local; the round trips are
 * made in the background. See sharedBudget.
 */
export class SharedBudget {
  #ns;
  #key;
  #options;
  #slot;
  #ratio;
  #max;
  /** Its own budget, used while the object fails. */
  #local;
  /** Granted retries not yet spent: [expires at, count], soonest first. */
  #credit = /** @type {[number, number][]} */ ([]);
  /** The last ttlMs, a slot each: [slot, deposits, withdraw calls, deposits not yet sent]. */
  #window = /** @type {[number, number, number, number][]} */ ([]);
  /** The request scheduled or in flight, and when it was wanted. */
  #out = /** @type {Promise<void> | undefined} */ (undefined);
  #outAt = 0;
  /** No request before this time (after a short grant, or a failure). */
  #hold = -Infinity;
  /** The object failed at the last request: withdraw falls back to the local budget. */
  #down = false;
  /** The latest time given to deposit or withdraw. */
  #now = 0;
  /** Round trips to the object. */
  rpcs = 0;
  /** Of those, the ones that failed (the local budget then stood in). */
  failedRpcs = 0;

  /**
   * @param {any} namespace
   * @param {import('../../types/gate/index.js').SharedBudgetOptions} [options]
   */
  constructor(namespace, options) {
    if (typeof namespace?.idFromName !== 'function' || typeof namespace.get !== 'function') {
      throw new TypeError('namespace must be a Durable Object namespace binding (env.<BINDING>) of a GateObject');
    }
    const o = own(options);
    const { key, maxSlice, ...budget } = readAll(o, SHARED_BUDGET_OPTIONS);
    this.#max = maxSlice;
    this.#options = budget;
    this.#local = new RetryBudget(this.#options);
    this.#ns = namespace;
    this.#key = key;
    this.#slot = this.#options.ttlMs / SLOTS;
    this.#ratio = this.#options.retryRatio;
  }

  /** The current slot's entry of the window, the slots older than ttlMs dropped. */
  #at(/** @type {number} */ now) {
    if (!Number.isFinite(now)) throw new RangeError('nowMs must be a finite number (ms)');
    this.#now = now;
    const s = Math.floor(now / this.#slot);
    const w = this.#window;
    // (a clock that went back more than the window: start again, as RetryBudget does)
    if (w.length && w[w.length - 1][0] > s + SLOTS) w.length = 0;
    while (w.length && w[0][0] <= s - SLOTS) w.shift();
    let e = w[w.length - 1];
    if (!e || e[0] < s) w.push((e = [s, 0, 0, 0]));
    return e;
  }

  /** The credit left at `now` (expired grants dropped). */
  #held(/** @type {number} */ now) {
    const c = this.#credit;
    while (c.length && c[0][0] <= now) c.shift();
    let n = 0;
    for (const [, k] of c) n += k;
    return n;
  }

  /** The credit this isolate aims to hold (see the protocol above). */
  #target() {
    let d = 0;
    let t = 0;
    for (const e of this.#window) (d += e[1]), (t += e[2]);
    return Math.min(this.#max, Math.max(1, t, Math.ceil(this.#ratio * d)));
  }

  /** Records one request (a first attempt): counted here, sent to the object with the next request. */
  deposit(now = Date.now()) {
    const e = this.#at(now);
    e[1]++;
    e[3]++;
    this.#local.deposit(now);
    this.#need(now);
  }

  /** Takes one retry from this isolate's credit (no round trip); false when there is none (the retry is refused). */
  withdraw(now = Date.now()) {
    this.#at(now)[2]++;
    this.#stale(now);
    let ok = this.#held(now) > 0;
    if (ok) {
      const c = this.#credit[0];
      if (--c[1] === 0) this.#credit.shift();
    } else if (this.#down) ok = this.#local.withdraw(now);
    this.#need(now);
    return ok;
  }

  /** The retries this isolate can take now: its credit (and its local budget's while the object fails). */
  available(now = Date.now()) {
    this.#at(now);
    this.#stale(now);
    return this.#held(now) + (this.#down ? this.#local.available(now) : 0);
  }

  /** A request out for STALE_MS is taken for failed (never settled: its request's context is gone, say). */
  #stale(/** @type {number} */ now) {
    if (this.#out && now - this.#outAt >= STALE_MS) this.#failed(now);
  }

  /** Asks the object for credit, after this macrotask, when it runs low (one request at a time). */
  #need(/** @type {number} */ now) {
    this.#stale(now);
    if (this.#out) return;
    if (now < this.#hold || this.#held(now) * 2 >= this.#target()) return;
    this.#outAt = now;
    const out = new Promise((r) => setTimeout(r, 0))
      .then(() => this.#send())
      .catch(() => this.#failed(this.#now)) // (#send catches the RPC's errors: nothing else is expected to throw)
      .finally(() => {
        if (this.#out === out) this.#out = undefined;
      });
    this.#out = out;
  }

  /** The object failed: the local budget stands in until a request succeeds (the next a slot later). */
  #failed(/** @type {number} */ now) {
    this.failedRpcs++;
    this.#down = true;
    this.#out = undefined;
    this.#hold = now + this.#slot;
  }

  /** One request: the deposits not yet sent, and the credit wanted. */
  async #send() {
    const now = this.#now;
    this.#at(now); // (drops the deposits older than ttlMs)
    let deposits = 0;
    for (const e of this.#window) (deposits += e[3]), (e[3] = 0);
    const ask = Math.max(1, this.#target() - this.#held(now));
    this.rpcs++;
    const out = this.#out;
    let a;
    try {
      const stub = this.#ns.get(this.#ns.idFromName(this.#key));
      a = await stub.budget(this.#key, deposits, ask, this.#options);
      must(a?.granted, 'granted', required(int(0, ask)));
    } catch {
      if (this.#out === out) this.#failed(now);
      return;
    }
    // (the object's window, in case another Worker's options made it)
    const ttl = typeof a.ttlMs === 'number' && a.ttlMs > 0 ? a.ttlMs : this.#options.ttlMs;
    if (a.granted) {
      const c = this.#credit;
      let i = c.length;
      while (i > 0 && c[i - 1][0] > now + ttl) i--;
      c.splice(i, 0, [now + ttl, a.granted]);
    }
    this.#down = false;
    this.#hold = a.granted < ask ? now + this.#slot : -Infinity;
  }

  /**
   * Resolves when this isolate's request to the object, if one is
   * scheduled or on its way, has settled. In Cloudflare Workers:
   * `ctx.waitUntil(budget.flush())` in every request that used the budget,
   * so a request is not dropped with the request that made it.
   */
  async flush() {
    for (let p = this.#out; p; p = this.#out) {
      // At most until the request is stale (in workerd, a timer of this request's own every 25 ms
      // while it waits for another request's round trip).
      const left = Math.max(0, this.#outAt + STALE_MS - Date.now());
      let timer;
      await Promise.race([p, new Promise((r) => (timer = setTimeout(r, WORKERD ? Math.min(left, 25) : left)))]);
      clearTimeout(timer);
      this.#stale(Date.now());
    }
  }
}

/**
 * A retry budget for the `budget` option of the fetch driver, shared by
 * every isolate through the GateObject of `namespace` named `options.key`
 * (default 'default'). Make it once per isolate (module scope, from the
 * first request's `env`).
 * @param {any} namespace
 * @param {import('../../types/gate/index.js').SharedBudgetOptions} [options]
 */
export function sharedBudget(namespace, options) {
  return new SharedBudget(namespace, options);
}
