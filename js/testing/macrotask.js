// @ts-check
// Real time between virtual timers (the virtual clock, js/testing/clock.js):
// after each timer it fires the clock waits a few real macrotasks, so that
// promise reactions, a stream's read or a setImmediate run before the next
// timer, as they would between two real ones. The real functions are saved
// at import, before a test's own fakes (or the clock's) replace them.
import { G } from './globals.js';

/** Real macrotasks between timers: enough for reactions that hop through a few (a stream's read, a setImmediate). */
const ROUNDS = 5;

// The real macrotask: setImmediate where there is one (Node, Bun), else a
// MessageChannel (browsers, Deno, workerd), else a real setTimeout(0).
export const realTimeout = G.setTimeout;
export const realClear = G.clearTimeout;
const immediate = G.setImmediate;
/** @type {(() => void)[]} */
const posted = [];
/** @type {MessagePort | undefined} */
let port;
/** One real macrotask. @returns {Promise<void>} */
export const macrotask = () =>
  new Promise((resolve) => {
    if (typeof immediate === 'function') return void immediate(resolve);
    if (typeof MessageChannel === 'function') {
      if (!port) {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => /** @type {() => void} */ (posted.shift())();
        port = ch.port2;
      }
      posted.push(resolve);
      return port.postMessage(0);
    }
    realTimeout(resolve, 0);
  });

/** Lets every pending promise reaction run (a few real macrotasks; no virtual time passes). */
export async function drain() {
  for (let i = 0; i < ROUNDS; i++) await macrotask();
}

/**
 * Whether `p` has settled, once pending reactions ran (no virtual time passes).
 * @param {Promise<unknown>} p
 */
export async function settled(p) {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await drain();
  return done;
}
