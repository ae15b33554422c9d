// Prototype (b): no top-level await. The .wasm next to the entry is fetched
// and compiled in the background from module evaluation on; `ready` settles
// when it is instantiated. Asynchronous APIs wait for it; the synchronous ones
// (new Backoff, Backoff.sample, new RetryBudget, parseRetryAfter, and the
// option validation withBackoff does when wrapping) cannot, so they throw
// until `ready` has settled. The asset problem (new URL(..., import.meta.url))
// is unchanged.
import { initSync } from './wasm_backoff.js';
import { attach, Backoff as CoreBackoff } from './backoff.js';
import * as driver from './fetch.js';

let loaded = false;
const url = new URL('./wasm_backoff_bg.wasm', import.meta.url);
export const ready = WebAssembly.compileStreaming(fetch(url))
  .catch(async () => WebAssembly.compile(await (await fetch(url)).arrayBuffer()))
  .then((module) => {
    attach(initSync({ module }));
    loaded = true;
  });

function need() {
  if (!loaded) throw new Error("wasm-backoff is still loading: `await ready` (import { ready } from 'wasm-backoff') first");
}

export class Backoff extends CoreBackoff {
  constructor(options) {
    need();
    super(options);
  }
  static sample(options, attempt, count) {
    need();
    return CoreBackoff.sample(options, attempt, count);
  }
}

export class RetryBudget extends driver.RetryBudget {
  constructor(options) {
    need();
    super(options);
  }
}

export async function fetchWithBackoff(input, init, options) {
  await ready;
  return driver.fetchWithBackoff(input, init, options);
}

export function withBackoff(fetchFn, options) {
  let wrapped; // options are validated at the first call, not when wrapping
  return async (input, init) => {
    await ready;
    wrapped ??= driver.withBackoff(fetchFn, options);
    return wrapped(input, init);
  };
}

export function parseRetryAfter(value, nowMs) {
  need();
  return driver.parseRetryAfter(value, nowMs);
}
