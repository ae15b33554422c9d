// A worker that runs a TaskQueue (MemoryStore) inside one request:
// tests/queue/queue.workerd.test.mjs. The queue is made per request, since
// workerd forbids random values at module scope and settling one request's
// promises from another.
import { TaskQueue, PermanentError } from '../../pkg/queue/workerd.js';

export default {
  async fetch() {
    const tries = new Map();
    const events = [];
    const queue = new TaskQueue({
      handler: async (task) => {
        const n = (tries.get(task.id) ?? 0) + 1;
        tries.set(task.id, n);
        if (task.payload === 'flaky' && n === 1) throw new Error('first try fails');
        if (task.payload === 'doomed') throw new PermanentError('never');
      },
      backoff: { baseMs: 5 },
      pollMs: 20,
    });
    for (const type of ['processed', 'retry', 'error']) queue.addEventListener(type, (e) => events.push([type, e.task.id]));
    queue.start();
    const ids = [];
    for (const p of ['ok', 'flaky', 'doomed']) ids.push(await queue.enqueue(p, { id: p }));
    const until = Date.now() + 5000;
    let recs;
    for (;;) {
      recs = await Promise.all(ids.map((id) => queue.get(id)));
      if (recs.every((r) => r.state === 'processed' || r.state === 'error') || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await queue.stop();
    return Response.json({ states: recs.map((r) => [r.id, r.state, r.failureCount]), events, tries: [...tries] });
  },
};
