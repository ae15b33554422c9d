// Property (issue 34): telemetry, hooks and adapters never change an outcome
// or leave a promise unhandled. Random scenarios (fetchWithBackoff,
// withBackoff, wasm-backoff/stream, retry(fn), Node's fetch through
// wasm-backoff/undici; statuses, resets, hangs
// under timeoutMs; decision hooks — shouldRetry, beforeRetry, delay — that
// answer, throw, reject or return junk, the same in both runs) are run
// twice: bare, and with observers installed — onRetry and onDone that
// throw, reject, return junk thenables or promises that never settle, and
// wasm-backoff/otel's instrument with a working tracer, or a tracer, span
// or meter that throws. The outcome (the status and body, or the rejection's
// class, and the number of requests or tries) is the same; no
// `unhandledRejection`; no timer left. And the query adapters
// (wasm-backoff/query) with a broken shouldRetry settle a TanStack query
// as a shouldRetry of `false` would, throwing nothing into it.
//
// Time: both runs must meet the same waits and timeouts, so every driver
// but undici runs on wasm-backoff/testing's virtual clock and scripted
// fetch (a 503 that a loaded machine delivers after the 200 ms timeout
// would otherwise differ between the runs: stressed run 5 at defe44a). The
// undici driver is Node's own fetch, so it keeps the scripted server on
// 127.0.0.1 and real time, with nothing that depends on time: no hang (no
// timeoutMs to meet) and a budget whose window outlasts any case.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWithBackoff, withBackoff, retry } from 'wasm-backoff';
import * as stream from 'wasm-backoff/stream';
import { instrument } from 'wasm-backoff/otel';
import { createGate } from 'wasm-backoff/gate';
import { RetryBudget } from 'wasm-backoff/budget';
import { queryRetry, swrRetry } from 'wasm-backoff/query';
import { retryGlobalFetch } from 'wasm-backoff/undici';
import { QueryClient } from '@tanstack/query-core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { scriptedFetch, virtualClock } from 'wasm-backoff/testing';
import { startScripted } from '../server/scripted.mjs';
import { timers } from '../support/wait.mjs';
import { property } from './props.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

let unique = 0;

/** Lets every pending reaction run, and a late rejection be reported. */
const settle = async () => {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
};

/**
 * Runs `f` with console.error silenced (observers' faults go there) and
 * unhandled rejections collected; resolves with [f's value, the rejections].
 */
async function guarded(f) {
  const unhandled = [];
  const onUnhandled = (e) => unhandled.push(e);
  const error = console.error;
  process.on('unhandledRejection', onUnhandled);
  console.error = () => {};
  try {
    const v = await f();
    await settle();
    return [v, unhandled];
  } finally {
    console.error = error;
    process.off('unhandledRejection', onUnhandled);
  }
}

/**
 * No more timers than `before` once the transient ones of others are gone
 * (the OpenTelemetry SDK's exporter and undici set a few that end in a
 * moment); the options' own are long (timeoutMs, maxElapsedMs: 60 s), so
 * one the library left would still be there.
 */
