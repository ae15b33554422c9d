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

const bin = atob(base64);
// (a plain loop: measured, Uint8Array.from with a callback per byte cost cold starts about a millisecond)
const bytes = new Uint8Array(bin.length);
for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);

/** The module's raw exports. */
export const w = instantiate(new WebAssembly.Module(bytes));
