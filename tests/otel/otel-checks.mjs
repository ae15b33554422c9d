// The OpenTelemetry SDK's in-memory exporters (`fresh`), and the runtime
// smoke of wasm-backoff/otel: a call through the runtime's own fetch
// against the real scripted server (tests/server/scripted.mjs, driven over
// HTTP), run by Node (otel.node.test.mjs) and workerd (otel.workerd.test.mjs,
// where tests/workerd/otel.mjs runs it). It asserts outcomes and order,
// never a duration: what telemetry records of waits and delays is timing
// logic, asserted to the millisecond on virtual time in otel.node.test.mjs.
// (in workerd this file is bundled with the SDK by esbuild: the bare imports are resolved then)
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { control } from '../fetch/fetch-checks.mjs';

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

export const CLIENT = 2; // SpanKind.CLIENT
export const INTERNAL = 0; // SpanKind.INTERNAL
export const ERROR = 2; // SpanStatusCode.ERROR

let unique = 0;
const path = (name) => `/otel-${name}-${Date.now().toString(36)}-${unique++}`;

/** A tracer and a meter of fresh SDK providers with in-memory exporters. */
export function fresh() {
  const spans = new InMemorySpanExporter();
  const tp = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 600_000 });
  const mp = new MeterProvider({ readers: [reader] });
  return {
    tracer: tp.getTracer('test'),
    meter: mp.getMeter('test'),
    spans: () => spans.getFinishedSpans(),
    /** The metrics collected now: name -> data points. */
    async metrics() {
      await reader.forceFlush();
      const all = exporter.getMetrics();
      const out = new Map();
      for (const sm of all.at(-1)?.scopeMetrics ?? []) for (const m of sm.metrics) out.set(m.descriptor.name, m.dataPoints);
      return out;
    },
    async close() {
      await Promise.all([tp.shutdown(), mp.shutdown()]);
    },
  };
}

export const parentOf = (s) => s.parentSpanContext?.spanId;

/** name -> async ({ lib, instrument }, ctl) => void */
export const SMOKES = {
  async "the runtime's fetch: a span per call, one per attempt in order, a network failure named by the runtime's error"(
    { lib, instrument },
    ctl,
  ) {
    const t = fresh();
    const p = path('smoke');
    await ctl.script(p, [{ status: 503 }, { reset: true }, { status: 200, body: 'ok' }]);
    const f = lib.withBackoff(fetch, instrument({ baseMs: 1, maxDelayMs: 5 }, t));
    const res = await f(`${ctl.base}${p}?q=1`);
    check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
    const spans = t.spans();
    const call = spans.find((s) => s.kind === INTERNAL);
    const attempts = spans.filter((s) => s.kind === CLIENT);
    check(call && attempts.length === 3 && spans.length === 4, `spans ${spans.map((s) => `${s.name}/${s.kind}`)}`);
    check(
      attempts.every((a) => parentOf(a) === call.spanContext().spanId),
      'each attempt a child of the call',
    );
    const url = new URL(`${ctl.base}${p}?q=1`);
    check(
      attempts.every((a) => a.attributes['url.full'] === url.href && a.attributes['server.port'] === Number(url.port)),
      `url.full ${attempts.map((a) => a.attributes['url.full'])}`,
    );
    const [first, second, third] = attempts;
    check([first, second, third].map((a) => a.attributes['http.request.resend_count']).join() === ',1,2', 'resend_count in order');
    check(first.attributes['error.type'] === '503' && first.attributes['http.response.status_code'] === 503, 'the 503 first');
    // (fetch's failure: a TypeError in Node, an Error in workerd; its name either way)
    const type = second.attributes['error.type'];
    check((type === 'TypeError' || type === 'Error') && second.attributes['http.response.status_code'] === undefined, `reset: ${type}`);
    check(second.events.find((e) => e.name === 'exception')?.attributes['exception.type'] === type, 'the exception recorded');
    check(third.attributes['http.response.status_code'] === 200 && third.status.code !== ERROR, 'then the 200');
    check(call.attributes['wasm_backoff.attempts'] === 3 && call.attributes['wasm_backoff.outcome'] === 'success', 'the call');
    const [retries] = (await t.metrics()).get('wasm_backoff.client.call.retries') ?? [];
    check(retries?.value.sum === 2, `retries ${JSON.stringify(retries?.value)}`);
    await t.close();
  },
};

/**
 * Runs the smokes; returns failures as strings.
 * @param {{ lib: any, instrument: Function }} env `lib`: the main entry's drivers
 * @param {string} base the scripted server's URL
 */
export async function otelSmokes(env, base) {
  const ctl = control(base);
  const failures = [];
  for (const [name, fn] of Object.entries(SMOKES)) {
    try {
      await fn(env, ctl);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    }
  }
  return failures;
}
