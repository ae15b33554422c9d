// @ts-check
// How the gate's JavaScript reads the core's answers: an end and its
// reason, and a timer for an epoch time the core names.
import { END_REASONS } from '../gen/policy.js';
import { ENDED, MAX_TIMER } from '../gen/boundary.js';

/**
 * The reason of an answer `r` of the core (gate_admit, gate_settle,
 * gate_keep) that ends the call (`ENDED` minus its wire order in
 * END_REASONS), else '' (a tag, a delay, a hold code, NaN).
 * @param {number} r
 */
export const ended = (r) => END_REASONS[ENDED - r] ?? '';

/**
 * A timer for the epoch time `t` (ms).
 * @param {() => void} f
 * @param {number} t
 */
export const at = (f, t) => setTimeout(f, Math.min(Math.max(0, Math.ceil(t - Date.now())), MAX_TIMER));
