// @ts-check
// `wasm-backoff/ws`: a reconnecting WebSocket on the engine's schedule (the
// small module: the calculator and the policy; nothing of the fetch driver).
export { WebSocket } from '../ws/websocket.js';
