// bench/queue.mjs in workerd (miniflare): a DurableObjectStore in a
// SQLite-backed object per size. workerd's clock stands still while code
// only computes, so the Node side times each call and subtracts an empty one:
//   /seed?n=&k=&from=&to=    writes records [from, to) (through the store: a transaction each)
//   /earliest?reps=, /active?reps=, /drain, /noop
import { DurableObject } from 'cloudflare:workers';
import { TaskQueue, DurableObjectStore } from '../pkg/queue/workerd.js';
import { records } from './queue-measure.mjs';

export class Bench extends DurableObject {
  store = new DurableObjectStore(this.ctx.storage);

  /** Writes records [from, to) of records(n, k). */
  async seed(n, k, from, to) {
    for (const r of records(n, k).slice(from, to)) await this.store.add(r);
  }

  async reads(method, reps) {
    for (let i = 0; i < reps; i++) await this.store[method](...(method === 'earliest' ? [5] : []));
  }

  async drain(k) {
    let ran = 0;
    await new TaskQueue({ store: this.store, handler: () => void ran++, leaseMs: 600_000 }).drain();
    if (ran !== k) throw new Error(`drained ${ran} tasks, not ${k}`);
  }

  noop() {}
}

export default {
  async fetch(req, env) {
    const u = new URL(req.url);
    const p = (k) => Number(u.searchParams.get(k));
    const obj = env.BENCH.get(env.BENCH.idFromName(u.searchParams.get('n')));
    switch (u.pathname) {
      case '/seed':
        await obj.seed(p('n'), p('k'), p('from'), p('to'));
        break;
      case '/earliest':
      case '/active':
        await obj.reads(u.pathname.slice(1), p('reps'));
        break;
      case '/drain':
        await obj.drain(p('k'));
        break;
      default:
        await obj.noop();
    }
    return new Response('ok');
  },
};
