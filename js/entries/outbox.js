// @ts-check
// `wasm-backoff/outbox`: failed requests stored and sent later (the queue
// module: the task queue and the fetch driver).
export { Outbox } from '../queue/outbox.js';
export { PermanentError } from '../queue/errors.js';
export { MemoryStore } from '../queue/memory-store.js';
