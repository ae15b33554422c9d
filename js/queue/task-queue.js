// The durable task queue (`wasm-backoff/queue`): the Scheduler–Agent–
// Supervisor pattern over a pluggable state store.
//
// The state machine — when a task may be claimed, what a failure does, the
// retry delay, the failure threshold — is the Rust core's (src/queue.rs); this
// file holds what is JavaScript's: the store, promises, timers, the abort
// signal and the events. Every write goes through the store's compare-and-set
// (`swap`), so two instances (tabs, workers, processes sharing a store) that
// decide the same transition at once cannot both win: one claims the task,
// the other moves on.
import { w, mem, own, write, record, check, number, fn, entropy, OPTS, OUT } from '../wasm.js';
import {
  ALL_MESSAGES,
  DUE_CLAIM,
  DUE_EXPIRE,
  DUE_SWEEP,
  E_MAX_RETENTION_MS,
  MAX_TIMER,
  QUEUE,
  SCHEDULE,
  TASK_COMPLETE_BY,
  TASK_FAILURE_COUNT,
  TASK_NEXT_ATTEMPT_AT,
  TASK_STATE,
  TASK_STATES,
} from '../gen/boundary.js';

/** The longest wait between passes while the store keeps failing (unless pollMs is longer). */
const STORE_ERROR_CAP = 30000;

/**
 * Thrown (or rejected with) by a handler when the task can never succeed:
 * the task goes to `error` at once, without retries. Any error with
 * `permanent: true` counts too (e.g. one made in another realm).
 */
export class PermanentError extends Error {
  /**
   * @param {string} [message]
   * @param {{ cause?: unknown }} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = 'PermanentError';
    this.permanent = /** @type {const} */ (true);
  }
}

/**
 * The event of `processed`, `retry` and `error`: the task record after the
 * transition, and what caused it (for `error`, the rule that ended the task:
 * `reason` 'permanent', 'maxFailures' or 'maxRetention').
 */
export class TaskEvent extends Event {
  constructor(type, init) {
    super(type);
    this.task = init.task;
    this.error = init.error;
    this.delayMs = init.delayMs;
    this.compensationError = init.compensationError;
    this.reason = init.reason;
  }
}

const clone = (v) => structuredClone(v);

/**
 * A min-heap of index entries `{ at, seq, id }` (by time, then insertion
 * order). An entry is live while the store's `#entries` maps its id to it;
 * a record that changes gets a new entry and its old one is dropped when it
 * reaches the top.
 */
class Heap {
  /** @type {{ at: number, seq: number, id: string }[]} */
  a = [];

  static less(x, y) {
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  push(e) {
    const a = this.a;
    let i = a.push(e) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!Heap.less(e, a[p])) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = e;
  }

