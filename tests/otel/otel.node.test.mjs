// wasm-backoff/otel in Node. What telemetry records, on virtual time (the
// js/ sources, the kit's clock with performance.now() virtual too, so the
// SDK's span times are; its scriptedFetch): spans per call and attempt,
// their attributes and exact times, the wait events' delays as the clock
// was asked for them, the metrics' retries and waited seconds, gauges, bad
// input, and that telemetry that throws changes no outcome. Then the
// runtime: the shared smoke (otel-checks.mjs) through Node's fetch against
// the real scripted server, with the package as it ships, and what needs
// Node's context manager: a caller's active span is the call's parent.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import * as main from 'wasm-backoff';
import { instrument as pkgInstrument } from 'wasm-backoff/otel';
import { context, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { fetchWithBackoff, retry, withBackoff } from '../../js/fetch/index.js';
import { createGate, createLimiter } from '../../js/gate/index.js';
import { RetryBudget } from '../../js/budget.js';
import { instrument } from '../../js/otel/index.js';
import { scriptedFetch } from '../../js/testing/scripted.js';
import { virtualClock } from '../../js/testing/clock.js';
import { startScripted } from '../server/scripted.mjs';
import { CLIENT, ERROR, INTERNAL, SMOKES, fresh, parentOf } from './otel-checks.mjs';
import { control } from '../fetch/fetch-checks.mjs';

/** The virtual epoch ms every test starts at. */
const T0 = 1_000_000;
// No jitter on the schedule: a 503 waits on the throttling base (10 × baseMs: 20, 40, …), any other failure on baseMs.
const EXACT = { baseMs: 2, maxDelayMs: 100, jitter: 'none' };

/**
 * SDK providers with in-memory exporters (made on real time: the metric
 * reader's interval is the runtime's), then the virtual clock for test `t`
 * (Date.now() = T0, performance.now() virtual). Both undone when it ends.
 */
function setup(t) {
  const sdk = fresh();
  const clock = virtualClock({ now: T0 });
  t.after(async () => {
    try {
      await clock.run(sdk.close());
    } finally {
      clock.uninstall();
    }
  });
  return { sdk, clock, at: () => clock.now() - T0, metrics: () => clock.run(sdk.metrics()) };
}

/** An SDK time ([s, ns]) as virtual ms since T0. */
const ms = ([s, ns]) => s * 1000 + ns / 1e6 - T0;
const near = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-6, `${what}: ${a} vs ${b}`);

