// @ts-check
// The fleet's exports in every build but workerd's (scripts/bundle.mjs
// resolves `#fleet` to js/fleet/workerd.js there): the same names, which say
// where they work, so that the .d.ts holds everywhere and browsers do not
// download the shared gate's code (as js/queue/durable-elsewhere.js for the queue).
function only(what) {
  throw new TypeError(
    `${what} works in Cloudflare Workers only: import 'wasm-backoff/gate' there (the package's workerd export condition)`,
  );
}

export class GateObject {
  constructor() {
    only('GateObject');
  }
}

export class SharedGate {
  constructor() {
    only('SharedGate');
  }
}

export function sharedGate() {
  return only('sharedGate');
}

export class SharedBudget {
  constructor() {
    only('SharedBudget');
  }
}

export function sharedBudget() {
  return only('sharedBudget');
}
