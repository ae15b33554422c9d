// @ts-check
// The judge of an attempt of the fetch driver or of retry(fn): the policy's
// verdict (js/policy.js) after the caller's shouldRetry.
import { abortable } from '../hooks.js';
import { verdict } from '../policy.js';

/**
 * Whether an attempt of the fetch driver or of retry(fn) is tried again
 * (the verdict's `why`: '' = yes, else why not; js/policy.js), after the
 * caller's shouldRetry; and whether it counts against its target (`hurt`,
 * for a gate).
 * @param {import('./call.js').Call} call
 * @param {import('./loop.js').Outcome} o
 * @param {boolean} http an HTTP attempt (shouldRetry is asked of every answer, not only failures)
 * @param {() => boolean} idempotent asked only when the verdict needs it (a plain success does not)
 * @param {boolean} body the request's body can be sent again
 * @returns {import('./loop.js').Verdict | Promise<import('./loop.js').Verdict>}
 */
export function judge(call, o, http, idempotent, body) {
  const c = /** @type {import('../fetch/options.js').Config} */ (call.c);
  // (without a hook to ask, the answer is at hand: no promise, no tick)
  if (c.shouldRetry && (o.failed || http)) return asked(call, o, idempotent, body);
  return rule(c, o, idempotent, body, undefined);
}

/**
 * The caller's shouldRetry asked (abortable), then the rule.
 * @param {import('./call.js').Call} call
 * @param {import('./loop.js').Outcome} o
 * @param {() => boolean} idempotent
 * @param {boolean} body
 */
async function asked(call, o, idempotent, body) {
  const c = /** @type {import('../fetch/options.js').Config} */ (call.c);
  const hook = /** @type {Function} */ (c.shouldRetry);
  const wants = await abortable(hook({ attempt: call.n, status: o.status, error: o.error, response: o.res }), call.signal, call.ds);
  if (wants !== undefined && typeof wants !== 'boolean') throw new TypeError('shouldRetry must return a boolean or undefined');
  return rule(c, o, idempotent, body, wants);
}

/**
 * The policy's verdict on `o` ('' = another attempt), and whether it
 * counts against its target (`hurt`).
 * @param {import('../fetch/options.js').Config} c
 * @param {import('./loop.js').Outcome} o
 * @param {() => boolean} idempotent
 * @param {boolean} body
 * @param {boolean | undefined} wants
 * @returns {import('./loop.js').Verdict}
 */
function rule(c, o, idempotent, body, wants) {
  const failed = o.failed;
  const s = /** @type {number} */ (o.status);
  // (a plain success needs no verdict: the common case, kept cheap)
  const why =
    failed || c.shouldRetry || s >= 400 || c.retryOn.has(s)
      ? verdict({
          failed,
          network: !!o.network,
          status: s,
          hintMs: o.hintMs,
          retryOn: c.retryOn,
          idempotent: idempotent(),
          replayable: body,
          wants,
          advice: o.advice,
        })
      : 'success';
  // A failure the target caused: one worth a retry, a network failure, a status of retryOn.
  return { why, hurt: !why || (failed ? !!o.network : c.retryOn.has(s)) };
}
