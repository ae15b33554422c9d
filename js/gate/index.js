// @ts-check
// The gate (`wasm-backoff/gate`): one class per file here — Gate
// (gate.js), its call's Ticket (ticket.js, the engine's lane), the slot
// functions that move held calls (slot.js), its errors (errors.js) and
// the adaptive limiter alone (limiter.js).
export { Gate, createGate } from './gate.js';
export { GateOverflowError, GateTimeoutError, BrokenCircuitError } from './errors.js';
export { AdaptiveLimiter, createLimiter } from './limiter.js';
