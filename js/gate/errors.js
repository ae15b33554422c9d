// @ts-check
// The gate's errors: a held call dropped (GateOverflowError), one that ran
// out of attempts or time (GateTimeoutError), one refused by an open
// circuit (BrokenCircuitError).

const named = (/** @type {unknown} */ key) => (typeof key === 'string' ? key : 'the target');

/** A held call dropped because the target's queue was full (`maxQueued`). */
export class GateOverflowError extends Error {
  /** @param {unknown} key */
  constructor(key) {
    super(`the backoff gate's queue for ${named(key)} is full (maxQueued)`);
    this.name = /** @type {const} */ ('GateOverflowError');
    this.key = key;
  }
}

/** A held call that ran out of attempts or time before the target recovered. */
export class GateTimeoutError extends Error {
  /**
   * @param {unknown} key
   * @param {'exhausted' | 'deadline'} reason
   */
  constructor(key, reason) {
    super(`gave up waiting for ${named(key)} to recover (${reason === 'deadline' ? 'maxElapsedMs' : 'maxAttempts'})`);
    this.name = /** @type {const} */ ('GateTimeoutError');
    this.key = key;
    /** 'exhausted' (maxAttempts) or 'deadline' (maxElapsedMs). */
    this.reason = reason;
  }
}

/**
 * A call refused at once because its target's circuit is open (`mode:
 * 'fail-fast'`), or isolated by hand.
 */
export class BrokenCircuitError extends Error {
  /**
   * @param {unknown} key
   * @param {number} retryAfterMs
   * @param {boolean} isolated
   */
  constructor(key, retryAfterMs, isolated) {
    super(`the circuit of ${named(key)} is ${isolated ? 'isolated' : 'open'}`);
    this.name = /** @type {const} */ ('BrokenCircuitError');
    this.key = key;
    /** Time until the next probe may go, in whole ms, rounded up where the gate computes it (a call made that long after is not refused again; 0: due now or a probe is out; Infinity: isolated). */
    this.retryAfterMs = retryAfterMs;
    this.isolated = isolated;
  }
}
