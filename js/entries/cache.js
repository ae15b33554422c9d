// @ts-check
// `wasm-backoff/cache`: `staleIfError(options)`, for the `fallback` option
// of the fetch driver: the last good answer of a GET, served (with an `Age`
// header) when a later call for it fails for good (plain JavaScript: no
// wasm module to load).
export { staleIfError } from '../cache/index.js';
