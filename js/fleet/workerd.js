// @ts-check
// The shared gate of a fleet, in the workerd build of `wasm-backoff/gate`
// (scripts/bundle.mjs resolves `#fleet` here for workerd, to
// js/fleet/elsewhere.js for the other builds: stubs of the same names that
// throw, saying where they work).
export { GateObject } from './gate-object.js';
export { SharedGate, sharedGate } from './shared-gate.js';
export { SharedBudget, sharedBudget } from './shared-budget.js';
