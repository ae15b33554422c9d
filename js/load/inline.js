// @ts-check
// Bundlers (the `module` condition) and Service Workers (the `…/sync`
// subpaths): the .wasm travels inside the file and is compiled and
// instantiated synchronously, so no bundler has to know about a .wasm
// asset (esbuild and Rollup do not copy one referenced by `new URL(…,
// import.meta.url)`), and there is no top-level await for older build
// targets or service workers to reject. Chromium allows synchronous
// compilation on the main thread up to 8 MB; the modules are a few KB.
//
// The bytes come in hex (scripts/bundle.mjs says why: gzip). Decoding
// them in a fresh Chromium context (bench/cold-trace.mjs) takes 0.1 ms
// with Uint8Array.fromHex (Chromium 140+, Firefox 133+, Safari 18.2+).
// Elsewhere this loop takes 1.0 ms for the small module and 2.1 for the
// full one. (Base64 took 0.4 and 2.4 with the atob loop.)
import hex from '#wasm-hex';
import { instantiate } from './instantiate.js';

const U8 = /** @type {any} (fromHex: not in TypeScript's lib yet) */ (Uint8Array);
/** @type {Uint8Array<ArrayBuffer>} */
let bytes;
if (U8.fromHex) bytes = U8.fromHex(hex);
else {
  bytes = new Uint8Array(hex.length / 2);
  // '0'-'9' are 0x30-0x39 and 'a'-'f' 0x61-0x66: the low four bits, plus 9 for a letter.
  const nibble = (/** @type {number} */ i) => {
    const c = hex.charCodeAt(i);
    return (c & 15) + (c > 57 ? 9 : 0);
  };
  for (let i = 0; i < bytes.length; i++) bytes[i] = (nibble(2 * i) << 4) | nibble(2 * i + 1);
}

/** The module's raw exports. */
export const w = instantiate(new WebAssembly.Module(bytes));
