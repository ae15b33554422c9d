// Browser / bundler / Deno-by-URL entry: compiles the module next to this
// file once, with top-level await, so importers never call an init(). The
// glue's own async loader is not used: compiling here and instantiating with
// initSync lets the bundler drop it (about 400 bytes gzipped).
import { initSync } from './wasm_backoff.js';
import { attach } from './backoff.js';

const url = new URL('./wasm_backoff_bg.wasm', import.meta.url);
// compileStreaming needs the `application/wasm` MIME type; servers that send
// another one get the (slower) compile from bytes instead.
const module = await WebAssembly.compileStreaming(fetch(url)).catch(async () =>
  WebAssembly.compile(await (await fetch(url)).arrayBuffer()),
);
attach(initSync({ module }));

export { Backoff } from './backoff.js';
export * from './extra.js';
