// @ts-check
// The gate (`wasm-backoff/gate`): one class per file here — Gate
// (gate.js), its call's Ticket (ticket.js, the engine's lane), a target's
// Slot (slot.js) and its HeldQueue (held.js), its errors (errors.js) and
// the adaptive limiter alone (limiter.js); beside them, a gate's state as
// JSON (saved.js) and how the core's answers read (answers.js).
export { Gate, createGate } from './gate.js';
export { GateOverflowError, GateTimeoutError, BrokenCircuitError } from './errors.js';
export { AdaptiveLimiter, createLimiter } from './limiter.js';
