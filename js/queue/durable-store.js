// @ts-check
// The task queue's records in a Durable Object's storage (Cloudflare
// Workers, workerd): DurableObjectStore, and DurableObjectStore.remote for a
// Worker that reaches them through the object (queue-object.js). In the
// `workerd` build only (js/queue/durable.js): the other forms export
// stand-ins (js/queue/durable-elsewhere.js), so browsers do not download this.
//
// One object per queue name is the single strongly consistent place every
// isolate of a fleet writes through: a transaction per write, an ordered
// index per state, and an alarm at the next due time, so nothing polls.
import { own, readAll, flag } from '../options.js';
import { isTask, checkId, nonEmpty } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */
/** @typedef {Omit<import('../../types/queue/index.js').DurableObjectStorageLike, 'transaction'>} Txn a storage transaction */

/** What a remote store may ask of the object (TaskQueueObject.taskStore). */
export const STORE_OPS = ['add', 'get', 'active', 'earliest', 'swap', 'purge', 'list'];
/** storage.get / delete take at most this many keys at once. */
const BATCH = 128;

const view = new DataView(new ArrayBuffer(8));
/**
 * A number as 16 hex digits that sort as the numbers do (the IEEE 754 bits,
 * negative numbers inverted, positive ones with the sign bit set).
 * @param {number} x
 */
function timeKey(x) {
  view.setFloat64(0, x);
  let hi = view.getUint32(0);
  let lo = view.getUint32(4);
  if (hi >>> 31) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
  } else hi = (hi | 0x80000000) >>> 0;
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

const recordKey = (/** @type {string} */ id) => `t:${id}`;
/** An index key's prefix per state: pending by nextAttemptAt, processing by completeBy, the rest (final) by createdAt. */
const PENDING = 'i:p:';
const LEASED = 'i:l:';
const finished = (/** @type {string} */ state) => `i:f:${state}:`;
/** The id at the end of an index key (after the prefix and 16 hex digits and a colon). */
const idOf = (/** @type {string} */ key, /** @type {string} */ prefix) => key.slice(prefix.length + 17);

/**
 * The record's index entry: [key, the time its next step falls due (Infinity for a final one)].
 * @param {TaskRecord} r
 * @returns {[string, number]}
 */
function indexed(r) {
  if (r.state === 'pending') return [`${PENDING}${timeKey(r.nextAttemptAt)}:${r.id}`, r.nextAttemptAt];
  // (a lease is swept once now > completeBy)
  if (r.state === 'processing') return [`${LEASED}${timeKey(r.completeBy)}:${r.id}`, r.completeBy + 1];
  return [`${finished(r.state)}${timeKey(r.createdAt)}:${r.id}`, Infinity];
}

/** DurableObjectStore's options (DurableObjectStoreOptions). */
export const DURABLE_STORE_OPTIONS = { alarms: flag() };

/**
 * Task records in a Durable Object's storage (`ctx.storage`, SQLite- or
 * KV-backed). Every write is one storage transaction: `swap` reads,
 * compares and writes atomically (and the object runs one event at a time).
 * Pending and processing records are indexed by due time (ordered keys),
 * so `earliest` reads only what a pass acts on. With `alarms: true` each
 * write also moves the object's alarm to the record's due time when that is
 * sooner: the object's `alarm()` runs the queue (TaskQueueObject does).
 */
export class DurableObjectStore {
  #s;
  #alarms;

  /**
   * @param {any} storage the object's `ctx.storage`
   * @param {{ alarms?: boolean }} [options]
   */
  constructor(storage, options) {
    for (const m of ['get', 'put', 'delete', 'list', 'transaction', 'getAlarm', 'setAlarm', 'deleteAlarm']) {
      if (typeof storage?.[m] !== 'function') throw new TypeError("storage must be a Durable Object's storage (ctx.storage)");
    }
    const { alarms } = readAll(own(options), DURABLE_STORE_OPTIONS);
    this.#s = storage;
    this.#alarms = alarms;
  }

  /**
   * A TaskStore for a Worker: each method calls the TaskQueueObject named
   * `name` in `namespace` (its binding). Make it per request: workerd binds a
   * stub to the request that made it.
   * @param {any} namespace
   * @param {string} [name]
   */
  static remote(namespace, name) {
    const stub = objectOf(namespace, name);
    return /** @type {any} */ (
      Object.fromEntries(STORE_OPS.map((op) => [op, (/** @type {unknown[]} */ ...args) => stub.taskStore(op, args)]))
    );
  }

