// @ts-check
// `wasm-backoff/sse`: EventSource, reconnecting on the engine's schedule
// (the small module: the calculator; the policy and the server-wait
// readers; nothing of the fetch driver's options).
export { EventSource } from '../sse/event-source.js';
