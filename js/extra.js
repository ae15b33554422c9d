// What the full package adds to the calculator. The calculator-only build
// (`wasm-backoff/backoff`) replaces this file with an empty module.
export { fetchWithBackoff, withBackoff, RetryBudget, parseRetryAfter } from './fetch.js';