async function noTimerLeft(before) {
  for (let i = 0; i < 40 && timers() > before; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(timers(), before, 'a timer was left behind');
}

// ---- decision hooks: part of the scenario, the same in both runs ----

const SHOULD = ['none', 'force-404', 'veto-503', 'reads-clone', 'throws', 'rejects', 'junk', 'async-undefined'];
const BEFORE = ['none', 'headers', 'request', 'throws', 'rejects', 'junk', 'async-undefined'];
const DELAY = ['none', 'number', 'false-on-429', 'throws', 'junk', 'promise-rejects'];

function decisions(c, url) {
  /** @type {Record<string, any>} */
  const o = {};
  const boom = () => new Error('a decision hook broke');
  const s = c.decide.shouldRetry;
  if (s !== 'none')
    o.shouldRetry = async ({ status, response }) => {
      if (s === 'force-404') return status === 404 ? true : undefined;
      if (s === 'veto-503') return status === 503 ? false : undefined;
      if (s === 'reads-clone') return response ? (await response.clone().text(), undefined) : undefined;
      if (s === 'throws') throw boom();
      if (s === 'rejects') return Promise.reject(boom());
      if (s === 'junk') return 42;
    };
  // (a synchronous throw too: not only an async function's rejection)
  if (s === 'throws' && c.decide.sync)
    o.shouldRetry = () => {
      throw boom();
    };
  const b = c.decide.beforeRetry;
  if (b !== 'none')
    o.beforeRetry = ({ attempt }) => {
      if (b === 'headers') return { 'x-attempt-seen': String(attempt) };
      if (b === 'request')
        return url
          ? new Request(url, { method: c.method === 'GET' ? 'GET' : 'PUT', body: c.method === 'GET' ? undefined : 'again' })
          : undefined;
      if (b === 'throws') throw boom();
      if (b === 'rejects') return Promise.reject(boom());
      if (b === 'junk') return 42;
      if (b === 'async-undefined') return Promise.resolve(undefined);
    };
  const d = c.decide.delay;
  if (d !== 'none')
    o.delay = ({ status, delayMs }) => {
      if (d === 'number') return Math.min(delayMs, 3);
      if (d === 'false-on-429') return status === 429 ? false : undefined;
      if (d === 'throws') throw boom();
      if (d === 'junk') return 'soon';
      if (d === 'promise-rejects') return Promise.reject(boom());
    };
  return o;
}

// ---- observers: only in the observed run ----

const OBSERVER = ['throws', 'rejects', 'junk-thenable', 'thenable-throws', 'never', 'reads-body', 'mutates', 'ok'];
const TELEMETRY = ['none', 'sdk', 'tracer-throws', 'span-throws', 'recording-throws', 'meter-throws', 'noop'];

function observer(kind) {
  return () => {
    if (kind === 'throws') throw new Error('an observer broke');
    if (kind === 'rejects') return Promise.reject(new Error('an observer rejected'));
    // (thenables made by hand, as junk a hook may return: `then` defined on purpose)
    if (kind === 'junk-thenable') return Object.defineProperty({}, 'then', { value: 5 });
    if (kind === 'thenable-throws')
      return Object.defineProperty({}, 'then', {
        get() {
          throw new Error('a thenable broke');
        },
      });
    if (kind === 'never') return new Promise(() => {});
  };
}

/** An observer that reads the failed response's body, or writes over what it is told. */
function meddler(kind) {
  if (kind === 'reads-body') return (/** @type {any} */ i) => i.response?.text();
  if (kind === 'mutates')
    return (/** @type {any} */ i) => {
      for (const k of Object.keys(i)) i[k] = 'junk';
    };
  return undefined;
}

/** A meter whose instruments throw (or work, recording nothing), shaped as instrument() asks. */
const meter = (throws) => {
  const act = () => {
    if (throws) throw new Error('a meter broke');
  };
  return {
    createHistogram: () => ({ record: act }),
    createCounter: () => ({ add: act }),
    createObservableGauge: () => ({ addCallback: () => {}, removeCallback: () => {} }),
    addBatchObservableCallback: () => {},
    removeBatchObservableCallback: () => {},
  };
};

/** A span whose every method throws (or only isRecording). */
const badSpan = (all) => {
  const boom = () => {
    throw new Error('a span broke');
  };
  const span = {
    spanContext: () => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 }),
    isRecording: all ? () => true : boom,
    setAttribute: all ? boom : () => span,
    setAttributes: all ? boom : () => span,
    addEvent: all ? boom : () => span,
    setStatus: all ? boom : () => span,
    recordException: all ? boom : () => {},
    updateName: () => span,
    end: all ? boom : () => {},
    addLink: () => span,
    addLinks: () => span,
  };
  return span;
};

function telemetry(kind, options) {
  if (kind === 'none') return options;
  if (kind === 'noop') return instrument(options);
  if (kind === 'sdk') {
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())] }).getTracer('t');
    return instrument(options, { tracer, meter: meter(false) });
  }
  if (kind === 'meter-throws') return instrument(options, { meter: meter(true) });
  const tracer = {
    startSpan: () => {
      if (kind === 'tracer-throws') throw new Error('a tracer broke');
      return badSpan(kind === 'span-throws');
    },
    startActiveSpan: () => {
      throw new Error('not used');
    },
  };
  return instrument(options, { tracer, meter: meter(false) });
}

// ---- one run of a scenario ----

/**
 * The outcome of scenario `c`, bare or observed: the status and body (or
 * the rejection's class) and the requests (or tries) it took.
 */
