/**
 * The calculator alone (`Backoff`): a smaller module, for pages that compute schedules and never use the fetch driver.
 * @module wasm-backoff/backoff
 */
export { Backoff, BackoffOptions, Preset, Strategy, Jitter } from '../index.js';