test('a span per call, a child span per attempt at its exact times, resend_count, an event per wait with the delay waited', async (t) => {
  const { sdk, clock, at, metrics } = setup(t);
  const f = scriptedFetch([{ status: 503, headers: { 'retry-after-ms': '70' } }, 503, { status: 200, body: 'ok', delayMs: 3 }]);
  const waits = [];
  const api = withBackoff(f, instrument({ ...EXACT, onRetry: (i) => waits.push(i.delayMs) }, sdk));
  const res = await clock.run(api('https://api.test:8443/flaky?q=1'));
  assert.equal(await res.text(), 'ok');
  // The first wait is the server's 70 ms plus its jitter (up to 10 %), the second the throttling base's 40.
  assert.ok(waits[0] >= 70 && waits[0] < 77 && waits[1] === 40, `waits ${waits}`);
  assert.deepEqual(
    clock.asked.filter((x) => x > 0),
    [waits[0], 40, 3],
    'the two waits and the answer’s 3 ms: nothing else waited',
  );
  near(at(), waits[0] + 40 + 3, 'the call ended');

  const spans = sdk.spans();
  const call = spans.find((s) => s.kind === INTERNAL);
  const attempts = spans.filter((s) => s.kind === CLIENT);
  assert.equal(spans.length, 4);
  assert.equal(attempts.length, 3);
  assert.deepEqual([call.name, ...attempts.map((a) => a.name)], ['GET', 'GET', 'GET', 'GET']);
  for (const a of attempts) {
    assert.equal(parentOf(a), call.spanContext().spanId, 'each attempt is a child of the call');
    assert.equal(a.spanContext().traceId, call.spanContext().traceId);
  }
  // Each attempt's span starts when its request went and ends when it was answered.
  const sentAt = f.calls.map((c) => c.at - T0);
  assert.deepEqual(sentAt, [0, Math.floor(waits[0]), Math.floor(waits[0] + 40)]);
  assert.deepEqual(
    attempts.map((a) => ms(a.startTime)),
    sentAt,
  );
  for (const [k, a] of attempts.entries()) near(ms(a.endTime) - ms(a.startTime), k < 2 ? 0 : 3, `attempt ${k + 1}'s span`);
  assert.equal(ms(call.startTime), 0);
  // (the call's span has its own start time, the call's: the SDK then ends it on Date.now(), whole ms)
  assert.equal(ms(call.endTime), Math.floor(waits[0] + 43), 'the call’s span ends with the call');
  for (const [k, a] of attempts.entries()) {
    const x = a.attributes;
    assert.deepEqual(
      [x['http.request.method'], x['url.full'], x['server.address'], x['server.port']],
      ['GET', 'https://api.test:8443/flaky?q=1', 'api.test', 8443],
    );
    assert.equal(x['http.request.resend_count'], k === 0 ? undefined : k);
    assert.equal(x['http.response.status_code'], k < 2 ? 503 : 200);
    assert.equal(x['error.type'], k < 2 ? '503' : undefined);
    assert.equal(a.status.code === ERROR, k < 2);
  }
  const events = call.events.filter((e) => e.name === 'wasm_backoff.retry.wait');
  assert.deepEqual(
    events.map((e) => e.attributes),
    [
      {
        'wasm_backoff.retry.attempt': 1,
        'wasm_backoff.retry.delay_ms': waits[0],
        'wasm_backoff.retry.reason': '503',
        'wasm_backoff.retry.server_wait_ms': 70,
      },
      { 'wasm_backoff.retry.attempt': 2, 'wasm_backoff.retry.delay_ms': 40, 'wasm_backoff.retry.reason': '503' },
    ],
    'each wait event names the delay the clock was asked for',
  );
  assert.deepEqual(
    events.map((e) => ms(e.time)),
    [0, sentAt[1]],
    'told when each answer came',
  );
  assert.deepEqual(
    [call.attributes['wasm_backoff.attempts'], call.attributes['wasm_backoff.outcome'], call.attributes['http.response.status_code']],
    [3, 'success', 200],
  );
  assert.notEqual(call.status.code, ERROR);

  const m = await metrics();
  const [retries] = m.get('wasm_backoff.client.call.retries');
  assert.deepEqual([retries.value.count, retries.value.sum], [1, 2]);
  assert.deepEqual([retries.attributes['wasm_backoff.outcome'], retries.attributes['http.request.method']], ['success', 'GET']);
  // The time with no attempt out: from each answer to the next request, in whole ms (Date.now()).
  const [delay] = m.get('wasm_backoff.client.call.retry_delay');
  assert.deepEqual([delay.value.count, delay.value.sum], [1, sentAt[2] / 1000]);
  const started = m.get('wasm_backoff.client.attempt.started');
  assert.deepEqual(Object.fromEntries(started.map((d) => [d.attributes['wasm_backoff.attempt_type'], d.value])), { original: 1, retry: 2 });
});

test('a POST is not retried: one attempt, the call ends not-idempotent; signed URLs are redacted', async (t) => {
  const { sdk, clock, metrics } = setup(t);
  const f = scriptedFetch([503, 200]);
  const signed = 'https://api.test/post?X-Goog-Signature=secret&part=1&sig=s2';
  const res = await clock.run(withBackoff(f, instrument(EXACT, sdk))(signed, { method: 'POST', body: 'x' }));
  assert.equal(res.status, 503);
  assert.equal(f.count, 1);
  const spans = sdk.spans();
  assert.equal(spans.length, 2);
  for (const s of spans) assert.equal(s.attributes['url.full'], 'https://api.test/post?X-Goog-Signature=REDACTED&part=1&sig=REDACTED');
  const call = spans.find((s) => s.kind === INTERNAL);
  assert.deepEqual(
    [call.name, call.attributes['wasm_backoff.outcome'], call.attributes['error.type'], call.status.code],
    ['POST', 'not-idempotent', '503', ERROR],
  );
  const [retries] = (await metrics()).get('wasm_backoff.client.call.retries');
  assert.deepEqual([retries.value.count, retries.value.sum], [1, 0], 'a call with no retry is counted with 0');
});

