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
