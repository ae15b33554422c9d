// @ts-check
// Event handler attributes (`onopen`, `onmessage`, …) as the platform's
// EventTargets have them: a function or null; the listener is added at the
// first assignment of a function and keeps its place among the others;
// assigning another function replaces it there, null removes it.

/** Each target's handlers, by type. @type {WeakMap<EventTarget, Map<string, [Function, EventListener]>>} */
const all = new WeakMap();

/**
 * The handler of `type` on `target`, or null.
 * @param {EventTarget} target
 * @param {string} type
 * @returns {any}
 */
export const handler = (target, type) => all.get(target)?.get(type)?.[0] ?? null;

/**
 * Sets the handler of `type` on `target` (anything but a function or an object removes it).
 * @param {EventTarget} target
 * @param {string} type
 * @param {unknown} f
 */
export function setHandler(target, type, f) {
  let mine = all.get(target);
  if (!mine) all.set(target, (mine = new Map()));
  const h = mine.get(type);
  const value = typeof f === 'function' || (typeof f === 'object' && f !== null) ? /** @type {Function} */ (f) : null;
  if (h && value) h[0] = value;
  else if (h) {
    target.removeEventListener(type, h[1]);
    mine.delete(type);
  } else if (value) {
    /** @type {[Function, EventListener]} */
    const entry = [value, (e) => (typeof entry[0] === 'function' ? entry[0].call(target, e) : undefined)];
    mine.set(type, entry);
    target.addEventListener(type, entry[1]);
  }
}

/** An EventTarget with `onopen`, `onmessage` and `onerror` (EventSource's; WebSocket adds `onclose`). */
export class Handlers extends EventTarget {
  /** @returns {((ev: Event) => any) | null} */
  get onopen() {
    return handler(this, 'open');
  }
  set onopen(f) {
    setHandler(this, 'open', f);
  }
  /** @returns {((ev: MessageEvent) => any) | null} */
  get onmessage() {
    return handler(this, 'message');
  }
  set onmessage(f) {
    setHandler(this, 'message', f);
  }
  /** @returns {((ev: any) => any) | null} */
  get onerror() {
    return handler(this, 'error');
  }
  set onerror(f) {
    setHandler(this, 'error', f);
  }
}
