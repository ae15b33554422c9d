// @ts-check
// `wasm-backoff/queue`: the durable task queue (the full module).
export { Backoff } from '../backoff.js';
export { TaskQueue, TaskEvent, PermanentError, MemoryStore, IndexedDBStore } from '../queue.js';
