// @ts-check
// `wasm-backoff/undici`: the retry policy at undici's dispatcher, for every
// `fetch` of a Node process (the small module: the calculator and the fetch
// driver's option reader, without its loop).
export { retryInterceptor, retryDispatcher, retryGlobalFetch } from '../undici/index.js';
