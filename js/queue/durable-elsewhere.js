// @ts-check
// The Durable Object exports in every build but workerd's (scripts/bundle.mjs
// resolves `#edge` to js/queue/durable.js there): the same names, which say where
// they work, so that browsers do not download the Durable Object code.
function only(what) {
  throw new TypeError(
    `${what} works in Cloudflare Workers only: import 'wasm-backoff/queue' there (the package's workerd export condition)`,
  );
}

export class DurableObjectStore {
  constructor() {
    only('DurableObjectStore');
  }

  static remote() {
    return only('DurableObjectStore.remote');
  }
}

export class TaskQueueObject {
  constructor() {
    only('TaskQueueObject');
  }
}

export function enqueueTo() {
  return only('enqueueTo');
}