async function run(c, observed) {
  const p = `/hooks-${unique++}`;
  const url = srv.url + p;
  /** @type {Record<string, any>} */
  let options = { ...c.options, ...decisions(c, url) };
  // (a gate and a budget of the run's own: the same state in both runs)
  const gate = c.gate ? createGate({ consecutive: 2, baseMs: 2, maxDelayMs: 4, jitter: 'none' }) : undefined;
  if (gate) options.gate = gate;
  // (one retry in reserve, and a fifth of one per call: a minute's window, which no case outlasts)
  if (c.budget) options.budget = new RetryBudget({ ttlMs: 60_000, minPerSec: 1 / 60, retryRatio: 0.2 });
  if (observed) {
    const make = (/** @type {string} */ k) => meddler(k) ?? observer(k);
    if (c.observe.onRetry) options.onRetry = make(c.observe.onRetry);
    if (c.observe.onDone) options.onDone = make(c.observe.onDone);
    // (at undici's dispatcher there is no telemetry: a TypeError)
    if (c.driver !== 'undici') options = telemetry(c.observe.telemetry, options);
  }
  let tries = 0;
  const settleOf = async (promise) => {
    try {
      const res = await promise;
      if (!(res instanceof Response)) return `value ${res}`;
      return `${res.status} ${await res.text()}`;
    } catch (e) {
      return `rejected ${e?.constructor?.name}/${e?.name}${e?.message === 'a decision hook broke' ? ' (the hook’s)' : ''}`;
    }
  };
  let outcome;
  if (c.driver === 'retry') {
    outcome = await settleOf(
      retry(async () => {
        const step = c.steps[Math.min(tries++, c.steps.length - 1)];
        if (step.reset) throw new TypeError('fetch failed');
        if (step.status >= 400) throw Object.assign(new Error(`HTTP ${step.status}`), { status: step.status });
        return step.status;
      }, options),
    );
  } else if (c.driver !== 'undici') {
    // (a scripted fetch on the virtual clock; the drivers without a fetch of
    // their own read the global one when called)
    const scripted = scriptedFetch(c.steps);
    const real = globalThis.fetch;
    globalThis.fetch = scripted;
    try {
      const init = { method: c.method, ...(c.method !== 'GET' && { body: 'the body' }) };
      const call =
        c.driver === 'fetch'
          ? fetchWithBackoff(url, init, options)
          : c.driver === 'client'
            ? withBackoff(scripted, c.options).extend(options)(url, init)
            : stream.fetchWithBackoff(url, init, options);
      outcome = await settleOf(call);
    } finally {
      globalThis.fetch = real;
    }
    tries = scripted.count;
  } else {
    // Node's global fetch through the dispatcher, for this call alone (no
    // beforeRetry nor gate there: a TypeError).
    srv.script(p, c.steps);
    const { beforeRetry: _b, gate: _g, ...own } = options;
    const undo = await retryGlobalFetch(own);
    try {
      outcome = await settleOf(fetch(url, { method: c.method, ...(c.method !== 'GET' && { body: 'the body' }) }));
    } finally {
      undo();
    }
    tries = srv.count(p);
  }
  gate?.free();
  return `${outcome}, ${tries} tries`;
}

property('observers never change an outcome, leave a rejection unhandled or a timer', {
  cases: 120,
  generate(g) {
    const driver = g.pick(['fetch', 'client', 'stream', 'retry', 'undici']);
    const steps = [
      ...g.many(g.int(0, 4), () =>
        g.weighted([
          [4, () => ({ status: g.pick([503, 500, 502]) })],
          [1, () => ({ status: 429, headers: { 'retry-after-ms': '2' } })],
          [1, () => ({ status: 404 })],
          [1, () => ({ reset: true })],
          [driver === 'retry' || driver === 'undici' ? 0 : 0.5, () => ({ hang: true })],
        ])(),
      ),
      g.weighted([
        [3, { status: 200, body: 'done' }],
        [1, { status: 503, body: 'busy' }],
      ]),
    ];
    const c = {
      driver,
      method: g.pick(['GET', 'GET', 'PUT', 'POST']),
      gate: g.chance(0.15),
      budget: g.chance(0.15),
      steps,
      options: {
        maxAttempts: g.int(1, 5),
        baseMs: g.int(1, 3),
        // (long timers, which a call must clear: one left behind outlives the check)
        ...(g.chance(0.3) && { maxElapsedMs: 60_000 }),
        ...(steps.some((s) => s.hang) ? { timeoutMs: 200 } : g.chance(0.3) && { timeoutMs: 60_000 }),
      },
      decide: {
        shouldRetry: g.weighted([
          [4, 'none'],
          [1, g.pick(SHOULD)],
        ]),
        sync: g.chance(0.3),
        beforeRetry: g.weighted([
          [4, 'none'],
          [1, g.pick(BEFORE)],
        ]),
        delay: g.weighted([
          [4, 'none'],
          [1, g.pick(DELAY)],
        ]),
      },
      observe: {
        onRetry: g.chance(0.7) ? g.pick(OBSERVER) : undefined,
        onDone: g.chance(0.7) ? g.pick(OBSERVER) : undefined,
        telemetry: g.pick(TELEMETRY),
      },
    };
    return c;
  },
  async check(c) {
    const before = timers();
    const clock = c.driver === 'undici' ? undefined : virtualClock();
    /** @param {boolean} observed */
    const once = (observed) => (clock ? clock.run(run(c, observed)) : run(c, observed));
    let bare, observed, unhandled;
    try {
      [[bare, observed], unhandled] = await guarded(async () => [await once(false), await once(true)]);
      // (the SDK's InMemorySpanExporter reports each export in a 0 ms timer:
      // due now; a library's timer left behind is a long one, still pending)
      await clock?.tick(0);
      assert.equal(clock?.pending() ?? 0, 0, 'a virtual timer was left behind');
    } finally {
      clock?.uninstall();
    }
    assert.equal(observed, bare, 'the observers changed the outcome');
    assert.deepEqual(unhandled.map(String), [], 'a rejection was left unhandled');
    await noTimerLeft(before);
    return `${c.driver} ${bare.replace(/, \d+ tries$/, '').replace(/^(\d+) .*/, '$1')}`;
  },
});

