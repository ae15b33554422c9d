// wasm-backoff/otel in Node: the shared scenarios (otel-checks.mjs) against
// the scripted server and the OpenTelemetry SDK's in-memory exporters, with
// the package as it ships (its `exports`); then what needs Node's context
// manager: a caller's active span is the call's parent.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import * as main from 'wasm-backoff';
import { createGate, createLimiter } from 'wasm-backoff/gate';
import { RetryBudget } from 'wasm-backoff/budget';
import { instrument } from 'wasm-backoff/otel';
import { context, trace, ROOT_CONTEXT } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startScripted } from '../server/scripted.mjs';
import { otelScenarios } from './otel-checks.mjs';

const lib = { ...main, createGate, createLimiter, RetryBudget };

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

test('the shared otel scenarios pass in Node', async () => {
  assert.deepEqual(await otelScenarios({ lib, instrument }, srv.url), []);
});

/** A context manager on AsyncLocalStorage (what @opentelemetry/context-async-hooks does), for this test alone. */
class Als {
  #als = new AsyncLocalStorage();
  active = () => this.#als.getStore() ?? ROOT_CONTEXT;
  with = (ctx, fn, thisArg, ...args) => this.#als.run(ctx, () => fn.call(thisArg, ...args));
  bind = (_ctx, target) => target;
  enable = () => this;
  disable = () => (this.#als.disable(), this);
}

test("the caller's active span is the call's parent; spans made in an attempt nest under it", async () => {
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
        instrument({ baseMs: 1 }, { tracer }),
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

test('telemetry never changes an outcome: a tracer, span or meter that throws', async (t) => {
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
      const p = `/broken-${name.length}-${m ? 'm' : 't'}`;
      srv.script(p, [{ status: 503 }, { status: 200, body: 'ok' }]);
      let done;
      const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const opts = instrument({ baseMs: 1, maxElapsedMs: 60_000, onDone: (d) => (done = d) }, m ? { tracer, meter: m } : { tracer });
      const res = await main.fetchWithBackoff(srv.url + p, undefined, opts);
      assert.equal(res.status, 200, `${name}${m ? ' + meter' : ''}`);
      assert.equal(await res.text(), 'ok');
      assert.equal(done?.reason, 'success', 'onDone told');
      assert.equal(srv.count(p), 2);
      const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      assert.equal(after, before, 'the deadline timer was let go');
    }
  }
  assert.ok(errors.mock.callCount() > 0, 'what telemetry threw was reported');
});
