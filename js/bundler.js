// Bundler entry (the "module" export condition: Vite, webpack, esbuild and
// Rollup's node-resolve set it): the .wasm travels inside this file as
// base64 and is compiled and instantiated synchronously. So no bundler has to
// know about a .wasm asset (esbuild and Rollup do not copy one referenced by
// `new URL(…, import.meta.url)`), and there is no top-level await for older
// build targets to reject. Costs ~1.4–2.3 KB gzip over the URL entry; plain
// browsers without a bundler still get index.js. Chromium allows synchronous
// compilation on the main thread up to 8 MB; the module is ~14 KB.
import wasm from './wasm_base64.js';
import { initSync } from './wasm_backoff.js';
import { attach } from './backoff.js';

attach(initSync({ module: new WebAssembly.Module(Uint8Array.from(atob(wasm), (c) => c.charCodeAt(0))) }));

export { Backoff } from './backoff.js';
export * from './extra.js';