// ---- the query adapters ----

const BROKEN = ['throws', 'junk', 'promise', 'rejects'];

/** A broken shouldRetry of the adapters (synchronous: anything else is refused). */
const brokenHook = (kind) => () => {
  if (kind === 'throws') throw new Error('a query hook broke');
  if (kind === 'junk') return 'yes';
  if (kind === 'promise') return Promise.resolve(true);
  if (kind === 'rejects') return Promise.reject(new Error('a query hook rejected'));
};

/** An HTTP error as ky throws it; `hostile`: its `response` getter throws. */
function httpError(res, hostile) {
  const e = new Error(`HTTP ${res.status}`);
  if (hostile)
    Object.defineProperty(e, 'response', {
      get() {
        throw new Error('a getter broke');
      },
    });
  else Object.assign(e, { response: res });
  return e;
}

property('a broken query hook settles the query as shouldRetry false would, throwing nothing into it', {
  cases: 40,
  generate(g) {
    return {
      hook: g.pick(BROKEN),
      hostileError: g.chance(0.2),
      steps: [
        ...g.many(g.int(0, 3), () => ({ status: g.pick([503, 500, 429, 404]) })),
        g.pick([{ status: 200, body: 'data' }, { status: 503 }]),
      ],
      options: { maxAttempts: g.int(1, 4), baseMs: 1 },
    };
  },
  async check(c) {
    const before = timers();
    /** TanStack's fetchQuery over the scripted server with `shouldRetry`; its data or error, and the requests. */
    const query = async (shouldRetry) => {
      const p = `/query-${unique++}`;
      srv.script(p, c.steps);
      const client = new QueryClient();
      let outcome;
      try {
        outcome = await client.fetchQuery({
          queryKey: [p],
          queryFn: async () => {
            const res = await fetch(srv.url + p);
            if (!res.ok) throw httpError(res, c.hostileError);
            return res.text();
          },
          ...queryRetry({ ...c.options, shouldRetry }),
        });
      } catch (e) {
        outcome = `error ${e?.message}`;
      }
      client.clear();
      return `${outcome}, ${srv.count(p)} requests`;
    };
    const [[bare, broken, swr], unhandled] = await guarded(async () => {
      const bare = await query(() => false);
      const broken = await query(brokenHook(c.hook));
      // SWR's callback, as SWR's core calls it: it throws nothing, and revalidates nothing.
      let revalidated = 0;
      const { onErrorRetry } = swrRetry({ ...c.options, shouldRetry: brokenHook(c.hook) });
      onErrorRetry(httpError(new Response(null, { status: 503 }), c.hostileError), 'k', {}, () => revalidated++, { retryCount: 1 });
      return [bare, broken, revalidated];
    });
    // (an error whose getter throws: the hook is not even asked, and the retries end all the same)
    assert.equal(broken, bare, 'a broken shouldRetry did not end the retries as false would');
    assert.equal(swr, 0, 'SWR revalidated after a broken hook');
    assert.deepEqual(unhandled.map(String), [], 'a rejection was left unhandled');
    await noTimerLeft(before);
    return `${c.hook}${c.hostileError ? ' (hostile error)' : ''}`;
  },
});
