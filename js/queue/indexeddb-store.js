import { checkId, nonEmpty } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

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
  /** @type {Promise<IDBDatabase> | undefined} */
  #db;

  /** @param {{ name?: string }} [options] the database name (default 'wasm-backoff-queue') */
  constructor(options) {
    const name = options?.name ?? 'wasm-backoff-queue';
    nonEmpty(name, 'name');
    this.#name = name;
  }

  #open() {
    if (this.#db) return this.#db;
    // Forgets this connection (the next use opens a new one), unless a newer one replaced it already.
    const drop = () => {
      if (this.#db === p) this.#db = undefined;
    };
    /** @type {Promise<IDBDatabase>} */
    const p = new Promise((resolve, reject) => {
      const req = indexedDB.open(this.#name, 2);
      req.onupgradeneeded = (e) => {
        // Version 1 had one index, on the state; version 2 indexes each state by its due time (and by age).
        const s =
          e.oldVersion < 1
            ? req.result.createObjectStore('tasks', { keyPath: 'id' })
            : /** @type {IDBTransaction} */ (req.transaction).objectStore('tasks');
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
   * @template T
   * @param {IDBTransactionMode} mode
   * @param {(s: IDBObjectStore, fail: (e: unknown) => void) => T} body
   */
  async #tx(mode, body) {
    /** @type {IDBTransaction | undefined} */
    let tx;
    for (let tries = 2; !tx; ) {
      const p = this.#open();
      const db = await p;
      try {
        tx = db.transaction('tasks', mode);
      } catch (e) {
        // A connection closed under us (not every close fires `close`):
        // forget it and, once, try on a fresh one.
        if (/** @type {DOMException} */ (e)?.name !== 'InvalidStateError' || --tries === 0) throw e;
        if (this.#db === p) this.#db = undefined;
      }
    }
    /** @type {unknown} */
    let failure;
    const fail = (/** @type {unknown} */ e) => {
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
   * @param {TaskRecord} record
   */
  #cas(id, ok, record) {
    const out = { written: false };
    return this.#tx('readwrite', (s, fail) => {
      s.get(id).onsuccess = (e) => {
        if (!ok(/** @type {IDBRequest} */ (e.target).result)) return;
        try {
          s.put(record);
          out.written = true;
        } catch (err) {
          fail(err);
        }
      };
    }).then(() => out.written);
  }

  /** @param {TaskRecord} record */
  add(record) {
    checkId(record?.id);
    return this.#cas(record.id, (cur) => cur === undefined, record);
  }

  /** @param {string} id */
  async get(id) {
    /** @type {IDBRequest | undefined} */
    let req;
    await this.#tx('readonly', (s) => (req = s.get(id)));
    return /** @type {IDBRequest} */ (req).result;
  }

  active() {
    return this.earliest(undefined);
  }

  /** @param {number} [limit] */
  async earliest(limit) {
    /** @type {IDBRequest<any[]>[]} */
    const reqs = [];
    await this.#tx('readonly', (s) => {
      for (const [name, , state] of IDB_INDEXES) {
        if (state) reqs.push(s.index(name).getAll(IDBKeyRange.bound([state, -Infinity], [state, Infinity]), limit));
      }
    });
    return reqs.flatMap((r) => r.result);
  }

  /**
   * @param {TaskRecord} expected
   * @param {TaskRecord} next
   */
  swap(expected, next) {
    return this.#cas(expected.id, (cur) => !!cur && cur.version === expected.version, next);
  }

  /**
   * @param {number} before
   * @param {TaskRecord['state'][]} states
   */
  purge(before, states) {
    let n = 0;
    return this.#tx('readwrite', (s) => {
      for (const state of states) {
        s.index('age').openKeyCursor(IDBKeyRange.bound([state, -Infinity], [state, before])).onsuccess = (e) => {
          const c = /** @type {IDBRequest<IDBCursor | null>} */ (e.target).result;
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
    /** @type {IDBRequest | undefined} */
    let req;
    await this.#tx('readonly', (s) => (req = s.getAll()));
    return /** @type {IDBRequest} */ (req).result;
  }

  /** Closes the connection (reopened on next use). */
  async close() {
    const db = this.#db;
    this.#db = undefined;
    (await db?.catch(() => undefined))?.close();
  }
}
