// @ts-check
// `wasm-backoff/failover`: `failover(endpoints)`, for the `endpoints` option
// of the fetch driver (plain JavaScript: no wasm module to load; the main
// entry pays only for the check of the option).
export { failover } from '../fetch/failover.js';
