// Scenarios of wasm-backoff/otel against the real scripted server
// (tests/server/scripted.mjs) and the OpenTelemetry SDK's in-memory
// exporters, shared by Node (otel.node.test.mjs) and workerd
// (otel.workerd.test.mjs, where tests/workerd/otel.mjs runs them). The
// server is driven over HTTP (/__control); each scenario throws or returns
// nothing; `otelScenarios` collects failures by name.
// (in workerd this file is bundled with the SDK by esbuild: the bare imports are resolved then)
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { control } from '../fetch/fetch-checks.mjs';

function check(cond, msg) {
  if (!cond) throw new Error(msg);
}

const FAST = { baseMs: 2, maxDelayMs: 10 }; // real waits, but only milliseconds
const CLIENT = 2; // SpanKind.CLIENT
const INTERNAL = 0; // SpanKind.INTERNAL
const ERROR = 2; // SpanStatusCode.ERROR

let unique = 0;
const path = (name) => `/otel-${name}-${Date.now().toString(36)}-${unique++}`;

/** A tracer and a meter of fresh SDK providers with in-memory exporters. */
function fresh() {
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

const parentOf = (s) => s.parentSpanContext?.spanId;

/** name -> async ({ lib, instrument }, ctl) => void */
export const SCENARIOS = {
  async 'a span per call, a child span per attempt, resend_count on resends, an event per wait'({ lib, instrument }, ctl) {
    const t = fresh();
    const p = path('flaky');
    await ctl.script(p, [{ status: 503, headers: { 'retry-after-ms': '7' } }, { status: 503 }, { status: 200, body: 'ok' }]);
    const f = lib.withBackoff(fetch, instrument(FAST, { tracer: t.tracer, meter: t.meter }));
    const res = await f(ctl.base + p);
    check(res.status === 200 && (await res.text()) === 'ok', `status ${res.status}`);
    const spans = t.spans();
    check(spans.length === 4, `4 spans, got ${spans.map((s) => s.name)}`);
    const call = spans.find((s) => s.kind === INTERNAL);
    const attempts = spans.filter((s) => s.kind === CLIENT);
    check(call && attempts.length === 3, 'one INTERNAL call span, three CLIENT attempt spans');
    check(call.name === 'GET' && attempts.every((a) => a.name === 'GET'), 'spans are named by the method');
    check(
      attempts.every((a) => parentOf(a) === call.spanContext().spanId && a.spanContext().traceId === call.spanContext().traceId),
      'each attempt is a child of the call',
    );
    const url = new URL(ctl.base + p);
    for (const [k, a] of attempts.entries()) {
      const at = a.attributes;
      check(at['http.request.method'] === 'GET', `method ${at['http.request.method']}`);
      check(at['url.full'] === url.href, `url.full ${at['url.full']}`);
      check(at['server.address'] === url.hostname && at['server.port'] === Number(url.port), 'server.address and server.port');
      check(
        at['http.request.resend_count'] === (k === 0 ? undefined : k),
        `attempt ${k + 1}: resend_count ${at['http.request.resend_count']}`,
      );
      check(at['http.response.status_code'] === (k < 2 ? 503 : 200), `attempt ${k + 1}: status ${at['http.response.status_code']}`);
      check(at['error.type'] === (k < 2 ? '503' : undefined), `attempt ${k + 1}: error.type ${at['error.type']}`);
      check((a.status.code === ERROR) === k < 2, `attempt ${k + 1}: span status ${a.status.code}`);
    }
    const waits = call.events.filter((e) => e.name === 'wasm_backoff.retry.wait');
    check(waits.length === 2, `two wait events, got ${waits.length}`);
    check(
      waits.every((e, k) => e.attributes['wasm_backoff.retry.attempt'] === k + 1 && e.attributes['wasm_backoff.retry.reason'] === '503'),
      `wait events ${JSON.stringify(waits.map((e) => e.attributes))}`,
    );
    check(waits[0].attributes['wasm_backoff.retry.server_wait_ms'] === 7, 'the first wait names the server-named wait');
    check(waits[0].attributes['wasm_backoff.retry.delay_ms'] >= 7, 'and waits at least that long');
    check(waits[1].attributes['wasm_backoff.retry.server_wait_ms'] === undefined, 'the second names none');
    check(
      call.attributes['wasm_backoff.attempts'] === 3 && call.attributes['wasm_backoff.outcome'] === 'success',
      'call: attempts, outcome',
    );
    check(call.attributes['http.response.status_code'] === 200 && call.status.code !== ERROR, 'call: final status, not an error');
    const m = await t.metrics();
    const [retries] = m.get('wasm_backoff.client.call.retries') ?? [];
    check(retries?.value.count === 1 && retries.value.sum === 2, `retries per call ${JSON.stringify(retries?.value)}`);
    check(
      retries.attributes['wasm_backoff.outcome'] === 'success' && retries.attributes['http.request.method'] === 'GET',
      'its attributes',
    );
    const [delay] = m.get('wasm_backoff.client.call.retry_delay') ?? [];
    check(delay?.value.count === 1 && delay.value.sum >= 0.007 && delay.value.sum < 5, `retry delay (s) ${JSON.stringify(delay?.value)}`);
    const started = m.get('wasm_backoff.client.attempt.started') ?? [];
    const by = Object.fromEntries(started.map((d) => [d.attributes['wasm_backoff.attempt_type'], d.value]));
    check(by.original === 1 && by.retry === 2, `attempts started ${JSON.stringify(by)}`);
    await t.close();
  },

  async 'a POST is not retried: one attempt, the call ends not-idempotent'({ lib, instrument }, ctl) {
    const t = fresh();
    const p = path('post');
    await ctl.script(p, [{ status: 503 }, { status: 200 }]);
    const signed = `${ctl.base}${p}?X-Goog-Signature=secret&part=1&sig=s2`;
    const res = await lib.fetchWithBackoff(signed, { method: 'POST', body: 'x' }, instrument(FAST, t));
    check(res.status === 503, `status ${res.status}`);
    const spans = t.spans();
    check(spans.length === 2, `2 spans, got ${spans.length}`);
    const full = `${ctl.base}${p}?X-Goog-Signature=REDACTED&part=1&sig=REDACTED`;
    check(
      spans.every((s) => s.attributes['url.full'] === full),
      `signed URLs' secrets redacted: ${spans[0].attributes['url.full']}`,
    );
    const call = spans.find((s) => s.kind === INTERNAL);
    check(call.name === 'POST' && call.attributes['wasm_backoff.outcome'] === 'not-idempotent', 'call: POST, not-idempotent');
    check(call.attributes['error.type'] === '503' && call.status.code === ERROR, 'the call failed with 503');
    const [retries] = (await t.metrics()).get('wasm_backoff.client.call.retries');
    check(retries.value.count === 1 && retries.value.sum === 0, 'a call with no retry is counted with 0');
    await t.close();
  },

  async 'a network failure: error.type is the error name, the exception is recorded'({ lib, instrument }, ctl) {
    const t = fresh();
    const p = path('reset');
    await ctl.script(p, [{ reset: true }, { status: 200 }]);
    const res = await lib.fetchWithBackoff(ctl.base + p, undefined, instrument(FAST, t));
    check(res.status === 200, `status ${res.status}`);
    const [first] = t.spans().filter((s) => s.kind === CLIENT);
    // (fetch's failure: a TypeError in Node, an Error in workerd; its name either way)
    const type = first.attributes['error.type'];
    check(type === 'TypeError' || type === 'Error', `error.type ${type}`);
    check(first.attributes['http.response.status_code'] === undefined, 'no status');
    const exception = first.events.find((e) => e.name === 'exception');
    check(exception?.attributes['exception.type'] === type, `the exception is recorded: ${JSON.stringify(exception?.attributes)}`);
    await t.close();
  },

  async 'each attempt records the request it sent: beforeRetry moving the call elsewhere'({ lib, instrument }, ctl) {
    const t = fresh();
    const [a, b] = [path('primary'), path('secondary')];
    await ctl.script(a, [{ status: 503 }]);
    await ctl.script(b, [{ status: 200 }]);
    const beforeRetry = ({ request }) => new Request(ctl.base + b, request);
    const res = await lib.fetchWithBackoff(ctl.base + a, undefined, instrument({ ...FAST, beforeRetry }, t));
    check(res.status === 200, `status ${res.status}`);
    const urls = t
      .spans()
      .filter((s) => s.kind === CLIENT)
      .map((s) => new URL(s.attributes['url.full']).pathname);
    check(urls.join() === [a, b].join(), `url.full per attempt: ${urls}`);
    await t.close();
  },

  async 'a timeout: error.type TimeoutError; an abort ends both spans, the call "aborted"'({ lib, instrument }, ctl) {
    const t = fresh();
    const p = path('hang');
    await ctl.script(p, [{ hang: true }]);
    const ac = new AbortController();
    const o = instrument({ ...FAST, timeoutMs: 30, onRetry: () => ac.abort(new Error('enough')) }, t);
    const e = await lib.fetchWithBackoff(ctl.base + p, { signal: ac.signal }, o).catch((x) => x);
    check(e?.message === 'enough', `rejects with the reason: ${e}`);
    const spans = t.spans();
    const [first] = spans.filter((s) => s.kind === CLIENT);
    check(first?.attributes['error.type'] === 'TimeoutError', `attempt 1: ${first?.attributes['error.type']}`);
    const call = spans.find((s) => s.kind === INTERNAL);
    check(call?.attributes['wasm_backoff.outcome'] === 'aborted' && call.status.code === ERROR, 'the call ended, aborted');
    check(spans.length === 2, `the call's span and its one attempt's ended (exported): ${spans.length}`);
    await t.close();
  },

  async 'retry(fn): a call span "retry", INTERNAL attempt spans, the same metrics'({ lib, instrument }) {
    const t = fresh();
    let n = 0;
    const v = await lib.retry(
      () => {
        if (++n < 3) throw new RangeError(`no ${n}`);
        return 'done';
      },
      instrument(FAST, { tracer: t.tracer, meter: t.meter, name: 'jobs' }),
    );
    check(v === 'done' && n === 3, `value ${v} after ${n}`);
    const spans = t.spans();
    const call = spans.find((s) => s.name === 'retry');
    const attempts = spans.filter((s) => s.name === 'attempt');
    check(
      call && attempts.length === 3 && attempts.every((a) => a.kind === INTERNAL && parentOf(a) === call.spanContext().spanId),
      'spans',
    );
    check(
      attempts.map((a) => a.attributes['error.type']).join() === 'RangeError,RangeError,',
      `error.type ${attempts.map((a) => a.attributes['error.type'])}`,
    );
    check(
      attempts.every((a, k) => a.attributes['wasm_backoff.attempt'] === k + 1),
      'attempt numbers',
    );
    check(
      attempts.every((a) => a.attributes['http.request.method'] === undefined),
      'no HTTP attributes',
    );
    check(call.attributes['wasm_backoff.name'] === 'jobs', 'the name is on the spans');
    const [retries] = (await t.metrics()).get('wasm_backoff.client.call.retries');
    check(retries.value.sum === 2 && retries.attributes['wasm_backoff.name'] === 'jobs', 'retries per call, named');
    await t.close();
  },

  async 'gauges: a gate target state, a limiter rate, a budget credit'({ lib, instrument }, ctl) {
    const t = fresh();
    const p = path('gated');
    await ctl.script(p, [{ status: 200 }]);
    const gate = lib.createGate({ baseMs: 2 });
    const budget = new lib.RetryBudget({ minPerSec: 1, ttlMs: 10_000 });
    const limiter = lib.createLimiter();
    limiter.record(true); // (throttled once: the limiter turns on, with a finite rate)
    const o = instrument({ ...FAST, gate, budget }, { tracer: t.tracer, meter: t.meter, limiter });
    const res = await lib.fetchWithBackoff(ctl.base + p, undefined, o);
    check(res.status === 200, `status ${res.status}`);
    const key = new URL(ctl.base).origin;
    const stateOf = async () => {
      const points = (await t.metrics()).get('wasm_backoff.gate.target.state') ?? [];
      return points
        .filter((d) => d.attributes['wasm_backoff.gate.target'] === key && d.value === 1)
        .map((d) => d.attributes['wasm_backoff.circuit.state']);
    };
    check((await stateOf()).join() === 'closed', `closed: ${await stateOf()}`);
    gate.isolate(key);
    check((await stateOf()).join() === 'isolated', `isolated: ${await stateOf()}`);
    const m = await t.metrics();
    const [rate] = m.get('wasm_backoff.limiter.rate') ?? [];
    check(rate && Number.isFinite(rate.value) && rate.value === limiter.rate, `limiter rate ${rate?.value} vs ${limiter.rate}`);
    const [credit] = m.get('wasm_backoff.budget.credit') ?? [];
    check(credit && Math.abs(credit.value - budget.available()) < 0.5, `budget credit ${credit?.value} vs ${budget.available()}`);
    gate.free();
    limiter.free();
    await t.close();
  },

  async 'a client of withBackoff is extended; without an SDK the globals are no-ops'({ lib, instrument }, ctl) {
    const t = fresh();
    const p = path('client');
    await ctl.script(p, [{ status: 502 }, { status: 200 }]);
    const f = instrument(lib.withBackoff(fetch, FAST), t);
    check((await f(ctl.base + p)).status === 200, 'status');
    check(t.spans().length === 3, `3 spans, got ${t.spans().length}`);
    await t.close();
    // (no SDK registered globally: the API's no-op tracer and meter)
    const res = await lib.fetchWithBackoff(ctl.base + p, undefined, instrument(FAST));
    check(res.status === 200, 'works with the no-op globals');
  },

  async 'not a tracer, meter, limiter: a TypeError naming it'({ lib, instrument }) {
    const cases = [
      [{ tracer: {} }, /tracer must be an OpenTelemetry Tracer/],
      [{ meter: { createHistogram() {} } }, /meter must be an OpenTelemetry Meter/],
      [{ limiter: {} }, /limiter must be an AdaptiveLimiter/],
      [{ budget: 5 }, /budget must be a RetryBudget/],
      [{ name: 1 }, /name must be a string/],
    ];
    for (const [w, re] of cases) {
      let e;
      try {
        instrument({}, w);
      } catch (x) {
        e = x;
      }
      check(e instanceof TypeError && re.test(e.message), `${JSON.stringify(w)}: ${e}`);
    }
    // (the option itself, set by hand: what the engine reads)
    const e = await lib.fetchWithBackoff('http://127.0.0.1:9/x', undefined, { telemetry: 5 }).catch((x) => x);
    check(e instanceof TypeError && /telemetry must be a function/.test(e.message), `telemetry: 5: ${e}`);
  },
};

/**
 * Runs the scenarios; returns failures as strings.
 * @param {{ lib: any, instrument: Function }} env `lib`: the main entry's drivers plus createGate, createLimiter, RetryBudget
 * @param {string} base the scripted server's URL
 */
export async function otelScenarios(env, base) {
  const ctl = control(base);
  const failures = [];
  for (const [name, fn] of Object.entries(SCENARIOS)) {
    try {
      await fn(env, ctl);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    }
  }
  return failures;
}
