// @ts-check
// `wasm-backoff`: the calculator and the fetch driver (the small module).
export { Backoff } from '../backoff.js';
export { fetchWithBackoff, withBackoff, retry, parseRetryAfter, serverWait } from '../fetch/index.js';
