// @ts-check
// `wasm-backoff/query`: retry options for TanStack Query and SWR (the small
// module: the calculator, without the fetch driver).
export { queryRetry, swrRetry } from '../query/index.js';
