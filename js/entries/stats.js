// @ts-check
// `wasm-backoff/stats`: the calculator and the statistics of its delays (the full module).
export { Backoff } from '../backoff.js';
export { backoffStats } from '../stats.js';
