// A stand-in for a Durable Object's storage (`ctx.storage`) and its alarm,
// on the global timers (virtual in tests/queue/durable.node.test.mjs): the
// calls DurableObjectStore and TaskQueueObject make (get, put, delete,
// list with prefix / start / startAfter / end / limit in key order,
// transaction, getAlarm, setAlarm, deleteAlarm, sync), values kept as
// structured clones. Its alarm calls `onAlarm()` at its time, one at a
// time. What a restart of local workerd does to it is `forget()`: the
// alarm's time stays stored but nothing is scheduled, and setting that
// same time again changes nothing (only a delete, then a set, schedules
// it anew). The real storage runs in queue.durable.test.mjs (workerd).

export class Storage {
  /** @type {Map<string, unknown>} */
  #data = new Map();
  /** @type {number | null} */
  #alarm = null;
  #timer;
  #scheduled = false;
  /** The transaction in progress (one at a time). */
  #lock = Promise.resolve();
  /** The alarm handler in progress (one at a time). */
  #handling = Promise.resolve();
  /** Called when the alarm fires (the object's alarm()). */
  onAlarm = async () => {};
  /** The times (Date.now()) the alarm fired at. */
  fired = [];

  /** @param {string | string[]} key */
  async get(key) {
    if (!Array.isArray(key)) return structuredClone(this.#data.get(key));
    const out = new Map();
    for (const k of key) if (this.#data.has(k)) out.set(k, structuredClone(this.#data.get(k)));
    return out;
  }

  /** @param {string | Record<string, unknown>} key @param {unknown} [value] */
  async put(key, value) {
    const entries = typeof key === 'string' ? { [key]: value } : key;
    for (const [k, v] of Object.entries(entries)) this.#data.set(k, structuredClone(v));
  }

  /** @param {string | string[]} key */
  async delete(key) {
    if (!Array.isArray(key)) return this.#data.delete(key);
    let n = 0;
    for (const k of key) n += +this.#data.delete(k);
    return n;
  }

  /** @param {{ prefix?: string, start?: string, startAfter?: string, end?: string, limit?: number }} [o] */
  async list(o = {}) {
    const keys = [...this.#data.keys()]
      .filter(
        (k) =>
          (o.prefix === undefined || k.startsWith(o.prefix)) &&
          (o.start === undefined || k >= o.start) &&
          (o.startAfter === undefined || k > o.startAfter) &&
          (o.end === undefined || k < o.end),
      )
      .sort();
    return new Map(keys.slice(0, o.limit ?? Infinity).map((k) => [k, structuredClone(this.#data.get(k))]));
  }

  /** Runs `f(this)` alone: the writes of two transactions never interleave. @template T @param {(t: Storage) => Promise<T>} f */
  transaction(f) {
    const run = this.#lock.then(() => f(this));
    this.#lock = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  async getAlarm() {
    return this.#alarm;
  }

  /** @param {number} at */
  async setAlarm(at) {
    // (local workerd after a restart: the stored time set again schedules nothing)
    if (at === this.#alarm && !this.#scheduled) return;
    this.#alarm = at;
    this.#schedule();
  }

  async deleteAlarm() {
    this.#alarm = null;
    clearTimeout(this.#timer);
    this.#scheduled = false;
  }

  async sync() {}

  /** What a restart of local workerd does: the alarm's time is kept, and forgotten by the scheduler. */
  forget() {
    clearTimeout(this.#timer);
    this.#scheduled = false;
  }

  #schedule() {
    clearTimeout(this.#timer);
    this.#scheduled = true;
    const at = /** @type {number} */ (this.#alarm);
    this.#timer = setTimeout(
      () => {
        this.#scheduled = false;
        this.#alarm = null; // (cleared as the handler starts; it may set the next one)
        this.fired.push(Date.now());
        this.#handling = this.#handling.then(() => this.onAlarm()).catch(() => {});
      },
      Math.max(0, at - Date.now()),
    );
  }
}
