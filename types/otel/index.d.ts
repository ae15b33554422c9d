/**
 * OpenTelemetry spans and metrics for `fetchWithBackoff`, `withBackoff` and `retry` (`instrument`).
 *
 * See docs/telemetry.md. Plain JavaScript: importing it loads no wasm
 * module. `@opentelemetry/api` is its peer dependency (an SDK, if any, is
 * the application's).
 * @module wasm-backoff/otel
 */
import type { Meter, Tracer } from '@opentelemetry/api';
import type { FetchWithBackoff, RetryFnOptions, RetryOptions } from '../index.js';

/** What to record with, and what else to watch. */
export interface InstrumentWith {
  /** Spans are made with it. @default trace.getTracer('wasm-backoff') (the global provider's; a no-op without an SDK) */
  tracer?: Tracer;
  /** Metrics are made with it. @default metrics.getMeter('wasm-backoff') (the global provider's; a no-op without an SDK) */
  meter?: Meter;
  /** Recorded as `wasm_backoff.name` on every metric and span: tells clients apart. @default undefined (none) */
  name?: string;
  /**
   * A gate whose targets' circuit states the gauge `wasm_backoff.gate.target.state` reports (the
   * targets instrumented calls went to, and those `toJSON()` lists). @default options.gate
   */
  gate?: { state(key: unknown): { state: string }; toJSON?(): { targets: Record<string, unknown> } };
  /** An adaptive limiter whose rate the gauge `wasm_backoff.limiter.rate` reports. @default undefined (none) */
  limiter?: { readonly rate: number };
  /** A retry budget whose credit the gauge `wasm_backoff.budget.credit` reports. @default options.budget */
  budget?: { available(nowMs?: number): number };
}

/**
 * Options that trace and measure every call made with them: a copy of
 * `options` with `telemetry` set (for fetchWithBackoff, withBackoff or retry);
 * or, given a client of withBackoff, the client extended with it.
 *
 * Per call: a span (`INTERNAL`, named by the method, or `retry`), a child span per
 * attempt (`CLIENT`, with `http.request.method`, `url.full`, `server.address`,
 * `server.port`, `http.response.status_code`, `error.type`, and
 * `http.request.resend_count` on resends), and an event `wasm_backoff.retry.wait`
 * per wait. Metrics: the histograms `wasm_backoff.client.call.retries` and
 * `wasm_backoff.client.call.retry_delay` (gRPC A96's), the counter
 * `wasm_backoff.client.attempt.started`, and gauges of the gate, limiter and budget watched.
 * @throws {TypeError} naming `tracer`, `meter`, `name`, `gate`, `limiter` or `budget` when one is not what it must be.
 */
export function instrument<F extends FetchWithBackoff>(client: F, with_?: InstrumentWith): F;
export function instrument<O extends RetryOptions | RetryFnOptions>(options?: O, with_?: InstrumentWith): O & Pick<RetryOptions, 'telemetry'>;
