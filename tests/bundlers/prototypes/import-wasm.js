// Prototype (d), what `esbuild --loader:.wasm=file` would need: the entry
// imports the .wasm itself (a default import, which esbuild's file loader
// turns into the URL of the copied file). Not valid for a browser without a
// bundler, and the other bundlers each want their own setting for it.
import wasmUrl from './wasm_backoff_bg.wasm';
import { initSync } from './wasm_backoff.js';
import { attach } from './backoff.js';

const url = new URL(wasmUrl, import.meta.url);
const module = await WebAssembly.compileStreaming(fetch(url)).catch(async () =>
  WebAssembly.compile(await (await fetch(url)).arrayBuffer()),
);
attach(initSync({ module }));

export { Backoff } from './backoff.js';
export * from './extra.js';
