// Prototype (a), synchronous: the .wasm inside the entry as base64, compiled
// and instantiated synchronously like node.mjs does. No top-level await, no
// fetch, no URL: every bundler (and every build target) takes it as plain JS.
// Chromium allows synchronous compilation on the main thread up to 8 MB;
// the module is 14 KB.
import wasm from './wasm_base64.js';
import { initSync } from './wasm_backoff.js';
import { attach } from './backoff.js';

attach(initSync({ module: new WebAssembly.Module(Uint8Array.from(atob(wasm), (c) => c.charCodeAt(0))) }));

export { Backoff } from './backoff.js';
export * from './extra.js';
