// The agent of the Scheduler–Agent–Supervisor pattern: runs the handler of
// a task the scheduler claimed (scheduler.js) within its lease, and writes
// what came of it: processed, a failure (failures.js), or a wait for the
// network. Past the lease it gives up silently: the supervisor's sweep
// takes the task back.
import { w } from '../wasm.js';
import { within } from './deadline.js';
import { LEASE_EXPIRED, isNetworkWait, isPermanent, networkWaitsOf, timeout, waitOf } from './errors.js';
import { clone } from './record.js';
/** @typedef {import('./record.js').TaskRecord} TaskRecord */

/**
 * @typedef {object} Parts what the agent works with
 * @property {import('./record.js').TaskStore} store
 * @property {import('./transitions.js').Transitions} t the queue's transitions
 * @property {import('./transitions.js').Transitions} net the waits for the network: the same schedule with no threshold
 * @property {(task: TaskRecord, context: { signal: AbortSignal, completeBy: number }) => unknown} handler
 * @property {import('./failures.js').Failures} failures
 * @property {ReturnType<typeof import('./task-event.js').emitter>} events
 * @property {() => void} done called when a run ended (a slot is free)
 */

/** The handlers in flight of one queue (its slots). */
export class Agent {
  #q;
  #running = new Map(); // id -> promise of the run (settles by completeBy at the latest)
  #retried = 0; // retryNow() calls so far: a run begun before the last one that meets the network is due again at once

  /** @param {Parts} parts */
  constructor(parts) {
    this.#q = parts;
  }

  /** Handlers in flight. */
  get size() {
    return this.#running.size;
  }

  /** @param {string} id */
  has(id) {
    return this.#running.has(id);
  }

  /** Resolves once every handler in flight settled (each by its completeBy at the latest). */
  settled() {
    return Promise.all(this.#running.values());
  }

  /** Connectivity came back (retryNow): a run under way that then meets the network is due again at once. */
  retried() {
    this.#retried++;
  }

  /**
   * Runs the handler of `rec` (claimed: processing, locked by this instance) until its completeBy.
   * @param {TaskRecord} rec
   */
  run(rec) {
    const ac = new AbortController();
    const task = clone(rec);
    const retried = this.#retried;
    const run = within(
      Math.max(0, rec.completeBy - Date.now()),
      () => this.#q.handler(task, { signal: ac.signal, completeBy: rec.completeBy }),
      () => {
        ac.abort(timeout(LEASE_EXPIRED));
        return { expired: true };
      },
      // Past completeBy the agent gives up silently: the sweep takes the task back.
      (outcome) => (outcome.expired ? undefined : this.#outcome(rec, outcome, retried)),
    )
      .catch((e) => this.#q.events.storeError(e, task))
      .finally(() => {
        this.#running.delete(rec.id);
        this.#q.done();
      });
    this.#running.set(rec.id, run);
  }

  /**
   * The handler settled within the lease: processed, or its failure.
   * @param {TaskRecord} rec
   * @param {{ ok?: boolean, error?: unknown }} outcome
   * @param {number} retried the retryNow() count when the run began
   */
  async #outcome(rec, outcome, retried) {
    const now = Date.now();
    // Whatever the handler rejected with (even a value that throws when
    // read) is a failure of the task, never one of the store.
    if (!outcome.ok) return this.#failed(rec, outcome.error, now, retried);
    const n = /** @type {TaskRecord | undefined} */ (this.#q.t.step(w.queue_complete, rec, now));
    if (!n) return;
    n.lockedBy = null;
    // The events carry the record as written.
    if (await this.#q.store.swap(rec, n)) this.#q.events.emit('processed', { task: n });
  }

  /**
   * The handler rejected with `error`: a failure, a permanent one, or a wait for the network.
   * @param {TaskRecord} rec
   * @param {unknown} error
   * @param {number} now
   * @param {number} retried
   */
  async #failed(rec, error, now, retried) {
    const { t, failures } = this.#q;
    const permanent = isPermanent(error);
    const network = !permanent && isNetworkWait(error);
    const n = /** @type {TaskRecord | undefined} */ (
      network ? this.#networkWait(rec, now) : t.step(permanent ? w.queue_fail_permanently : w.queue_fail, rec, now)
    );
    if (!n) return;
    // (connectivity came back while it ran, `online` or `sync`: its retryNow missed this task, so it is due now)
    if (network && retried !== this.#retried) n.nextAttemptAt = now;
    // (a wait the failure names, e.g. a server's Retry-After: the retry is not due before it)
    const wait = waitOf(error);
    if (n.state === 'pending' && wait > n.nextAttemptAt - now) n.nextAttemptAt = now + wait;
    await failures.fail(rec, n, error, now, permanent ? 'permanent' : 'maxFailures');
  }

  /**
   * processing → pending, no failure counted: the handler met the network's
   * failure (`network: true`). The wait is the backoff's delay after
   * `networkWaits + 1` (the core's, with no threshold), so it grows up to
   * the schedule's cap: a browser that is wrong about being online still
   * retries, and `online` or Background Sync bring it forward (retryNow).
   * @param {TaskRecord} rec
   * @param {number} now
   * @returns {TaskRecord | undefined}
   */
  #networkWait(rec, now) {
    const k = networkWaitsOf(rec);
    const d = /** @type {TaskRecord | undefined} */ (this.#q.net.step(w.queue_fail, { ...rec, failureCount: k }, now));
    return d && { ...d, failureCount: rec.failureCount, networkWaits: k + 1 };
  }
}
