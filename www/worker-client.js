// The page's side of a simulation worker (storm-worker.js, outage-worker.js):
// requests carry an id, the worker's answers carry it back; a newer request
// of the same kind makes the answers to the older one be dropped, so a
// quick succession of control changes draws only the last.
export class WorkerClient {
  #id = 0;
  #latest = new Map();
  #handlers = new Map();

  /**
   * The worker starts at the first request, after the page's first paint:
   * its module graph (and its wasm) would otherwise be fetched, parsed and
   * compiled while the page's own modules load, on the same cores.
   * @param {URL} url a module worker that posts `{ready: true}` once it listens
   */
  constructor(url, onError) {
    this.ready = new Promise((resolve) => {
      this.#start = () => {
        const w = new Worker(url, { type: 'module' });
        w.addEventListener('message', ({ data }) => data.ready && resolve(w), { once: true });
        w.addEventListener('message', ({ data }) => this.#handlers.get(data.id)?.(data));
        w.addEventListener('error', onError);
      };
    });
  }

  /** Starts the worker once, after the next paint (or 200 ms: a hidden page paints nothing). */
  #start;
  #wake() {
    const start = this.#start;
    if (!start) return;
    this.#start = undefined;
    let once = () => ((once = () => {}), start());
    requestAnimationFrame(() => setTimeout(() => once()));
    setTimeout(() => once(), 200);
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
    this.#wake();
    (await this.ready).postMessage({ id, ...request });
  }
}
