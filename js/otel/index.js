// @ts-check
// `wasm-backoff/otel`: OpenTelemetry for the fetch driver and retry(fn),
// opt-in. `instrument(options, { tracer, meter })` returns the options with
// `telemetry` set: the engine (js/engine/loop.js) then runs each call's job
// through it (js/otel/tap.js). Nothing of this is in any other entry: a call
// without `telemetry` makes no span and calls nothing.
//
// Metric names are in our own namespace, shaped after gRPC A96
// (`grpc.client.call.retries`, `grpc.client.call.retry_delay`): the
// `http.*` namespace belongs to the semantic conventions, which define no
// per-call retry metric, and retry(fn) is not HTTP at all. Their attributes
// are the conventions' (`http.request.method`, `server.address`, …).
import { createNoopMeter, metrics, trace } from '@opentelemetry/api';
import { own, must, readAll, nullable, spec } from '../options.js';
import { telemetry } from './tap.js';
import { observeAll } from './gauges.js';

/** The instrumentation scope's name (as tracer and meter are got). */
const SCOPE = 'wasm-backoff';

/** Retries per call: gRPC's buckets for small counts. */
const RETRY_BUCKETS = [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20];
/** Seconds waited per call: 5 ms to 5 min. */
const DELAY_BUCKETS = [0, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/** The instruments of each meter (made once: instrument() may be called per client). */
const made = new WeakMap();

/**
 * Whether `v` is an object with every method of `methods`.
 * @param {string[]} methods
 * @returns {(v: any) => boolean}
 */
const shaped = (methods) => (v) => typeof v === 'object' && v !== null && methods.every((m) => typeof v[m] === 'function');

/**
 * instrument()'s second argument (InstrumentWith), in the order it is
 * checked; null is not given (the default) but for `name` and `limiter`.
 * The gate and the budget the options carry are checked as these.
 */
export const INSTRUMENT_OPTIONS = {
  tracer: nullable(spec(shaped(['startSpan']), 'an OpenTelemetry Tracer (trace.getTracer)')),
  meter: nullable(spec(shaped(['createHistogram', 'createCounter', 'createObservableGauge']), 'an OpenTelemetry Meter (metrics.getMeter)')),
  name: spec((v) => typeof v === 'string', 'a string'),
  gate: nullable(spec((v) => typeof v?.state === 'function', "a Gate (createGate from 'wasm-backoff/gate')")),
  limiter: spec((v) => typeof v?.rate === 'number', "an AdaptiveLimiter (createLimiter from 'wasm-backoff/gate')"),
  budget: nullable(spec((v) => typeof v?.available === 'function', 'a RetryBudget')),
};

/**
 * The per-call instruments of `meter` (made at its first use).
 * @param {import('@opentelemetry/api').Meter} meter
 */
function instruments(meter) {
  let m = made.get(meter);
  if (!m) {
    m = {
      retries: meter.createHistogram('wasm_backoff.client.call.retries', {
        description: 'Retries made during a call (the first attempt is not one).',
        unit: '{retry}',
        advice: { explicitBucketBoundaries: RETRY_BUCKETS },
      }),
      delay: meter.createHistogram('wasm_backoff.client.call.retry_delay', {
        description: 'Total time of a call with no attempt in flight (its waits, holds and beforeRetry).',
        unit: 's',
        advice: { explicitBucketBoundaries: DELAY_BUCKETS },
      }),
      started: meter.createCounter('wasm_backoff.client.attempt.started', {
        description: 'Attempts started, by wasm_backoff.attempt_type (original or retry).',
        unit: '{attempt}',
      }),
    };
    made.set(meter, m);
  }
  return m;
}

/**
 * Options (or a client of withBackoff) that trace and measure every call.
 * @param {any} [options] options of fetchWithBackoff, withBackoff or retry; or a client of withBackoff (its `extend`)
 * @param {any} [with_] `{ tracer, meter, name, gate, limiter, budget }`
 */
export function instrument(options, with_) {
  const w = readAll(own(with_, 'the second argument'), INSTRUMENT_OPTIONS);
  const tracer = w.tracer ?? trace.getTracer(SCOPE);
  const meter = w.meter ?? metrics.getMeter(SCOPE);
  const client = typeof options === 'function' && typeof options.extend === 'function';
  const o = client ? Object.create(null) : own(options);
  /** @type {import('@opentelemetry/api').Attributes} */
  const base = w.name === undefined ? {} : { 'wasm_backoff.name': w.name };
  const gate = w.gate ?? must(o.gate || undefined, 'gate', INSTRUMENT_OPTIONS.gate);
  const budget = w.budget ?? must(o.budget, 'budget', INSTRUMENT_OPTIONS.budget);
  const watch = observeAll(meter, base, { gate, limiter: w.limiter, budget });
  const metering = !(meter instanceof /** @type {any} */ (createNoopMeter()).constructor);
  const kit = { tracer, ...instruments(meter), base, seen: watch, metering };
  o.telemetry = telemetry(kit);
  return client ? options.extend({ telemetry: o.telemetry }) : o;
}
