// What bench/queue.mjs measures of one task store, in whichever runtime it
// runs (Node, a Chromium page, a Durable Object): the store holds `n`
// pending records, `k` of them due (the rest due in an hour).

/** `n` pending task records, the first `k` due now (oldest first), the others in an hour. */
export function records(n, k) {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => ({
    id: `r${String(i).padStart(6, '0')}`,
    payload: { i },
    state: 'pending',
    lockedBy: null,
    completeBy: 0,
    failureCount: 0,
    nextAttemptAt: i < k ? now - k + i : now + 3_600_000 + i,
    createdAt: now,
    seed: i + 1,
    version: 0,
    lastError: null,
  }));
}

/** The median of `reps` timings (ms) of `f()`. */
export async function timed(reps, f) {
  const ms = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    await f();
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b)[ms.length >> 1];
}

/**
 * The read of one pass now (`earliest(concurrency + 1)`, concurrency 4), the
 * read every pass made before (`active()`), and the cost per task of
 * draining the `k` due tasks with a handler that resolves at once (a pass, a
 * claim and a completion each); checks that exactly those `k` ran.
 */
export async function measure(store, TaskQueue, { k, reps }) {
  const earliestMs = await timed(reps, () => store.earliest(5));
  const activeMs = await timed(Math.max(1, reps >> 3), () => store.active());
  let ran = 0;
  const queue = new TaskQueue({ store, handler: () => void ran++, leaseMs: 600_000 });
  const t = performance.now();
  await queue.drain();
  const perTaskMs = (performance.now() - t) / k;
  if (ran !== k) throw new Error(`drained ${ran} tasks, not ${k}`);
  return { earliestMs, activeMs, perTaskMs };
}
