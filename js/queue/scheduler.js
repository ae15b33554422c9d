// One pass of a queue over its store, the scheduler's and the supervisor's
// part of the Scheduler–Agent–Supervisor pattern: the supervisor sweeps
// leases that expired (the instance holding one crashed, hung or was
// closed), tasks past their retention end, and the scheduler claims due
// tasks for the agent (agent.js) while slots are free. Every write is one
// compare-and-set (`swap`): of two instances deciding the same transition
// at once, one wins and the other moves on.
import { w } from '../wasm.js';
import { DUE_CLAIM, DUE_EXPIRE, DUE_SWEEP } from '../gen/boundary.js';
import { readTasks, reporter } from './read.js';
import { LEASE_EXPIRED, RETENTION, timeout } from './errors.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

/**
 * @typedef {object} Parts what a pass works with
 * @property {import('./record.js').TaskStore} store
 * @property {import('./transitions.js').Transitions} t
 * @property {number} concurrency
 * @property {import('./agent.js').Agent} agent runs the claimed tasks
 * @property {import('./failures.js').Failures} failures writes a sweep's or an expiry's failure
 * @property {() => boolean} on whether passes still run (stop() ends them)
 * @property {() => string} instanceId the `lockedBy` of a claim
 * @property {(error: unknown, record: unknown) => void} storeError reports a malformed record
 */

/** A claim stop() overtook: the pass ends there. */
const STOPPED = -1;

export class Scheduler {
  #q;
  /** Reports a record that is no task's (once per id and version), which the passes then leave alone and step past. */
  #malformed;

  /** @param {Parts} parts */
  constructor(parts) {
    this.#q = parts;
    this.#malformed = reporter(parts.storeError);
  }

  /**
   * One pass: sweep expired leases, claim due tasks while slots are free;
   * resolves with the time the next record falls due. It reads only the records it can act on:
   * the `concurrency + 1` earliest tasks of each state (a full list means more
   * may wait behind its last record), and the malformed records before them.
   */
  async pass() {
    const q = this.#q;
    const { records, last } = await readTasks(q.store, q.concurrency + 1, this.#malformed);
    let next = Infinity;
    for (const r of records) {
      if (!q.on()) break;
      const at = await this.#step(r, Date.now());
      if (at === STOPPED) break;
      next = Math.min(next, at);
    }
    // More records may wait behind a full list: leases to sweep at once, or
    // due tasks for the slots still free (a full slot set waits for a run to end).
    if (last.processing) next = Math.min(next, last.processing.completeBy + 1);
    if (last.pending && q.agent.size < q.concurrency) next = Math.min(next, last.pending.nextAttemptAt);
    return next;
  }

  /**
   * What is due for record `r` at `now`, done; resolves with the time its next step falls due (Infinity: none, or not this pass's to know).
   * @param {TaskRecord} r
   * @param {number} now
   */
  async #step(r, now) {
    const { t, failures } = this.#q;
    // (sweep, expire and claim answer a record whenever queue_due says so)
    const due = t.step(w.queue_due, r, now);
    if (due === DUE_SWEEP) {
      // The supervisor: the instance holding the lease crashed, hung or was closed.
      const swept = /** @type {TaskRecord} */ (t.step(w.queue_sweep, r, now));
      const n = await failures.fail(r, swept, timeout(LEASE_EXPIRED), now, 'maxFailures');
      return n?.state === 'pending' ? n.nextAttemptAt : Infinity;
    }
    if (due === DUE_EXPIRE) {
      await failures.fail(r, /** @type {TaskRecord} */ (t.step(w.queue_expire, r, now)), timeout(RETENTION), now, 'maxRetention');
      return Infinity;
    }
    if (due === DUE_CLAIM) return this.#claim(r, now);
    // sweep a lease as soon as it is over
    return r.state === 'pending' ? r.nextAttemptAt : r.state === 'processing' ? r.completeBy + 1 : Infinity;
  }

  /**
   * The scheduler: claims the due task `r` when a slot is free and runs it;
   * resolves with the end of its lease (Infinity when it was not claimed
   * here), or STOPPED.
   * @param {TaskRecord} r
   * @param {number} now
   */
  async #claim(r, now) {
    const { t, store, agent, concurrency } = this.#q;
    if (agent.size >= concurrency || agent.has(r.id)) return Infinity;
    const c = /** @type {TaskRecord} */ (t.step(w.queue_claim, r, now));
    c.lockedBy = this.#q.instanceId();
    if (!(await store.swap(r, c))) return Infinity;
    if (!this.#q.on()) {
      // stop() came while the claim was being written: no handler may
      // start now, so the task is given back as it was (no failure
      // counted). If this write fails, the sweep takes it back once
      // the lease is over (that counts as a failure).
      await store.swap(c, { ...r, version: c.version + 1 });
      return STOPPED;
    }
    agent.run(c);
    return c.completeBy + 1;
  }
}
