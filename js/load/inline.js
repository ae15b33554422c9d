// @ts-check
// Bundlers (the `module` condition) and Service Workers (the `…/sync`
// subpaths): the .wasm travels inside the file as base64 and is compiled
// and instantiated synchronously, so no bundler has to know about a .wasm
// asset (esbuild and Rollup do not copy one referenced by `new URL(…,
// import.meta.url)`), and there is no top-level await for older build
// targets or service workers to reject. Chromium allows synchronous
// compilation on the main thread up to 8 MB; the modules are a few KB.
import base64 from '#wasm-base64';
import { instantiate } from './instantiate.js';

// Uint8Array.fromBase64 where there is one (Chromium 140+, Firefox 133+,
// Safari 18.2+): measured in a fresh Chromium context (bench/cold-trace.mjs),
// 0.1 ms against 0.4-0.7 ms for the atob loop, the rest's fallback. (A plain
// loop: Uint8Array.from with a callback per byte cost about a millisecond.)
const U8 = /** @type {any} (fromBase64: not in TypeScript's lib yet) */ (Uint8Array);
/** @type {Uint8Array<ArrayBuffer>} */
let bytes;
if (U8.fromBase64) bytes = U8.fromBase64(base64);
else {
  const bin = atob(base64);
  bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
}

/** The module's raw exports. */
export const w = instantiate(new WebAssembly.Module(bytes));
