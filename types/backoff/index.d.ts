/** @module wasm-backoff/backoff */
// `wasm-backoff/backoff`: the calculator alone (a smaller module, for pages
// that compute schedules and never use the fetch driver).
export { Backoff, BackoffOptions, Preset, Strategy, Jitter } from '../index.js';
