// @ts-check
// Node, Deno and Bun (the `node` condition): reads and instantiates the
// module synchronously, so the entry also loads through require(esm).
import { readFileSync } from 'node:fs';
import { instantiate } from './instantiate.js';

/** The module's raw exports. */
export const w = instantiate(new WebAssembly.Module(readFileSync(new URL(WASM, import.meta.url))));
