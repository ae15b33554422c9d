// @ts-check
// The fleet's exports in every build but workerd's (scripts/bundle.mjs
// resolves `#fleet` to js/fleet/workerd.js there): the same names, which say
// where they work (js/load/elsewhere.js), so that the .d.ts holds everywhere
// and browsers do not download the shared gate's code.
import { only, stub } from '../load/elsewhere.js';

export const GateObject = stub('GateObject', 'gate');
export const SharedGate = stub('SharedGate', 'gate');
export const SharedBudget = stub('SharedBudget', 'gate');
export const sharedGate = () => only('sharedGate', 'gate');
export const sharedBudget = () => only('sharedBudget', 'gate');
