// Cloudflare Workers / workerd: compiling wasm from bytes is forbidden there,
// so the .wasm is imported as a compiled WebAssembly.Module (wrangler's
// default CompiledWasm rule) and instantiated synchronously.
import wasmModule from './wasm_backoff_bg.wasm';
import { initSync } from './wasm_backoff.js';
import { attach } from './backoff.js';

attach(initSync({ module: wasmModule }));

export { Backoff } from './backoff.js';
export * from './extra.js';
