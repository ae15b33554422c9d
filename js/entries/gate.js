// @ts-check
// `wasm-backoff/gate`: the per-target backoff gate (the full module).
export { Backoff } from '../backoff.js';
export {
  AdaptiveLimiter,
  BrokenCircuitError,
  createGate,
  createLimiter,
  Gate,
  GateOverflowError,
  GateTimeoutError,
} from '../gate/index.js';
export * from '#fleet';
