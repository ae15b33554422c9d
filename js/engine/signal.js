// @ts-check
// The signal of one attempt: the caller's, the call's hard deadline and the
// attempt's own `timeoutMs`, as one AbortSignal, and what lets go of it.
import { deadline } from '../hooks.js';

const none = () => {};
/** An attempt nothing can abort. @type {[undefined, () => void, undefined]} */
const NOTHING = [undefined, none, undefined];

/**
 * The attempt's signal (undefined when nothing can abort it) and its
 * release, which clears the timeout and every listener this added.
 *
 * Listeners on the caller's signal are removed after the attempt, so a
 * long-lived signal shared by many calls keeps nothing of theirs. The one
 * exception is `follow`: fetch's response body must keep following the
 * caller's signal after the headers (as with plain fetch), which only
 * `AbortSignal.any` can do without a listener of ours left behind; that
 * costs one small entry per attempt on the caller's signal until it is
 * garbage (Node 20: about 130 B each), and only when the caller gave a
 * signal and the call has a timeout or a deadline.
 * @param {import('./call.js').Call} call
 * @param {AbortSignal | undefined} signal the attempt's own (the caller's; a hedge racer's)
 * @param {boolean} follow the caller's signal must reach what the attempt returns (a response body)
 * @returns {[AbortSignal | undefined, () => void, AbortController | undefined]} the signal, its release, and the controller of the timeout
 */
export function attemptSignal(call, signal, follow) {
  const ds = call.ds;
  const t = call.c.timeoutMs;
  if (t === undefined && !(signal && ds)) return signal || ds ? [ds ?? signal, none, undefined] : NOTHING;
  // (the timeout's TimeoutError DOMException, as the deadline's: hooks.js)
  const [ac, timer] = t === undefined ? [new AbortController()] : deadline('timeoutMs', t);
  const onDeadline = () => ac.abort(ds?.reason);
  ds?.addEventListener('abort', onDeadline);
  const onAbort = () => ac.abort(signal?.reason);
  const linked = signal && !follow;
  if (linked) signal.addEventListener('abort', onAbort);
  const release = () => {
    clearTimeout(timer);
    ds?.removeEventListener('abort', onDeadline);
    if (linked) signal.removeEventListener('abort', onAbort);
  };
  return [signal && follow ? AbortSignal.any([signal, ac.signal]) : ac.signal, release, t === undefined ? undefined : ac];
}
