// Runs the overload model (overload.js) off the main thread: the package's
// real gate with `limit: 'adaptive'` and fetch driver, and the real
// @smithy/util-retry AdaptiveRetryStrategy (its DefaultRateLimiter), on
// @sinonjs/fake-timers' virtual clock (both bundled by
// scripts/overload-deps.mjs into gen/overload-deps.js), ours then the SDK's.
//   {id, seed} -> {id, kind, result} after each run, then {id, done}
//
// fake-timers yields to the event loop after each timer it fires, with
// setImmediate where there is one, else setTimeout, which a browser clamps to
// 4 ms once nested: a 30 s run fires thousands of timers. So the Worker gets
// a setImmediate (a MessageChannel macrotask, as Node's) before the bundle
// loads; it changes when the simulation yields, never what it computes.
import { stepRuns } from './overload.js';

if (typeof globalThis.setImmediate !== 'function') {
  const ch = new MessageChannel();
  const waiting = [];
  ch.port1.onmessage = () => waiting.shift()();
  globalThis.setImmediate = (fn, ...args) => (waiting.push(() => fn(...args)), ch.port2.postMessage(0));
}
const pkg = (m) => import(new URL(`../pkg/${m ? `${m}/` : ''}index.js`, import.meta.url).href);
const [{ withBackoff }, { createGate }, { AdaptiveRetryStrategy, FakeTimers }] = await Promise.all([
  pkg(''),
  pkg('gate'),
  import('./gen/overload-deps.js'),
]);
const lib = { withBackoff, createGate, AdaptiveRetryStrategy, FakeTimers };
let queue = Promise.resolve(); // one simulation at a time: each owns the clock while it runs

self.onmessage = ({ data: { id, seed } }) => {
  queue = queue
    .then(() => stepRuns(lib, { seed, each: (kind, result) => self.postMessage({ id, kind, result }) }))
    .then(() => self.postMessage({ id, done: true }))
    .catch((e) => self.postMessage({ id, error: String(e) }));
};
self.postMessage({ ready: true });
