// @ts-check
// `wasm-backoff/auth`: `auth(options)`, for the `auth` option of the fetch
// driver: a header on every attempt, one token refresh shared by every call
// that meets a 401 (plain JavaScript: no wasm module to load; the main entry
// pays only for the check of the option).
export { auth, AuthRefreshError } from '../auth/index.js';
