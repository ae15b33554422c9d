// @ts-check
// `wasm-backoff/testing`: the test kit for users (plain JavaScript: no wasm
// module to load; nothing of it is in any other entry). A virtual clock the
// package's timers follow, a scripted fetch, and faults injected around any
// fetch.
export { virtualClock } from '../testing/clock.js';
export { scriptedFetch } from '../testing/scripted.js';
export { chaos } from '../testing/chaos.js';
