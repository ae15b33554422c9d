// @ts-check
// Cloudflare Workers / workerd: compiling wasm from bytes is forbidden
// there, so the .wasm is imported as a compiled WebAssembly.Module
// (wrangler's default CompiledWasm rule) and instantiated synchronously.
import module from '#wasm';
import { instantiate } from './instantiate.js';

/** The module's raw exports. */
export const w = instantiate(module);