test('a network failure: error.type is the error name, the exception is recorded', async (t) => {
  const { sdk, clock } = setup(t);
  const f = scriptedFetch(['reset', 200]);
  const res = await clock.run(fetchWithBackoffOver(f, 'https://api.test/reset', instrument(EXACT, sdk)));
  assert.equal(res.status, 200);
  assert.deepEqual(
    f.calls.map((c) => c.at - T0),
    [0, 2],
    'a network failure waits on baseMs',
  );
  const [first] = sdk.spans().filter((s) => s.kind === CLIENT);
  assert.equal(first.attributes['error.type'], 'TypeError');
  assert.equal(first.attributes['http.response.status_code'], undefined);
  assert.equal(first.events.find((e) => e.name === 'exception')?.attributes['exception.type'], 'TypeError');
});

/** The main entry's fetchWithBackoff, over fetch `f` (withBackoff, called once). */
const fetchWithBackoffOver = (f, url, options, init) => withBackoff(f, options)(url, init);

test('each attempt records the request it sent: beforeRetry moving the call elsewhere', async (t) => {
  const { sdk, clock } = setup(t);
  const f = scriptedFetch({ '/primary': 503, '/secondary': 200 });
  const beforeRetry = ({ request }) => new Request('https://api.test/secondary', request);
  const res = await clock.run(fetchWithBackoffOver(f, 'https://api.test/primary', instrument({ ...EXACT, beforeRetry }, sdk)));
  assert.equal(res.status, 200);
  assert.deepEqual(
    sdk
      .spans()
      .filter((s) => s.kind === CLIENT)
      .map((s) => new URL(s.attributes['url.full']).pathname),
    ['/primary', '/secondary'],
  );
});

test('a timeout: the attempt span ends at exactly timeoutMs, TimeoutError; an abort then ends the call "aborted", at once', async (t) => {
  const { sdk, clock, at } = setup(t);
  const f = scriptedFetch({ hang: true });
  const ac = new AbortController();
  const o = instrument({ ...EXACT, timeoutMs: 30, onRetry: () => ac.abort(new Error('enough')) }, sdk);
  const e = await clock.run(fetchWithBackoffOver(f, 'https://api.test/hang', o, { signal: ac.signal }).catch((x) => x));
  assert.equal(e?.message, 'enough', 'rejects with the reason');
  assert.equal(at(), 30);
  const spans = sdk.spans();
  assert.equal(spans.length, 2, "the call's span and its one attempt's ended (exported)");
  const [first] = spans.filter((s) => s.kind === CLIENT);
  assert.equal(first.attributes['error.type'], 'TimeoutError');
  assert.deepEqual([ms(first.startTime), ms(first.endTime)], [0, 30]);
  const call = spans.find((s) => s.kind === INTERNAL);
  assert.deepEqual([call.attributes['wasm_backoff.outcome'], call.status.code, ms(call.endTime)], ['aborted', ERROR, 30]);
});

test('retry(fn): a call span "retry", INTERNAL attempt spans at the waits’ ends, the same metrics', async (t) => {
  const { sdk, clock, metrics } = setup(t);
  let n = 0;
  const v = await clock.run(
    retry(
      () => {
        if (++n < 3) throw new RangeError(`no ${n}`);
        return 'done';
      },
      instrument(EXACT, { tracer: sdk.tracer, meter: sdk.meter, name: 'jobs' }),
    ),
  );
  assert.deepEqual([v, n], ['done', 3]);
  const spans = sdk.spans();
  const call = spans.find((s) => s.name === 'retry');
  const attempts = spans.filter((s) => s.name === 'attempt');
  assert.equal(attempts.length, 3);
  for (const a of attempts) assert.deepEqual([a.kind, parentOf(a)], [INTERNAL, call.spanContext().spanId]);
  assert.deepEqual(
    attempts.map((a) => ms(a.startTime)),
    [0, 2, 6],
    'waits of baseMs: 2, then 4',
  );
  assert.deepEqual(
    attempts.map((a) => a.attributes['error.type']),
    ['RangeError', 'RangeError', undefined],
  );
  assert.deepEqual(
    attempts.map((a) => a.attributes['wasm_backoff.attempt']),
    [1, 2, 3],
  );
  assert.ok(
    attempts.every((a) => a.attributes['http.request.method'] === undefined),
    'no HTTP attributes',
  );
  assert.equal(call.attributes['wasm_backoff.name'], 'jobs');
  const m = await metrics();
  const [retries] = m.get('wasm_backoff.client.call.retries');
  assert.deepEqual([retries.value.sum, retries.attributes['wasm_backoff.name']], [2, 'jobs']);
  const [delay] = m.get('wasm_backoff.client.call.retry_delay');
  assert.equal(delay.value.sum, 0.006, 'waited 2 + 4 ms');
});

