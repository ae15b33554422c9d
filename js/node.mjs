// Node (and Deno / Bun through the "node" condition): reads and instantiates
// the module synchronously, so this entry also loads through require(esm).
import { readFileSync } from 'node:fs';
import { initSync } from './wasm_backoff.js';
import { attach } from './backoff.js';

attach(initSync({ module: readFileSync(new URL('./wasm_backoff_bg.wasm', import.meta.url)) }));

export { Backoff } from './backoff.js';
export * from './extra.js';
