import { Heap } from './heap.js';
import { INDEXED, checkId, clone } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

/**
 * The default store: records in a Map of this realm (Node, workerd, one page).
 * Instances that share one MemoryStore object share its tasks; nothing
 * survives the process. Each method is synchronous inside, so `swap` is
 * trivially atomic. Pending and processing records are indexed by the time
 * their next step falls due (a heap each), so `earliest` costs O(limit · log n)
 * whatever the backlog.
 */
export class MemoryStore {
  /** @type {Map<string, TaskRecord>} */
  #map = new Map();
  /** @type {Map<string, import('./heap.js').Entry>} id -> the record's live index entry */
  #entries = new Map();
  /** @type {Record<string, Heap>} */
  #heaps = { pending: new Heap(), processing: new Heap() };
  /** @type {Record<string, number>} */
  #live = { pending: 0, processing: 0 };
  #seq = 0;

  /**
   * Indexes the stored record `r` (replacing its entry), or only forgets its entry when it is final.
   * @param {TaskRecord} r
   * @param {TaskRecord} [old]
   */
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

  /** @param {TaskRecord} record */
  async add(record) {
    checkId(record?.id);
    if (this.#map.has(record.id)) return false;
    const r = clone(record);
    this.#map.set(r.id, r);
    this.#index(r);
    return true;
  }

  /** @param {string} id */
  async get(id) {
    const r = this.#map.get(id);
    return r && clone(r);
  }

  async active() {
    const out = [];
    for (const r of this.#map.values()) if (INDEXED[r.state]) out.push(clone(r));
    return out;
  }

  /** @param {number} limit */
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
        out.push(clone(/** @type {TaskRecord} */ (this.#map.get(e.id)))); // (a live entry's record)
      }
    }
    return out;
  }

  /**
   * @param {TaskRecord} expected
   * @param {TaskRecord} next
   */
  async swap(expected, next) {
    const cur = this.#map.get(expected.id);
    if (!cur || cur.version !== expected.version) return false;
    const r = clone(next);
    this.#map.set(expected.id, r);
    this.#index(r, cur);
    return true;
  }

  /**
   * @param {number} before
   * @param {TaskRecord['state'][]} states
   */
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
