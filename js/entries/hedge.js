// @ts-check
// `wasm-backoff/hedge`: `hedge(options)`, for the `hedge` option of the fetch
// driver (plain JavaScript: no wasm module to load; the main entry pays
// only for the check of the option).
export { hedge } from '../fetch/hedge.js';
