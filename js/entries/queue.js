// @ts-check
// `wasm-backoff/queue`: the durable task queue (the full module).
export { Backoff } from '../backoff.js';
export { PermanentError } from '../queue/errors.js';
export { TaskEvent } from '../queue/task-event.js';
export { MemoryStore } from '../queue/memory-store.js';
export { IndexedDBStore } from '../queue/indexeddb-store.js';
export { TaskQueue } from '../queue/task-queue.js';
// Durable Objects: the real classes in the workerd build, stand-ins elsewhere (scripts/bundle.mjs).
export { DurableObjectStore, TaskQueueObject, enqueueTo } from '#edge';
