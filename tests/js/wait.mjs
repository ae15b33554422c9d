// Waiting in tests without fixed sleeps: poll a condition until it holds.
import assert from 'node:assert/strict';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the first truthy value of `f()` (polled every 10 ms); fails the test after `ms`, naming `what`. */
export async function until(what, f, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(10);
  }
}
