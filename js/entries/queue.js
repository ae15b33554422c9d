// @ts-check
// `wasm-backoff/queue`: the durable task queue (the full module).
export { Backoff } from '../backoff.js';
export { TaskQueue, TaskEvent, PermanentError, MemoryStore, IndexedDBStore } from '../queue/task-queue.js';
// Durable Objects: the real classes in the workerd build, stand-ins elsewhere (scripts/bundle.mjs).
export { DurableObjectStore, TaskQueueObject, enqueueTo } from '#edge';
