// A worker that runs a TaskQueue (MemoryStore) inside one request, in
// virtual time (the package's wasm-backoff/testing clock, workerd build):
// tests/queue/queue.workerd.test.mjs. The queue is made per request, since
// workerd forbids random values at module scope and settling one request's
// promises from another. workerd has no setImmediate: the queue's passes
// start on setTimeout(0), which the clock owns too.
import { TaskQueue, PermanentError } from '../../pkg/queue/workerd.js';
import { virtualClock } from '../../pkg/testing/workerd.js';

export default {
  async fetch() {
    const clock = virtualClock(); // Date.now() is 0 until the queue's timers move it
    try {
      const tries = [];
      const events = [];
      const queue = new TaskQueue({
        handler: async (task) => {
          tries.push([task.id, Date.now()]);
          const n = tries.filter(([id]) => id === task.id).length;
          if (task.payload === 'flaky' && n === 1) throw new Error('first try fails');
          if (task.payload === 'doomed') throw new PermanentError('never');
        },
        backoff: { baseMs: 5, jitter: 'none' },
        pollMs: 20,
      });
      let ended = 0;
      const done = new Promise((resolve) => {
        const end = () => ++ended === 3 && resolve();
        queue.addEventListener('processed', end);
        queue.addEventListener('error', end);
      });
      for (const type of ['processed', 'retry', 'error']) queue.addEventListener(type, (e) => events.push([type, e.task.id, Date.now()]));
      queue.start();
      for (const p of ['ok', 'flaky', 'doomed']) await queue.enqueue(p, { id: p });
      await clock.run(done);
      const recs = await Promise.all(['ok', 'flaky', 'doomed'].map((id) => queue.get(id)));
      await clock.run(queue.stop());
      return Response.json({ states: recs.map((r) => [r.id, r.state, r.failureCount]), events, tries, pending: clock.pending() });
    } finally {
      clock.uninstall();
    }
  },
};
