// @ts-check
// The queue's Durable Object exports in the workerd build (scripts/bundle.mjs
// resolves `#edge` here; js/queue/durable-elsewhere.js stands in elsewhere).
export { DurableObjectStore } from './durable-store.js';
export { TaskQueueObject, enqueueTo } from './queue-object.js';
