// @ts-check
// Browsers, workers and Deno by URL (the `default` condition): compiles the
// module next to this file once, with top-level await, so importers never
// call an init(). compileStreaming needs the `application/wasm` MIME type;
// servers that send another one get the (slower) compile from bytes.
// `WASM` is the module's file name, a literal after the build (bundlers
// follow `new URL('…', import.meta.url)` only with a literal).
import { instantiate } from './instantiate.js';

const url = new URL(WASM, import.meta.url);
const module = await WebAssembly.compileStreaming(fetch(url)).catch(async () =>
  WebAssembly.compile(await (await fetch(url)).arrayBuffer()),
);

/** The module's raw exports. */
export const w = instantiate(module);
