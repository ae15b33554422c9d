// @ts-check
// The globals a virtual clock stands in for (js/testing/clock.js):
// setTimeout, clearTimeout, setInterval, clearInterval, Date and
// performance.now(), which every timer of the package (and of most code)
// reads at call time, so replacing them on globalThis reaches code that
// imported nothing of the kit. Each is saved as it was, to be put back.
/** @typedef {import('./timers.js').Timers} Timers */

/** globalThis, read and written as a loose object (the kit's modules patch it and read what a runtime has). */
export const G = /** @type {any} */ (globalThis);
/** Marks the globals while a clock is installed (a second copy of the kit sees it too). */
const MARK = Symbol.for('wasm-backoff.testing.clock');

/**
 * Replaces the globals with functions on `timers` (Date.now() and
 * performance.now() read its time, the latter counting on from its start);
 * returns the function that puts them back. Fails while another clock holds
 * them: two would each put back the other's fakes.
 * @param {Timers} timers
 * @param {boolean} performance whether to make performance.now() virtual too
 */
export function install(timers, performance) {
  const perf = performance ? G.performance : undefined;
  if (G[MARK]) throw new Error('a virtual clock is already installed: uninstall() it first');
  const saved = {
    setTimeout: G.setTimeout,
    clearTimeout: G.clearTimeout,
    setInterval: G.setInterval,
    clearInterval: G.clearInterval,
    Date: G.Date,
  };
  // (undefined: inherited from Performance.prototype, which deleting ours puts back)
  const perfOwn = perf && Object.getOwnPropertyDescriptor(perf, 'now');
  const perfAt = typeof perf?.now === 'function' ? perf.now() : 0;
  /** @param {unknown} handle */
  const clear = (handle) => {
    // (a real timer armed before the clock was installed)
    if (!timers.clear(handle) && handle != null) saved.clearTimeout.call(G, handle);
  };
  Object.assign(G, {
    setTimeout: (/** @type {unknown} */ f, /** @type {unknown} */ ms = 0, /** @type {unknown[]} */ ...args) =>
      timers.set(f, ms, args, false),
    setInterval: (/** @type {unknown} */ f, /** @type {unknown} */ ms = 0, /** @type {unknown[]} */ ...args) =>
      timers.set(f, ms, args, true),
    clearTimeout: clear,
    clearInterval: clear,
    // (Date.now() is a whole number, as the real one: virtual time may carry a fraction)
    Date: virtualDate(saved.Date, () => timers.wholeNow()),
    [MARK]: true,
  });
  try {
    if (perf) Object.defineProperty(perf, 'now', { value: () => perfAt + timers.elapsed, writable: true, configurable: true });
  } catch {}
  return () => {
    Object.assign(G, saved);
    delete G[MARK];
    try {
      if (perfOwn) Object.defineProperty(perf, 'now', perfOwn);
      else if (perf) delete perf.now;
    } catch {}
  };
}

/**
 * A Date on the virtual time: `Date.now()`, `new Date()` and `Date()` read
 * `epoch`; with arguments it is the real one. It shares the real Date's
 * prototype, so `instanceof Date` and every method hold for dates either made.
 * @param {DateConstructor} RealDate
 * @param {() => number} epoch
 */
function virtualDate(RealDate, epoch) {
  function VirtualDate(/** @type {any[]} */ ...a) {
    if (!new.target) return new RealDate(epoch()).toString();
    return Reflect.construct(RealDate, a.length > 0 ? a : [epoch()], new.target);
  }
  VirtualDate.prototype = RealDate.prototype;
  Object.setPrototypeOf(VirtualDate, RealDate);
  Object.defineProperties(VirtualDate, {
    name: { value: 'Date' },
    length: { value: 7 },
    now: { value: epoch, writable: true, configurable: true },
  });
  return VirtualDate;
}
