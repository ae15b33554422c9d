// What the main package adds to the calculator: the fetch driver and the backoff gate.
// scripts/build.sh replaces this module per build: empty for the
// calculator-only `wasm-backoff/backoff`, stats.js for `wasm-backoff/stats`.
export { fetchWithBackoff, withBackoff, RetryBudget, parseRetryAfter } from './fetch.js';
export { createGate, Gate, GateOverflowError, GateTimeoutError } from './gate.js';
