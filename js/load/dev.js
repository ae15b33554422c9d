// @ts-check
// The sources run by Node as they are, unbundled (tests/engine/ imports
// js/engine/loop.js, js/gate/ …): the root package.json's "imports" maps
// `#load` here. It instantiates the full module (every export; not shipped), which
// `bash scripts/build.sh` leaves in target/js/.
// The real builds never see this file: scripts/bundle.mjs resolves `#load`
// to a runtime's loader first, and tsc reads tsconfig.json's `paths`.
import { readFileSync } from 'node:fs';
import { instantiate } from './instantiate.js';

/** The module's raw exports. */
export const w = instantiate(new WebAssembly.Module(readFileSync(new URL('../../target/js/wasm_backoff_full.wasm', import.meta.url))));
