// @ts-check
// `wasm-backoff/dedupe`: `dedupe(options)`, for the `dedupe` option of the
// fetch driver: concurrent identical GETs share one call (plain JavaScript:
// no wasm module to load; the main entry pays only for the check of the option).
export { dedupe } from '../dedupe/index.js';