  pop() {
    const a = this.a;
    const top = a[0];
    const last = a.pop();
    if (a.length) {
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= a.length) break;
        if (c + 1 < a.length && Heap.less(a[c + 1], a[c])) c++;
        if (!Heap.less(a[c], last)) break;
        a[i] = a[c];
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/** The time a record's next step falls due, by its state: the retry for pending, the lease's end for processing. */
const INDEXED = { pending: 'nextAttemptAt', processing: 'completeBy' };
/** The final states (what purge() deletes). */
const FINAL = TASK_STATES.filter((x) => !INDEXED[x]);

/**
 * The default store: records in a Map of this realm (Node, workerd, one page).
 * Instances that share one MemoryStore object share its tasks; nothing
 * survives the process. Each method is synchronous inside, so `swap` is
 * trivially atomic. Pending and processing records are indexed by the time
 * their next step falls due (a heap each), so `earliest` costs O(limit · log n)
 * whatever the backlog.
 */
export class MemoryStore {
  #map = new Map();
  /** id -> the record's live index entry */
  #entries = new Map();
  #heaps = { pending: new Heap(), processing: new Heap() };
  #live = { pending: 0, processing: 0 };
  #seq = 0;

  /** Indexes the stored record `r` (replacing its entry), or only forgets its entry when it is final. */
  #index(r, old) {
    if (old && INDEXED[old.state]) this.#live[old.state]--;
    this.#entries.delete(r.id);
    const key = INDEXED[r.state];
    if (!key) return;
    const heap = this.#heaps[r.state];
    // (a NaN time would break the heap's order: such a record comes first, to be reported)
    const e = { at: Number.isNaN(+r[key]) ? -Infinity : +r[key], seq: this.#seq++, id: r.id };
    this.#entries.set(r.id, e);
    this.#live[r.state]++;
    heap.push(e);
    // Dead entries are dropped as they reach the top; rebuild when they outnumber the live ones.
    if (heap.a.length > 2 * this.#live[r.state] + 64) {
      const live = heap.a.filter((x) => this.#entries.get(x.id) === x);
      heap.a = [];
      for (const x of live) heap.push(x);
    }
  }

  async add(record) {
    checkId(record?.id);
    if (this.#map.has(record.id)) return false;
    const r = clone(record);
    this.#map.set(r.id, r);
    this.#index(r);
    return true;
  }

  async get(id) {
    const r = this.#map.get(id);
    return r && clone(r);
  }

  async active() {
    const out = [];
    for (const r of this.#map.values()) if (INDEXED[r.state]) out.push(clone(r));
    return out;
  }

  async earliest(limit) {
    const out = [];
    for (const state of ['pending', 'processing']) {
      const heap = this.#heaps[state];
      const taken = [];
      while (taken.length < limit && heap.a.length) {
        const e = heap.pop();
        if (this.#entries.get(e.id) === e) taken.push(e);
      }
      for (const e of taken) {
        heap.push(e);
        out.push(clone(this.#map.get(e.id)));
      }
    }
    return out;
  }

  async swap(expected, next) {
    const cur = this.#map.get(expected.id);
    if (!cur || cur.version !== expected.version) return false;
    const r = clone(next);
    this.#map.set(expected.id, r);
    this.#index(r, cur);
    return true;
  }

  async purge(before, states) {
    let n = 0;
    for (const [id, r] of this.#map) {
      if (states.includes(r.state) && r.createdAt <= before) n += +this.#map.delete(id);
    }
    return n;
  }

  /** Every record (for inspection and tests). */
  async list() {
    return [...this.#map.values()].map(clone);
  }
}

/** IndexedDBStore's indexes: name, the field after `state` in its key, the state `earliest` reads through it. */
const IDB_INDEXES = [
  ['due', 'nextAttemptAt', 'pending'],
  ['lease', 'completeBy', 'processing'],
  ['age', 'createdAt', ''],
];

/**
 * Records in IndexedDB (browsers, workers): they survive reloads, crashes and
 * closed tabs, and every page and worker of the origin that opens the same
 * database `name` shares them. `swap` reads, compares and writes in ONE
 * readwrite transaction: IndexedDB runs readwrite transactions over the same
 * store one at a time, across every page of the origin, so a claim is atomic.
 * Every method resolves only once its transaction has committed.
 */
export class IndexedDBStore {
  #name;
  #db;

  /** @param {{ name?: string }} [options] the database name (default 'wasm-backoff-queue') */
  constructor(options) {
    const name = options?.name ?? 'wasm-backoff-queue';
    if (typeof name !== 'string' || !name) throw new TypeError('name must be a non-empty string');
    this.#name = name;
  }

  #open() {
    if (this.#db) return this.#db;
    // Forgets this connection (the next use opens a new one), unless a newer one replaced it already.
    const drop = () => {
      if (this.#db === p) this.#db = undefined;
    };
    const p = new Promise((resolve, reject) => {
      const req = indexedDB.open(this.#name, 2);
      req.onupgradeneeded = (e) => {
        // Version 1 had one index, on the state; version 2 indexes each state by its due time (and by age).
        const s = e.oldVersion < 1 ? req.result.createObjectStore('tasks', { keyPath: 'id' }) : req.transaction.objectStore('tasks');
        if (s.indexNames.contains('state')) s.deleteIndex('state');
        for (const [name, key] of IDB_INDEXES) s.createIndex(name, ['state', key]);
      };
      req.onsuccess = () => {
        const db = req.result;
        // Let a newer version (another page upgrading) proceed; reopen on next use.
        db.onversionchange = () => {
          db.close();
          drop();
        };
        // The browser closed it (site data cleared, storage evicted, disk error).
        db.onclose = drop;
        resolve(db);
      };
      req.onerror = () => {
        drop();
        reject(req.error);
      };
    });
    return (this.#db = p);
  }

  /**
   * Runs `body(store, fail)` in one transaction; resolves once the
   * transaction committed. `fail(error)` aborts it and rejects with `error`
   * (e.g. the DataCloneError of a payload IndexedDB cannot store).
   */
  async #tx(mode, body) {
    let tx;
    for (let tries = 2; !tx; ) {
      const p = this.#open();
      const db = await p;
      try {
        tx = db.transaction('tasks', mode);
      } catch (e) {
        // A connection closed under us (not every close fires `close`):
        // forget it and, once, try on a fresh one.
        if (e?.name !== 'InvalidStateError' || --tries === 0) throw e;
        if (this.#db === p) this.#db = undefined;
      }
    }
    let failure;
    const fail = (e) => {
      failure = e;
      tx.abort();
    };
    const result = body(tx.objectStore('tasks'), fail);
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onerror = tx.onabort = () => reject(failure ?? tx.error ?? new DOMException('transaction aborted', 'AbortError'));
    });
    return result;
  }

  /**
   * The compare-and-set of `add` and `swap`: reads record `id`, and writes
   * `record` when `ok(current)`, in ONE readwrite transaction (the put is
   * issued from the read's success callback: nothing can write between the
   * two); resolves with whether it wrote.
   * @param {string} id
   * @param {(current: any) => boolean} ok
   * @param {any} record
   */
  #cas(id, ok, record) {
    const out = { written: false };
    return this.#tx('readwrite', (s, fail) => {
      s.get(id).onsuccess = (e) => {
        if (!ok(e.target.result)) return;
        try {
          s.put(record);
          out.written = true;
        } catch (err) {
          fail(err);
        }
      };
    }).then(() => out.written);
  }

  add(record) {
    checkId(record?.id);
    return this.#cas(record.id, (cur) => cur === undefined, record);
  }

  async get(id) {
    /** @type {IDBRequest} */
    let req;
    await this.#tx('readonly', (s) => (req = s.get(id)));
    return req.result;
  }

  active() {
    return this.earliest(undefined);
  }

  async earliest(limit) {
    const reqs = [];
    await this.#tx('readonly', (s) => {
      for (const [name, , state] of IDB_INDEXES) {
        if (state) reqs.push(s.index(name).getAll(IDBKeyRange.bound([state, -Infinity], [state, Infinity]), limit));
      }
    });
    return reqs.flatMap((r) => r.result);
  }

  swap(expected, next) {
    return this.#cas(expected.id, (cur) => !!cur && cur.version === expected.version, next);
  }

  purge(before, states) {
    let n = 0;
    return this.#tx('readwrite', (s) => {
      for (const state of states) {
        s.index('age').openKeyCursor(IDBKeyRange.bound([state, -Infinity], [state, before])).onsuccess = (e) => {
          const c = e.target.result;
          if (!c) return;
          s.delete(c.primaryKey);
          n++;
          c.continue();
        };
      }
    }).then(() => n);
  }

  /** Every record (for inspection and tests). */
  async list() {
    /** @type {IDBRequest} */
    let req;
    await this.#tx('readonly', (s) => (req = s.getAll()));
    return req.result;
  }

  /** Closes the connection (reopened on next use). */
  async close() {
    const db = this.#db;
    this.#db = undefined;
    (await db?.catch(() => undefined))?.close();
  }
}

/** An integer or number option in [lo, hi]. */
const bounded = (o, key, dflt, lo, integer, hi = Infinity) =>
  number(
    o,
    key,
    dflt,
    (v) => v >= lo && v <= hi && (!integer || Number.isInteger(v)),
    `${integer ? 'an integer' : 'a number'} ${hi < Infinity ? `in [${lo}, ${hi}]` : `>= ${lo}`}`,
  );

/**
 * A task's seed from the queue's seed and the task's id: 53 bits of a
 * 64-bit hash of both (cyrb53, by bryc, public domain), so two distinct ids
 * share a stream with probability about n²/2^54 (a 32-bit hash made that a
 * coin toss at 77 000 tasks).
 * @param {number} seed a safe integer
 * @param {string} id
 */
function taskSeed(seed, id) {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ Math.floor(seed / 2 ** 32);
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

const randomId = () => [...crypto.getRandomValues(new Uint8Array(8))].map((b) => b.toString(16).padStart(2, '0')).join('');

/** `error.permanent === true`, for any value a handler may reject with (a getter that throws: not permanent). */
function isPermanent(error) {
  try {
    return error?.permanent === true;
  } catch {
    return false;
  }
}

/** A failure as `lastError` records it: its message, else the value as a string; never throws. */
function describe(error) {
  try {
    const m = error?.message;
    if (m !== undefined) return String(m);
  } catch {}
  try {
    return String(error);
  } catch {}
  try {
    return Object.prototype.toString.call(error); // a null-prototype object
  } catch {
    return `a thrown ${typeof error}`; // a Proxy whose every trap throws
  }
}

/**
 * Whether `r` is a record the passes can act on: an object with a string id,
 * an active state, finite times, counts, seed and version. Any other record
 * a store hands back (no seed, null, an unknown state, a string time) is
 * reported once and stepped past: it neither holds a slot nor sets the time
 * of the next pass (DurableObjectStore's alarm skips it too).
 * @param {any} r
 */
export function isTask(r) {
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.id === 'string' &&
    Object.hasOwn(INDEXED, r.state) &&
    [r.nextAttemptAt, r.completeBy, r.createdAt, r.failureCount, r.seed, r.version].every(Number.isFinite)
  );
}

/** A lone surrogate (what a UTF-8 key cannot hold: stored as U+FFFD, another key). */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Refuses a task id that is no well-formed string: a lone surrogate (an id
 * taken from JSON, say) would be stored under U+FFFD by a UTF-8 store, where
 * its record is never found again.
 * @param {unknown} id
 */
export function checkId(id) {
  if (typeof id !== 'string' || !id) throw new TypeError('id must be a non-empty string');
  if (LONE_SURROGATE.test(id)) throw new RangeError('id must be a well-formed string (it has a lone surrogate, e.g. \\ud800)');
}

/** Runs `f` on the next macrotask (not a microtask: the event loop runs between passes); `cancel(handle)` undoes it. */
const G = /** @type {any} */ (globalThis);
const soon = typeof G.setImmediate === 'function' ? (f) => G.setImmediate(f) : (f) => setTimeout(f, 0);
const cancel = typeof G.clearImmediate === 'function' ? (h) => G.clearImmediate(h) : (h) => clearTimeout(h);

/** `earliest(limit)` for a store that only lists its active records (each pass then reads them all). */
function earliestOf(records, limit) {
  return Object.entries(INDEXED).flatMap(([state, key]) =>
    records
      .filter((r) => r?.state === state)
      .sort((a, b) => a[key] - b[key])
      .slice(0, limit),
  );
}

const LEASE_EXPIRED = 'the lease expired (completeBy passed) before the handler settled';
const RETENTION = 'maxRetentionMs passed before the task could run';
const COMPENSATE_LATE = 'onCompensate did not settle within leaseMs';

/**
 * A durable task queue: tasks are records in `store`, claimed atomically by
 * one instance at a time, run by `handler` within a lease, retried with the
 * backoff schedule, and given up after `maxFailures`. See queue/index.d.ts.
 */
export class TaskQueue extends EventTarget {
  #rec;
  #retention;
  #store;
  #handler;
  #compensate;
  #instance;
  #concurrency;
  #pollMs;
  #leaseMs;
  #seed;
  #running = new Map(); // id -> promise of the run (settles by completeBy at the latest)
  #compensating = new Set(); // promises of onCompensate runs (each settles within leaseMs)
  #storeErrors = 0; // consecutive passes the store failed
  #started = false;
  #timer;
  #ticking; // the promise of the tick in progress
  #soon; // the macrotask that starts the next pass
  #again = false;
  /** @type {{ resolve: (next: number) => void, reject: (e: unknown) => void }[]} drain() calls waiting for the queue to be idle */
  #drains = [];
  #syncTag;
  #syncing = 0; // sync events being handled
  #registering; // a Background Sync registration in flight
  #reported = new Set(); // malformed records reported (id@version)

  constructor(options) {
    super();
    if (options == null || typeof options !== 'object') throw new TypeError('options must be an object');
    const o = own(options);
    this.#handler = fn(o, 'handler', true);
    this.#compensate = fn(o, 'onCompensate', false);
    const store = o.store ?? new MemoryStore();
    for (const m of ['add', 'get', 'active', 'swap']) {
      if (typeof store?.[m] !== 'function') throw new TypeError(`store must have an ${m}() method (see the TaskStore interface)`);
    }
    this.#store = store;
    if (o.instanceId !== undefined && (typeof o.instanceId !== 'string' || !o.instanceId)) {
      throw new TypeError('instanceId must be a non-empty string');
    }
    this.#instance = o.instanceId;
    if (o.syncTag !== undefined && (typeof o.syncTag !== 'string' || !o.syncTag)) throw new TypeError('syncTag must be a non-empty string');
    this.#syncTag = o.syncTag;
    this.#concurrency = bounded(o, 'concurrency', 4, 1, true);
    this.#pollMs = bounded(o, 'pollMs', 1000, 1, false, MAX_TIMER);
    // The policy (the retry schedule, leaseMs, maxFailures), checked now and
    // kept as the record every transition is computed from. Each task
    // carries its own seed: a given one makes each task's a hash of it and
    // the task id.
    const b = own(o.backoff, 'backoff');
    write(b, SCHEDULE, () => 0);
    write(o, QUEUE);
    this.#rec = record(QUEUE);
    // (not a field of the record, which the small module shares: an argument of every call)
    const retention = o.maxRetentionMs ?? Infinity;
    if (typeof retention !== 'number') throw new TypeError(ALL_MESSAGES[E_MAX_RETENTION_MS]);
    this.#retention = retention;
    check(w.queue_check(retention), ALL_MESSAGES);
    this.#seed = b.seed;
    this.#leaseMs = o.leaseMs ?? 30000;
  }

  /** This instance's lock owner id (`lockedBy` of the records it claims). */
  get instanceId() {
    // Drawn on first use, not in the constructor: workerd forbids random
    // values at module scope, where a queue may well be made.
    return (this.#instance ??= randomId());
  }

  /** The state store. */
  get store() {
    return this.#store;
  }

  /** Whether start() was called and stop() was not. */
  get running() {
    return this.#started;
  }

  /**
   * Adds a task (pending, due now or at `notBefore`) and resolves with its id
   * once the store has it. Enqueueing an id that exists already changes
   * nothing (so a retried enqueue is idempotent) and resolves with that id too.
   */
  async enqueue(payload, options) {
    const o = own(options);
    let id = o.id;
    if (id === undefined) id = `${Date.now().toString(36)}-${randomId()}`;
    else checkId(id);
    let at = o.notBefore;
    if (at instanceof Date) at = at.getTime();
    if (at !== undefined && !Number.isFinite(at)) {
      throw new (typeof at === 'number' ? RangeError : TypeError)('notBefore must be a finite number (ms since the epoch) or a valid Date');
    }
    const seed = this.#seed === undefined ? entropy() : taskSeed(this.#seed, id);
    const now = Date.now();
    const rec = {
      id,
      payload,
      state: 'pending',
      lockedBy: null,
      completeBy: 0,
      failureCount: 0,
      // (a time in the past is now: the task keeps its place among those due)
      nextAttemptAt: Math.max(now, at ?? now),
      createdAt: now,
      seed,
      version: 0,
      lastError: null,
    };
    if (this.#step(w.queue_due, rec, now) === DUE_EXPIRE) throw new RangeError('notBefore must be within maxRetentionMs of now');
    await this.#store.add(rec);
    this.#wake();
    this.#register();
    return id;
  }

  /**
   * Deletes finished records (`processed` and `error`, or the `states`
   * named) created at least `olderThan` ms ago; resolves with how many. Their
   * ids can be enqueued again afterwards. The store must have `purge`.
   */
  async purge(options) {
    const o = own(options);
    const olderThan = number(o, 'olderThan', 0, (v) => v >= 0, 'a number >= 0');
    const states = o.states ?? FINAL;
    if (!Array.isArray(states) || !states.length || !states.every((x) => FINAL.includes(x))) {
      throw new (Array.isArray(states) ? RangeError : TypeError)(
        `states must be a non-empty array of ${FINAL.map((x) => `'${x}'`).join(', ')}`,
      );
    }
    if (typeof this.#store.purge !== 'function') throw new TypeError('store must have a purge() method (see the TaskStore interface)');
    return this.#store.purge(Date.now() - olderThan, [...new Set(states)]);
  }

  /**
   * Every pending task waiting for a retry after a failure becomes due now
   * (what the browser's `online` event and Background Sync do: failures
   * while offline should not wait out their backoff). Tasks that never
   * failed keep their `notBefore`. Reads every active record; resolves with
   * how many tasks it brought forward.
   */
  async retryNow() {
    const now = Date.now();
    let n = 0;
    for (const r of await this.#store.active()) {
      if (!isTask(r)) continue; // (a pass reports it)
      const h = this.#step(w.queue_retry_now, r, now);
      if (h && (await this.#store.swap(r, h))) n++;
    }
    if (n) this.#wake();
    return n;
  }

  /** The record of task `id`, or undefined. */
  get(id) {
    return this.#store.get(id);
  }

  /**
   * Starts claiming and sweeping (at once, then every pollMs and whenever a
   * task is due). In browsers it also wakes on `online` (tasks that failed
   * are retried at once), when the page becomes visible, and, in a Service
   * Worker with a `syncTag`, on Background Sync's `sync` event.
   */
  start() {
    if (!this.#started) {
      this.#started = true;
      this.#listen('addEventListener');
      this.#wake();
    }
    return this;
  }

  /**
   * Stops claiming and sweeping, and resolves once the handlers in flight
   * have settled (each by its completeBy at the latest); no timer or
   * listener is left. A drain() in progress rejects with an AbortError.
   */
  async stop() {
    this.#started = false;
    this.#listen('removeEventListener');
    for (const d of this.#drains.splice(0)) d.reject(new DOMException('stop() was called before the drain ended', 'AbortError'));
    clearTimeout(this.#timer);
    this.#timer = undefined;
    cancel(this.#soon);
    this.#soon = undefined;
    await this.#ticking;
    await Promise.all(this.#running.values());
    // Runs that settled just now may have started a compensation.
    await Promise.all(this.#compensating);
  }

  /**
   * Runs passes (started or not) until no task is due now and none of this
   * instance's handlers or compensations is in flight; resolves with the
   * time the next task falls due or a lease ends (Infinity when no task is
   * pending or processing), or rejects with the store's error. No timer is
   * set for what comes later: what a Durable Object's alarm or a Service
   * Worker's `sync` event needs.
   * @returns {Promise<number>}
   */
  async drain() {
    const next = await new Promise((resolve, reject) => {
      this.#drains.push({ resolve, reject });
      this.#wake();
    });
    await Promise.all(this.#compensating);
    return next;
  }

  /** Whether passes run: started, or a drain() waits. */
  get #on() {
    return this.#started || this.#drains.length > 0;
  }

  /** Adds or removes the browser's wake-up listeners (`method`: 'addEventListener' or 'removeEventListener'). */
  #listen(method) {
    const g = globalThis;
    if (typeof g.addEventListener !== 'function') return;
    g[method]('online', this.#onOnline);
    if (typeof document === 'object') document[method]('visibilitychange', this.#onVisible);
    const sw = g.ServiceWorkerGlobalScope;
    if (this.#syncTag && typeof sw === 'function' && g instanceof sw) g[method]('sync', this.#onSync);
  }

  /** Connectivity is back: tasks that failed meanwhile are retried now, and a store that failed is tried at once. */
  #onOnline = () => {
    this.#storeErrors = 0;
    this.retryNow().catch((error) => this.dispatchEvent(new TaskEvent('storeerror', { error })));
    this.#wake();
  };

  #onVisible = () => {
    if (document.visibilityState === 'visible') this.#wake();
  };

  /** @param {any} e a SyncEvent */
  #onSync = (e) => {
    if (e.tag === this.#syncTag) e.waitUntil(this.#replay());
  };

  /**
   * Background Sync's `sync` event: retries every task now and drains. It
   * fails (so the browser retries the sync later, with its own backoff)
   * while any task is left pending or processing.
   */
  async #replay() {
    this.#syncing++;
    try {
      await this.retryNow();
      const next = await this.drain();
      if (next !== Infinity) throw new Error('tasks are still pending: the browser retries this sync later');
    } finally {
      this.#syncing--;
    }
  }

  /**
   * Asks the browser for a Background Sync with `syncTag` (when given, and
   * a Service Worker is registered), so that pending tasks are replayed even
   * after every page of the origin closed. Not while handling that event (a
   * failed replay is retried by the browser itself), nor twice at once.
   */
  #register() {
    const g = globalThis;
    if (!this.#syncTag || this.#syncing || this.#registering) return;
    const reg = g.registration?.sync ? Promise.resolve(g.registration) : g.navigator?.serviceWorker?.getRegistration();
    // (Background Sync is an extra: a refusal changes nothing else)
    this.#registering = reg
      ?.then((r) => r?.sync?.register(this.#syncTag))
      .catch(() => {})
      .finally(() => {
        this.#registering = undefined;
      });
  }

  /**
   * The core's transition `f` of record `r` at `now` (w.queue_due answers a
   * number: DUE_WAIT, DUE_CLAIM, DUE_SWEEP, DUE_EXPIRE); the new record, or
   * undefined when the transition is not allowed from its state.
   * @param {(state: number, failures: number, next: number, completeBy: number, seed: number, createdAt: number, retention: number, now: number) => number} f
   * @param {any} r
   * @param {number} now
   */
  #step(f, r, now) {
    mem().set(this.#rec, OPTS);
    const code = f(TASK_STATES.indexOf(r.state), r.failureCount, r.nextAttemptAt, r.completeBy, r.seed, r.createdAt, this.#retention, now);
    if (f === w.queue_due || !code) return f === w.queue_due ? code : undefined;
    const m = mem();
    return {
      ...r,
      state: TASK_STATES[m[OUT + TASK_STATE]],
      failureCount: m[OUT + TASK_FAILURE_COUNT],
      nextAttemptAt: m[OUT + TASK_NEXT_ATTEMPT_AT],
      completeBy: m[OUT + TASK_COMPLETE_BY],
      version: r.version + 1,
    };
  }

  /**
   * Asks for a pass: on the next macrotask (never straight from the last
   * one's promise: a pass that claims a task whose handler fails at once,
   * with a zero backoff, would otherwise chain passes on microtasks and
   * starve the event loop), or after the pass in progress.
   */
  #wake() {
    if (!this.#on) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    this.#soon ??= soon(() => {
      this.#soon = undefined;
      this.#pass();
    });
  }

  #pass() {
    if (!this.#on || this.#ticking) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#ticking = this.#tick()
      .then(
        (next) => {
          this.#storeErrors = 0;
          const wait = Math.min(this.#pollMs, next - Date.now());
          // A custom store may hand back a NaN time: poll as usual then.
          return { next, wait: Number.isNaN(wait) ? this.#pollMs : wait, error: undefined };
        },
        (error) => {
          this.dispatchEvent(new TaskEvent('storeerror', { error }));
          // A store that is down is not hammered: the wait doubles from
          // pollMs per consecutive failed pass, up to max(pollMs, 30 s).
          const n = Math.min(this.#storeErrors++, 31);
          return { next: NaN, wait: Math.min(this.#pollMs * 2 ** n, Math.max(this.#pollMs, STORE_ERROR_CAP)), error };
        },
      )
      .then(({ next, wait, error }) => {
        this.#ticking = undefined;
        // A drain ends with a pass that found nothing to do now while no handler runs, or with a store error.
        if (error || (!this.#running.size && !this.#again && wait > 0)) {
          for (const d of this.#drains.splice(0)) error ? d.reject(error) : d.resolve(next);
        }
        if (!this.#on) return;
        // Draining without start(): the next pass comes when a run ends, or now.
        if (this.#again || (!this.#started && !this.#running.size)) {
          this.#again = false;
          return this.#wake();
        }
        if (this.#started) this.#timer = setTimeout(() => this.#pass(), Math.max(1, Math.min(wait, MAX_TIMER)));
      });
  }

  /**
   * One pass: sweep expired leases, claim due tasks while slots are free;
   * resolves with the time the next record falls due. It reads only the records it can act on:
   * the `concurrency + 1` earliest tasks of each state (a full list means more
   * may wait behind its last record), and the malformed records before them.
   */
  async #tick() {
    const limit = this.#concurrency + 1;
    const { records, last } = await this.#read(limit);
    const store = this.#store;
    let next = Infinity;
    for (const r of records) {
      if (!this.#on) break;
      const now = Date.now();
      const due = this.#step(w.queue_due, r, now);
      if (due === DUE_SWEEP) {
        // The supervisor: the instance holding the lease crashed, hung or was closed.
        const n = await this.#fail(
          r,
          this.#step(w.queue_sweep, r, now),
          new DOMException(LEASE_EXPIRED, 'TimeoutError'),
          now,
          'maxFailures',
        );
        if (n?.state === 'pending') next = Math.min(next, n.nextAttemptAt);
      } else if (due === DUE_EXPIRE) {
        await this.#fail(r, this.#step(w.queue_expire, r, now), new DOMException(RETENTION, 'TimeoutError'), now, 'maxRetention');
      } else if (due === DUE_CLAIM) {
        if (this.#running.size >= this.#concurrency || this.#running.has(r.id)) continue;
        const c = this.#step(w.queue_claim, r, now);
        c.lockedBy = this.instanceId;
        if (await store.swap(r, c)) {
          if (!this.#on) {
            // stop() came while the claim was being written: no handler may
            // start now, so the task is given back as it was (no failure
            // counted). If this write fails, the sweep takes it back once
            // the lease is over (that counts as a failure).
            await store.swap(c, { ...r, version: c.version + 1 });
            break;
          }
          this.#run(c);
          next = Math.min(next, c.completeBy + 1);
        }
      } else if (r.state === 'pending') {
        next = Math.min(next, r.nextAttemptAt);
      } else if (r.state === 'processing') {
        next = Math.min(next, r.completeBy + 1); // sweep it as soon as its lease is over
      }
    }
    // More records may wait behind a full list: leases to sweep at once, or
    // due tasks for the slots still free (a full slot set waits for a run to end).
    if (last.processing) next = Math.min(next, last.processing.completeBy + 1);
    if (last.pending && this.#running.size < this.#concurrency) next = Math.min(next, last.pending.nextAttemptAt);
    return next;
  }

  /**
   * The `limit` earliest tasks of each state, by due time, and `last`: the
   * last one of each state whose list is full (more may wait behind it).
   * Malformed records (reported once each) take no place: while a state's
   * list is full with fewer than `limit` tasks, the read goes on past them
   * (one more record per malformed one), so tasks behind them still run.
   */
  async #read(limit) {
    const store = this.#store;
    const at = (r) => (r.state === 'pending' ? r.nextAttemptAt : r.completeBy);
    for (let n = limit; ; ) {
      const read = store.earliest ? await store.earliest(n) : earliestOf(await store.active(), n);
      const tasks = { pending: [], processing: [] };
      const seen = { pending: 0, processing: 0 };
      let skipped = 0;
      let unplaced = 0; // malformed records of no active state: they may belong to either list
      for (const r of read) {
        const state = typeof r === 'object' && r !== null && Object.hasOwn(INDEXED, r.state) ? r.state : undefined;
        if (state) seen[state]++;
        else unplaced++;
        if (isTask(r)) tasks[state].push(r);
        else {
          skipped++;
          this.#malformed(r);
        }
      }
      // A state whose read was full and holds fewer than `limit` tasks: read past what was skipped.
      const more = Object.keys(tasks).some((x) => tasks[x].length < limit && seen[x] + unplaced >= n);
      if (more && limit + skipped > n) {
        n = limit + skipped;
        continue;
      }
      const last = {};
      for (const [state, list] of Object.entries(tasks)) {
        list.sort((a, b) => at(a) - at(b) || a.createdAt - b.createdAt);
        list.length = Math.min(list.length, limit);
        if (list.length === limit) last[state] = list[limit - 1];
      }
      const records = [...tasks.pending, ...tasks.processing].sort((a, b) => at(a) - at(b) || a.createdAt - b.createdAt);
      return { records, last };
    }
  }

  #run(rec) {
    const ac = new AbortController();
    let timer;
    const expired = new Promise((resolve) => {
      timer = setTimeout(
        () => {
          ac.abort(new DOMException(LEASE_EXPIRED, 'TimeoutError'));
          resolve({ expired: true });
        },
        Math.max(0, rec.completeBy - Date.now()),
      );
    });
    const task = clone(rec);
    const work = (async () => this.#handler(task, { signal: ac.signal, completeBy: rec.completeBy }))().then(
      () => ({ ok: true }),
      (error) => ({ error }),
    );
    const run = Promise.race([work, expired])
      .then(async (outcome) => {
        clearTimeout(timer);
        // Past completeBy the agent gives up silently: the sweep takes the task back.
        if (outcome.expired) return;
        const now = Date.now();
        const { error } = outcome;
        // Whatever the handler rejected with (even a value that throws when
        // read) is a failure of the task, never one of the store.
        if (!outcome.ok) {
          const permanent = isPermanent(error);
          const n = this.#step(permanent ? w.queue_fail_permanently : w.queue_fail, rec, now);
          if (n) await this.#fail(rec, n, error, now, permanent ? 'permanent' : 'maxFailures');
          return;
        }
        const n = this.#step(w.queue_complete, rec, now);
        if (!n) return;
        n.lockedBy = null;
        // The events carry the record as written.
        if (await this.#store.swap(rec, n)) this.#emit('processed', { task: n });
      })
      .catch((e) => this.dispatchEvent(new TaskEvent('storeerror', { task, error: e })))
      .finally(() => {
        this.#running.delete(rec.id);
        this.#wake();
      });
    this.#running.set(rec.id, run);
  }

  /**
   * Writes `n`, the failure (or expiry) of `r` the core computed, and raises
   * its event; resolves with the record written, or undefined when another
   * instance wrote first. A retry that would come after the task's retention
   * is its expiry instead. `reason` is the rule that ends the task if `n` is
   * `error`.
   */
  async #fail(r, n, error, now, reason) {
    if (n.state === 'pending' && this.#step(w.queue_due, n, now) === DUE_EXPIRE) {
      n = { ...this.#step(w.queue_expire, n, now), version: n.version };
      reason = 'maxRetention';
    }
    n.lockedBy = null;
    n.lastError = describe(error);
    if (!(await this.#store.swap(r, n))) return;
    this.#failed(n, error, now, reason);
    return n;
  }

  /**
   * After a failure was written: `retry`, or `error` once `onCompensate`
   * settled. The compensation runs beside the passes and the handler slots
   * (user code that hangs must not stop the queue) and is bounded by leaseMs:
   * past it the `error` event comes with a TimeoutError as
   * `compensationError`, and stop() no longer waits for it.
   */
  #failed(n, error, now, reason) {
    if (n.state !== 'error') {
      this.#register();
      return this.#emit('retry', { task: n, error, delayMs: n.nextAttemptAt - now });
    }
    if (!this.#compensate) return this.#emit('error', { task: n, error, reason });
    let timer;
    const late = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ compensationError: new DOMException(COMPENSATE_LATE, 'TimeoutError') }), this.#leaseMs);
    });
    const task = clone(n);
    const work = (async () => this.#compensate(task, error))().then(
      () => ({}),
      (compensationError) => ({ compensationError }),
    );
    const done = Promise.race([work, late]).then(({ compensationError }) => {
      clearTimeout(timer);
      this.#compensating.delete(done);
      this.#emit('error', { task: n, error, compensationError, reason });
    });
    this.#compensating.add(done);
  }

  /** Reports a record that is no task's (once per id and version), which the passes then leave alone and step past. */
  #malformed(r) {
    const key = `${describe(r?.id)}@${describe(r?.version)}`;
    if (this.#reported.has(key)) return;
    this.#reported.add(key);
    this.dispatchEvent(
      new TaskEvent('storeerror', {
        task: r,
        error: new TypeError(
          `malformed task record ${key}: ${r?.missing === true ? 'its index entry has no record' : "its state or times are not a task's"}`,
        ),
      }),
    );
  }

  #emit(type, init) {
    this.dispatchEvent(new TaskEvent(type, { ...init, task: clone(init.task) }));
  }
}
