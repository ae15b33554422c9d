// Waiting in tests without fixed sleeps: poll a condition until it holds.
import assert from 'node:assert/strict';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves with the first truthy value of `f()` (awaited; polled every
 * `everyMs`); fails the test after `ms`, naming `what`. The one polling
 * helper of tests/: import it rather than writing another.
 * @template T
 * @param {string} what
 * @param {() => T | Promise<T>} f
 * @param {number} [ms]
 * @param {number} [everyMs] (2 where a test acts within a short round right after)
 * @returns {Promise<T>}
 */
export async function until(what, f, ms = 10_000, everyMs = 10) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The process's pending timers (Node): a test counts them before and after to show none was left behind. */
export const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
