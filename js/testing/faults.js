// @ts-check
// What the scripted fetch and chaos share: the failures they make look like
// a real fetch's (a network failure our policy retries; a body cut short),
// and waits on the global timers (the virtual clock's while one is installed).
export { abortable, sleep } from '../hooks.js';

/** A network failure as Node's fetch words it (js/gen/policy.js NETWORK_ERROR: retried). */
export const reset = () =>
  new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET (scripted)'), { code: 'ECONNRESET' }) });

/** A body cut short, as Node's fetch words it (also a network failure to the policy). */
export const cut = () =>
  new TypeError('terminated', { cause: Object.assign(new Error('other side closed (scripted)'), { code: 'UND_ERR_SOCKET' }) });

/** The signal a fetch call carries: its init's, else its Request's. @param {any} input @param {RequestInit | undefined} init */
export const signalOf = (input, init) => init?.signal ?? (input instanceof Request ? input.signal : undefined) ?? undefined;

/** Whether `s` is an HTTP status a Response can carry (200-599). @param {unknown} s */
export const isStatus = (s) => Number.isInteger(s) && /** @type {number} */ (s) >= 200 && /** @type {number} */ (s) <= 599;
