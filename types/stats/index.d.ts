/**
 * The statistics of a schedule's delays (`backoffStats`), with the calculator: for charts, dashboards and choosing a policy.
 *
 * Not needed to retry.
 * @module wasm-backoff/stats
 */
import type { BackoffOptions } from '../index.js';
export { Backoff, BackoffOptions, Preset, Strategy, Jitter } from '../index.js';

/** The law of the delay before one retry, in ms. */
export interface DelayStats {
  /** true when computed from the closed form; false when from 100 000 seeded draws (decorrelated, or slotted with extra jitter). */
  exact: boolean;
  min: number;
  /** The largest possible delay (supremum). */
  max: number;
  p50: number;
  p90: number;
  mean: number;
}

/**
 * Statistics of the delay before retry `attempt` (1 = the first retry) under `options`,
 * ignoring attempt and time limits. Without a `seed`, sampled laws use seed 1 (the
 * result describes the policy, not one random stream).
 */
export function backoffStats(options: BackoffOptions | undefined, attempt: number): DelayStats;
