// @ts-check
// Instantiates one of the package's modules, with no glue: its exports are
// plain extern "C" functions of numbers (src/lib.rs), and it imports
// nothing (scripts/dce.mjs keeps only our exports). Should a build ever
// add an import, instantiation fails loudly here (a LinkError), and
// tests/package/boundary.test.mjs says which.

/**
 * @param {WebAssembly.Module} module
 * @returns {import('#exports')}
 */
export const instantiate = (module) => /** @type {any} */ (new WebAssembly.Instance(module).exports);