test('gauges: a gate target state, a limiter rate, a budget credit', async (t) => {
  const { sdk, clock, metrics } = setup(t);
  const f = scriptedFetch(200);
  const gate = createGate({ baseMs: 2 });
  const budget = new RetryBudget({ minPerSec: 1, ttlMs: 10_000 });
  const limiter = createLimiter();
  t.after(() => (gate.free(), limiter.free()));
  limiter.record(true); // (throttled once: the limiter turns on, with a finite rate)
  const o = instrument({ ...EXACT, gate, budget }, { tracer: sdk.tracer, meter: sdk.meter, limiter });
  assert.equal((await clock.run(fetchWithBackoffOver(f, 'https://api.test/gated', o))).status, 200);
  const key = 'https://api.test';
  const stateOf = async () =>
    ((await metrics()).get('wasm_backoff.gate.target.state') ?? [])
      .filter((d) => d.attributes['wasm_backoff.gate.target'] === key && d.value === 1)
      .map((d) => d.attributes['wasm_backoff.circuit.state']);
  assert.deepEqual(await stateOf(), ['closed']);
  gate.isolate(key);
  assert.deepEqual(await stateOf(), ['isolated']);
  const m = await metrics();
  const [rate] = m.get('wasm_backoff.limiter.rate');
  assert.ok(Number.isFinite(rate.value));
  assert.equal(rate.value, limiter.rate);
  const [credit] = m.get('wasm_backoff.budget.credit');
  assert.equal(credit.value, budget.available(), 'the credit now (no time passed)');
});

test('a client of withBackoff is extended; without an SDK the globals are no-ops', async (t) => {
  const { sdk, clock } = setup(t);
  const f = scriptedFetch([502, 200]);
  const api = instrument(withBackoff(f, EXACT), sdk);
  assert.equal((await clock.run(api('https://api.test/client'))).status, 200);
  assert.equal(sdk.spans().length, 3);
  // (no SDK registered globally: the API's no-op tracer and meter)
  assert.equal((await clock.run(fetchWithBackoffOver(f, 'https://api.test/client', instrument(EXACT)))).status, 200);
});

test('not a tracer, meter, limiter, budget, name: a TypeError naming it', async () => {
  const cases = [
    [{ tracer: {} }, /tracer must be an OpenTelemetry Tracer/],
    [{ meter: { createHistogram() {} } }, /meter must be an OpenTelemetry Meter/],
    [{ limiter: {} }, /limiter must be an AdaptiveLimiter/],
    [{ budget: 5 }, /budget must be a RetryBudget/],
    [{ name: 1 }, /name must be a string/],
  ];
  for (const [w, re] of cases)
    assert.throws(
      () => instrument({}, w),
      (e) => e instanceof TypeError && re.test(e.message),
      JSON.stringify(w),
    );
  // (the option itself, set by hand: what the engine reads)
  const e = await fetchWithBackoff('http://127.0.0.1:9/x', undefined, { telemetry: 5 }).catch((x) => x);
  assert.ok(e instanceof TypeError && /telemetry must be a function/.test(e.message), `telemetry: 5: ${e}`);
});

