// @ts-check
// `wasm-backoff/budget`: RetryBudget, for the `budget` option of the fetch
// driver (plain JavaScript: no wasm module to load).
export { RetryBudget } from '../budget.js';
