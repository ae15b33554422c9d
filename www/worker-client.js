// The page's side of a simulation worker (storm-worker.js, outage-worker.js):
// requests carry an id, the worker's answers carry it back; a newer request
// of the same kind makes the answers to the older one be dropped, so a
// quick succession of control changes draws only the last.
export class WorkerClient {
  #id = 0;
  #latest = new Map();
  #handlers = new Map();

  /** @param {URL} url a module worker that posts `{ready: true}` once it listens */
  constructor(url, onError) {
    this.worker = new Worker(url, { type: 'module' });
    this.ready = new Promise((resolve) => this.worker.addEventListener('message', ({ data }) => data.ready && resolve(), { once: true }));
    this.worker.addEventListener('message', ({ data }) => this.#handlers.get(data.id)?.(data));
    this.worker.addEventListener('error', onError);
  }

  /**
   * Posts `request` (with an id) as the latest of `kind`; `onReply(data)` sees
   * each answer to it while it is the latest, and returns true at the last one.
   */
  async ask(kind, request, onReply) {
    const id = ++this.#id;
    this.#latest.set(kind, id);
    this.#handlers.set(id, (data) => {
      if (this.#latest.get(kind) !== id || onReply(data)) this.#handlers.delete(id);
    });
    await this.ready;
    this.worker.postMessage({ id, ...request });
  }
}
