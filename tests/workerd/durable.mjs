// Workers sharing one TaskQueueObject for tests/queue/queue.durable.test.mjs.
// Every worker of the test runs this script (NAME tells which); `host`
// defines the Durable Object class, the others bind it by its script name.
// Each handler run POSTs to the scripted server's /job?id=…&by=… (SCRIPTED),
// which counts them. Routes:
//   POST /enqueue?id=&inMs=      enqueueTo(JOBS) (notBefore = now + inMs)
//   POST /work?ids=a,b           a TaskQueue in this Worker on the object's
//                                store (DurableObjectStore.remote): enqueues
//                                the ids, drains, answers what this Worker ran
//   POST /hang?id=               enqueues and claims a task whose handler
//                                hangs, and answers as soon as it started: the
//                                request ends and takes the handler with it
//   GET  /get?id=  /stats        the record; the object's alarm count and alarm
//   POST /pause?on=1|0  /reset   hold the object's alarm handling; ctx.abort()
//   POST /lone                   enqueues the id 'order-\ud800' (a lone
//                                surrogate) with enqueueTo and by RPC; answers
//                                each error as [name, message] and the ids stored
import { TaskQueue, TaskQueueObject, DurableObjectStore, enqueueTo } from '../../pkg/queue/workerd.js';

/** Runs task `id` as `by`: a POST to the scripted server; a non-2xx answer is a failure. */
async function job(env, id, by, signal) {
  const res = await fetch(`${env.SCRIPTED}/job?id=${encodeURIComponent(id)}&by=${by}`, { method: 'POST', signal });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
}

export class Jobs extends TaskQueueObject {
  get options() {
    return { leaseMs: Number(this.env.LEASE_MS), backoff: { baseMs: 20, jitter: 'none' } };
  }

  handler(task, { signal }) {
    return job(this.env, task.id, 'object', signal);
  }

  // The test's view of the object: how many alarms it handled (kept in storage, across resets).
  async alarm() {
    const s = this.ctx.storage;
    await s.put('test:alarms', ((await s.get('test:alarms')) ?? 0) + 1);
    // Paused by the test: come back soon, run nothing.
    if (await s.get('test:paused')) return s.setAlarm(Date.now() + 20);
    return super.alarm();
  }

  async stats() {
    const s = this.ctx.storage;
    const states = {};
    for (const r of await this.store.list()) states[r?.state] = (states[r?.state] ?? 0) + 1;
    const { running: started } = this.queue;
    return { alarms: (await s.get('test:alarms')) ?? 0, alarm: await s.getAlarm(), states, started };
  }

  async pause(on) {
    await this.ctx.storage.put('test:paused', on);
    if (!on) await this.store.rearm();
  }

  /** The ids of every record stored (the keys' and the records'). */
  async ids() {
    return [...(await this.ctx.storage.list({ prefix: 't:' })).entries()].map(([k, r]) => [k.slice(2), r?.id]);
  }

  reset() {
    this.ctx.abort(new Error('reset by the test'));
  }
}

/** The object (the default name) of this Worker's JOBS binding. */
const object = (env) => env.JOBS.get(env.JOBS.idFromName('default'));

export default {
  async fetch(req, env) {
    const url = new URL(req.url);
    const q = (k) => url.searchParams.get(k);
    switch (url.pathname) {
      case '/enqueue': {
        const id = await enqueueTo(env.JOBS, { from: env.NAME }, { id: q('id'), notBefore: Date.now() + Number(q('inMs') ?? 0) });
        return Response.json(id);
      }
      case '/work': {
        const ran = [];
        const queue = new TaskQueue({
          store: DurableObjectStore.remote(env.JOBS),
          leaseMs: Number(env.LEASE_MS),
          concurrency: 3,
          instanceId: env.NAME,
          handler: async (task, { signal }) => {
            await job(env, task.id, env.NAME, signal);
            ran.push(task.id);
          },
        });
        for (const id of q('ids').split(',')) await queue.enqueue({ from: env.NAME }, { id });
        await queue.drain();
        return Response.json(ran);
      }
      case '/hang': {
        let started;
        const running = new Promise((resolve) => (started = resolve));
        const queue = new TaskQueue({
          store: DurableObjectStore.remote(env.JOBS),
          leaseMs: Number(env.LEASE_MS),
          instanceId: env.NAME,
          handler: (task, { signal }) => {
            started(task);
            return job(env, task.id, env.NAME, signal); // the scripted server never answers
          },
        });
        await queue.enqueue({ from: env.NAME }, { id: q('id') });
        queue.start();
        const task = await running;
        // Answered while the handler waits: the request ends, and workerd drops what it left running.
        return Response.json(await queue.get(task.id));
      }
      case '/get':
        return Response.json((await object(env).get(q('id'))) ?? null);
      case '/stats':
        return Response.json(await object(env).stats());
      case '/pause':
        await object(env).pause(q('on') === '1');
        return Response.json(true);
      case '/lone': {
        const id = 'order-\ud800';
        const caught = async (p) => {
          try {
            return ['resolved', await p];
          } catch (e) {
            return [e.name, e.message];
          }
        };
        const client = await caught(Promise.resolve().then(() => enqueueTo(env.JOBS, {}, { id })));
        const rpc = await caught(object(env).enqueue({}, { id }));
        const stored = await object(env).ids();
        return Response.json({ client, rpc, stored });
      }
      case '/reset':
        try {
          await object(env).reset();
        } catch (e) {
          return Response.json(String(e));
        }
        return Response.json('not reset');
      default:
        return new Response('no such route', { status: 404 });
    }
  },
};
