/**
 * Runs user code `f()` (a handler, onCompensate) against a deadline `ms`
 * from now, then `next(outcome)`: `{ ok: true }` or `{ error }` as `f`
 * settled, or what `late()` returned when the deadline came first. The timer
 * is cleared before `next` runs; resolves with what `next` returns.
 * @template T
 * @param {number} ms
 * @param {() => unknown} f
 * @param {() => any} late
 * @param {(outcome: any) => T} next
 */
export function within(ms, f, late, next) {
  /** @type {any} */
  let timer;
  const expired = new Promise((resolve) => {
    timer = setTimeout(() => resolve(late()), ms);
  });
  const work = (async () => f())().then(
    () => ({ ok: true }),
    (error) => ({ error }),
  );
  return Promise.race([work, expired]).then((outcome) => {
    clearTimeout(timer);
    return next(outcome);
  });
}
