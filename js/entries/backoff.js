// @ts-check
// `wasm-backoff/backoff`: the calculator alone (the small module, shared
// with `wasm-backoff`: a page importing both downloads it once).
export { Backoff } from '../backoff.js';
