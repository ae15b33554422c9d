// When a section comes near the screen: the demo's simulated views (the
// storm's curves and swimlanes, outage, overload, reconnect) simulate only
// then, so a page opened and read at the top spends no CPU on the views
// below it (the default outage view alone kept a core busy for ~20 s after
// every load; the storm, ~1 s of a worker).

/** Margin around the viewport within which a section counts as near (it is simulated just before it shows). */
const MARGIN = '400px';

/**
 * Calls `then` once, when `element` first comes within MARGIN of the viewport. Watched from after the
 * first paint: before the stylesheet lays the page out, every section is near the top.
 * @param {Element} element
 * @param {() => void} then
 */
function whenNear(element, then) {
  requestAnimationFrame(() =>
    setTimeout(() => {
      const seen = new IntersectionObserver(
        (entries) => {
          if (!entries.some((e) => e.isIntersecting)) return;
          seen.disconnect();
          then();
        },
        { rootMargin: MARGIN },
      );
      seen.observe(element);
    }, 0),
  );
}

/** What a view's status says while it waits for its section to come near. */
export const WAITING = 'simulated when this section comes into view';

/**
 * A view's simulations, held until `element` comes near: the returned function runs `simulate` at once
 * once it has, else keeps it (the last one asked for wins), says WAITING in `status`, draws `blank` (the
 * view with no data yet, at the size it will have: the page below does not move when the data comes),
 * and runs it then.
 * @param {Element} element
 * @param {Element} status
 * @returns {(simulate: () => void, blank?: () => void) => void}
 */
export function untilNear(element, status) {
  let near = false;
  /** @type {(() => void) | undefined} */
  let waiting;
  whenNear(element, () => {
    near = true;
    waiting?.();
    waiting = undefined;
  });
  return (simulate, blank) => {
    if (near) return simulate();
    waiting = simulate;
    status.textContent = WAITING;
    blank?.();
  };
}
