// @ts-check
// Instantiates a module built by wasm-bindgen, without its JS glue: only
// numbers cross this boundary, so the glue's string codecs, object wrappers
// and externref table have nothing to do, and the build drops what
// wasm-bindgen added to the module for them (scripts/dce.mjs): the module
// imports nothing. Should a future wasm-bindgen add an import the build
// cannot drop, instantiation fails loudly here (a LinkError), and
// tests/package/boundary.test.mjs says which.

/**
 * @param {WebAssembly.Module} module
 * @returns {import('#exports')}
 */
export const instantiate = (module) => /** @type {any} */ (new WebAssembly.Instance(module).exports);
