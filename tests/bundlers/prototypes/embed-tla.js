// Prototype (a), asynchronous: the .wasm travels inside the entry as base64
// (wasm_base64.js is generated from the package's optimised .wasm), so no
// bundler has an asset to find; compiled from bytes with top-level await.
import wasm from './wasm_base64.js';
import { initSync } from './wasm_backoff.js';
import { attach } from './backoff.js';

const bytes = Uint8Array.from(atob(wasm), (c) => c.charCodeAt(0));
attach(initSync({ module: await WebAssembly.compile(bytes) }));

export { Backoff } from './backoff.js';
export * from './extra.js';
