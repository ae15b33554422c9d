// @ts-check
// `wasm-backoff/quota`: `quota(options)`, for the `limit` option of the
// fetch driver: requests- and tokens-per-minute budgets per key, kept in
// step with OpenAI's and Anthropic's rate-limit headers (plain JavaScript:
// no wasm module to load; the main entry pays only for the check of the option).
export { quota, QuotaError } from '../quota/index.js';
