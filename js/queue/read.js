// What a pass reads from a store: the earliest tasks of each active state.
import { describe } from './errors.js';
import { INDEXED, isTask } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

/**
 * `earliest(limit)` for a store that only lists its active records (each pass then reads them all).
 * @param {any[]} records what the store handed back (malformed ones included)
 * @param {number} limit
 */
function earliestOf(records, limit) {
  return Object.entries(INDEXED).flatMap(([state, key]) =>
    records
      .filter((r) => r?.state === state)
      .sort((/** @type {TaskRecord} */ a, /** @type {TaskRecord} */ b) => a[key] - b[key])
      .slice(0, limit),
  );
}

/**
 * The `limit` earliest tasks of each state in `store`, by due time, and
 * `last`: the last one of each state whose list is full (more may wait
 * behind it). Malformed records (handed to `malformed`) take no place: while
 * a state's list is full with fewer than `limit` tasks, the read goes on
 * past them (one more record per malformed one), so tasks behind them still run.
 * @param {any} store a TaskStore
 * @param {number} limit
 * @param {(r: unknown) => void} malformed
 */
export async function readTasks(store, limit, malformed) {
  const at = (/** @type {TaskRecord} */ r) => (r.state === 'pending' ? r.nextAttemptAt : r.completeBy);
  /** By due time, then by age. */
  const byDue = (/** @type {TaskRecord} */ a, /** @type {TaskRecord} */ b) => at(a) - at(b) || a.createdAt - b.createdAt;
  for (let n = limit; ; ) {
    const read = store.earliest ? await store.earliest(n) : earliestOf(await store.active(), n);
    /** @type {Record<string, TaskRecord[]>} */
    const tasks = { pending: [], processing: [] };
    /** @type {Record<string, number>} */
    const seen = { pending: 0, processing: 0 };
    let skipped = 0;
    let unplaced = 0; // malformed records of no active state: they may belong to either list
    for (const r of read) {
      const state = typeof r === 'object' && r !== null && Object.hasOwn(INDEXED, r.state) ? r.state : undefined;
      if (state) seen[state]++;
      else unplaced++;
      if (isTask(r)) tasks[/** @type {string} */ (state)].push(r);
      else {
        skipped++;
        malformed(r);
      }
    }
    // A state whose read was full and holds fewer than `limit` tasks: read past what was skipped.
    const more = Object.keys(tasks).some((x) => tasks[x].length < limit && seen[x] + unplaced >= n);
    if (more && limit + skipped > n) {
      n = limit + skipped;
      continue;
    }
    /** @type {Partial<Record<string, TaskRecord>>} */
    const last = {};
    for (const [state, list] of Object.entries(tasks)) {
      list.sort(byDue);
      list.length = Math.min(list.length, limit);
      if (list.length === limit) last[state] = list[limit - 1];
    }
    const records = [...tasks.pending, ...tasks.processing].sort(byDue);
    return { records, last };
  }
}

/**
 * Reports each record that is no task's once per id and version (the passes
 * leave it alone and step past it): `report(error, record)`.
 * @param {(error: TypeError, record: any) => void} report
 * @returns {(r: any) => void}
 */
export function reporter(report) {
  const reported = new Set(); // id@version
  return (r) => {
    const key = `${describe(r?.id)}@${describe(r?.version)}`;
    if (reported.has(key)) return;
    reported.add(key);
    report(
      new TypeError(
        `malformed task record ${key}: ${r?.missing === true ? 'its index entry has no record' : "its state or times are not a task's"}`,
      ),
      r,
    );
  };
}
