// Prototype (a), compressed: the .wasm deflated (raw deflate, level 9) then
// base64 inside the entry (wasm_deflate_base64.js is generated), inflated by
// the platform's DecompressionStream and compiled with top-level await.
// Base64 of already-compressed bytes gzips to ~ the size of the gzipped .wasm,
// so the embedding costs little on the wire; the price is asynchrony (top-level
// await stays) and DecompressionStream('deflate-raw') (Chrome 103, Firefox 113,
// Safari 16.4).
import wasm from './wasm_deflate_base64.js';
import { initSync } from './wasm_backoff.js';
import { attach } from './backoff.js';

const deflated = new Blob([Uint8Array.from(atob(wasm), (c) => c.charCodeAt(0))]);
const bytes = await new Response(deflated.stream().pipeThrough(new DecompressionStream('deflate-raw'))).arrayBuffer();
attach(initSync({ module: await WebAssembly.compile(bytes) }));

export { Backoff } from './backoff.js';
export * from './extra.js';