test('telemetry never changes an outcome: a tracer, span or meter that throws; the deadline timer is let go', async (t) => {
  const clock = virtualClock({ now: T0 });
  t.after(() => clock.uninstall());
  const errors = t.mock.method(console, 'error', () => {});
  const boom = () => {
    throw new Error('telemetry broke');
  };
  /** A span whose every method throws but isRecording. */
  const badSpan = () => ({
    isRecording: () => true,
    setAttribute: boom,
    setStatus: boom,
    addEvent: boom,
    recordException: boom,
    end: boom,
    spanContext: boom,
  });
  const tracers = {
    'startSpan throws': { startSpan: boom },
    'a span that throws': { startSpan: badSpan },
    'only the attempts’ spans throw': { startSpan: (name) => (name === 'GET' ? badSpan() : trace.getTracer('x').startSpan(name)) },
  };
  const meter = {
    createHistogram: () => ({ record: boom }),
    createCounter: () => ({ add: boom }),
    createObservableGauge: () => ({ addCallback: boom, removeCallback: boom }),
  };
  for (const [name, tracer] of Object.entries(tracers)) {
    for (const m of [undefined, meter]) {
      const f = scriptedFetch([503, { status: 200, body: 'ok' }]);
      let done;
      const start = clock.now();
      const opts = instrument({ ...EXACT, maxElapsedMs: 60_000, onDone: (d) => (done = d) }, m ? { tracer, meter: m } : { tracer });
      const res = await clock.run(fetchWithBackoffOver(f, 'https://api.test/broken', opts));
      const what = `${name}${m ? ' + meter' : ''}`;
      assert.equal(await res.text(), 'ok', what);
      assert.equal(done?.reason, 'success', `${what}: onDone told`);
      assert.equal(f.count, 2);
      assert.equal(clock.now() - start, 20, `${what}: the 503's wait, as without telemetry`);
      assert.equal(clock.pending(), 0, `${what}: the deadline timer was let go`);
    }
  }
  assert.ok(errors.mock.callCount() > 0, 'what telemetry threw was reported');
});

// ---- the runtime: Node's fetch and context manager, real time (outcomes and order only)

let srv;
after(() => srv?.close());

for (const [name, fn] of Object.entries(SMOKES)) {
  test(`Node, the package, a real server: ${name}`, async () => {
    srv ??= await startScripted();
    await fn({ lib: main, instrument: pkgInstrument }, control(srv.url));
  });
}

/** A context manager on AsyncLocalStorage (what @opentelemetry/context-async-hooks does), for this test alone. */
class Als {
  #als = new AsyncLocalStorage();
  active = () => this.#als.getStore() ?? ROOT_CONTEXT;
  with = (ctx, fn, thisArg, ...args) => this.#als.run(ctx, () => fn.call(thisArg, ...args));
  bind = (_ctx, target) => target;
  enable = () => this;
  disable = () => (this.#als.disable(), this);
}

test("Node's context manager: the caller's active span is the call's parent; spans made in an attempt nest under it, across real timers", async () => {
  const spans = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer('t');
  assert.ok(context.setGlobalContextManager(new Als()));
  try {
    let n = 0;
    const outer = tracer.startSpan('outer');
    await context.with(trace.setSpan(context.active(), outer), () =>
      main.retry(
        async () => {
          tracer.startSpan('inside').end();
          if (++n < 2) throw new Error('once');
        },
        pkgInstrument({ baseMs: 1 }, { tracer }),
      ),
    );
    outer.end();
    const by = (name) => spans.getFinishedSpans().filter((s) => s.name === name);
    const [call] = by('retry');
    assert.equal(call.parentSpanContext?.spanId, outer.spanContext().spanId);
    const attempts = by('attempt').map((a) => a.spanContext().spanId);
    assert.equal(attempts.length, 2);
    assert.deepEqual(
      by('inside').map((s) => s.parentSpanContext?.spanId),
      attempts,
      'a span made in attempt k is a child of attempt k',
    );
  } finally {
    context.disable();
  }
});

test('nothing in the main entry names OpenTelemetry', async () => {
  const { readFileSync } = await import('node:fs');
  const src = readFileSync(new URL('../../pkg/index.js', import.meta.url), 'utf8');
  assert.ok(!src.includes('opentelemetry'), 'the main entry does not import @opentelemetry/api');
});