  /** @param {TaskRecord} record */
  add(record) {
    // (a lone surrogate in the key would be stored as U+FFFD: another key, never found again)
    checkId(record?.id);
    return this.#s.transaction(async (/** @type {Txn} */ t) => {
      if ((await t.get(recordKey(record.id))) !== undefined) return false;
      await this.#write(t, record);
      return true;
    });
  }

  /** @param {string} id */
  get(id) {
    return this.#s.get(recordKey(id));
  }

  /**
   * @param {TaskRecord} expected
   * @param {TaskRecord} next
   */
  swap(expected, next) {
    return this.#s.transaction(async (/** @type {Txn} */ t) => {
      const cur = /** @type {TaskRecord | undefined} */ (await t.get(recordKey(expected.id)));
      if (!cur || cur.version !== expected.version) return false;
      const [old] = indexed(cur);
      if (old !== indexed(next)[0]) await t.delete(old);
      await this.#write(t, next);
      return true;
    });
  }

  /**
   * Writes `r` and its index entry in transaction `t`, and moves the alarm forward to its due time.
   * @param {Txn} t
   * @param {TaskRecord} r
   */
  async #write(t, r) {
    const [key, due] = indexed(r);
    await t.put({ [recordKey(r.id)]: r, [key]: due });
    if (!this.#alarms || !Number.isFinite(due)) return;
    const cur = await t.getAlarm();
    if (cur === null || due < cur) await t.setAlarm(due);
  }

  /** @param {number} limit */
  earliest(limit) {
    return this.#read(limit);
  }

  active() {
    return this.#read(undefined);
  }

  /**
   * The records of the first `limit` index entries of each active state (all
   * without a limit), one per entry: an entry whose record is missing (or
   * null) comes back as `{ id, state, missing: true }`, which the queue
   * reports as malformed and steps past, as it does any record that is no task.
   * @param {number | undefined} limit
   */
  async #read(limit) {
    const entries = [];
    for (const [prefix, state] of [
      [PENDING, 'pending'],
      [LEASED, 'processing'],
    ]) {
      for (const k of (await this.#s.list({ prefix, limit })).keys()) entries.push([idOf(k, prefix), state]);
    }
    const out = [];
    for (let i = 0; i < entries.length; i += BATCH) {
      const batch = entries.slice(i, i + BATCH);
      const got = await this.#s.get(batch.map(([id]) => recordKey(id)));
      for (const [id, state] of batch) out.push(got.get(recordKey(id)) ?? { id, state, missing: true });
    }
    return out;
  }

  /**
   * @param {number} before
   * @param {TaskRecord['state'][]} states
   */
  async purge(before, states) {
    let n = 0;
    for (const state of states) {
      const prefix = finished(state);
      // (';' sorts right after ':': the end takes in every key of time `before`)
      const end = `${prefix}${timeKey(before)};`;
      for (;;) {
        const keys = [...(await this.#s.list({ prefix, end, limit: BATCH / 2 })).keys()];
        if (!keys.length) break;
        await this.#s.delete([...keys, ...keys.map((k) => recordKey(idOf(k, prefix)))]);
        n += keys.length;
      }
    }
    return n;
  }

  /** Every record (for inspection and tests). */
  async list() {
    return [...(await this.#s.list({ prefix: 't:' })).values()];
  }

  /**
   * The time the next pending task falls due or the next lease ends
   * (Infinity when none), from the index: the first entry of each state
   * whose record is a task. It steps past what a pass steps past (an entry
   * with no record, a record that is no task), so such a record's time
   * never sets the alarm: an alarm set back to it after each drain would
   * fire at once, again and again.
   */
  async nextDue(storage = this.#s) {
    let next = Infinity;
    for (const prefix of [PENDING, LEASED]) {
      // (one entry is the usual read; more, and more at a time, only past skipped ones)
      for (let limit = 1, startAfter; ; limit = Math.min(limit * 8, BATCH)) {
        /** @type {string[]} */
        const keys = [...(await storage.list({ prefix, limit, ...(startAfter ? { startAfter } : {}) })).keys()];
        const recs = keys.length ? await storage.get(keys.map((k) => recordKey(idOf(k, prefix)))) : new Map();
        const task = keys.map((k) => recs.get(recordKey(idOf(k, prefix)))).find(isTask);
        if (task) next = Math.min(next, indexed(task)[1]);
        if (task || keys.length < limit) break;
        startAfter = keys[keys.length - 1];
      }
    }
    return next;
  }

  /**
   * Sets the alarm to the next due time (deletes it when nothing is
   * pending or processing). `fresh`: when the object starts, the alarm is
   * deleted and written anew, not left as it is: local workerd forgets
   * scheduled alarms across a restart, and setting the stored time again
   * would change nothing.
   * @param {boolean} [fresh]
   */
  async rearm(fresh) {
    if (fresh) {
      await this.#s.deleteAlarm();
      await this.#s.sync?.();
    }
    await this.#s.transaction(async (/** @type {Txn} */ t) => {
      const next = await this.nextDue(t);
      if (next < Infinity) await t.setAlarm(next);
      else await t.deleteAlarm();
    });
  }
}

/**
 * The stub of the object named `name` (default 'default') in `namespace`.
 * @param {any} namespace
 * @param {unknown} [name]
 */
export function objectOf(namespace, name = 'default') {
  if (typeof namespace?.idFromName !== 'function' || typeof namespace.get !== 'function') {
    throw new TypeError('namespace must be a Durable Object namespace binding (env.<BINDING>)');
  }
  nonEmpty(name, 'name');
  return namespace.get(namespace.idFromName(name));
}
