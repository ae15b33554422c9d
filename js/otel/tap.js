// @ts-check
// One call's spans and metrics. The engine (js/engine/loop.js) gives the
// `telemetry` option each call and its job, and runs the job it returns:
// the same job, its attempts wrapped; the call's onRetry and onDone are
// wrapped too (in a copy of its options), which tell each wait and the end.
// Recorded: a span for the call, a child span per attempt (the HTTP client span of the
// semantic conventions, `http.request.resend_count` on resends), an event on
// the call's span per wait, and at the end the call's retries and the time
// it spent with no attempt in flight (gRPC A96's two per-call histograms).
// The attempt runs inside its span's context: a fetch instrumentation or
// the caller's own spans nest under it.
import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';

/** @typedef {import('../engine/loop.js').Outcome} Outcome */
/** @typedef {import('@opentelemetry/api').Attributes} Attributes */

/**
 * What the instruments of one `instrument()` share: the tracer, the meter's
 * instruments, the attributes every metric carries, and the gate's keys seen.
 * @typedef {object} Kit
 * @property {import('@opentelemetry/api').Tracer} tracer
 * @property {import('@opentelemetry/api').Histogram} retries
 * @property {import('@opentelemetry/api').Histogram} delay
 * @property {import('@opentelemetry/api').Counter} started
 * @property {Attributes} base
 * @property {boolean} metering the meter is not the API's no-op (which it stays: unlike a tracer, a meter got before an SDK is registered is never one of its)
 * @property {((key: unknown) => void) | undefined} seen told each gate key a call goes to
 */

/** An absolute http(s) URL without credentials: its scheme, host and port, read without a URL object (the common case, kept cheap). */
const PLAIN = /^(https?):\/\/([^/?#@[\]:]+|\[[^\]/?#@]*\])(?::(\d*))?(?=[/?#]|$)/i;

/** The query parameters the conventions redact (signed URLs' secrets). */
const SECRET = /([?&](?:AWSAccessKeyId|Signature|sig|X-Goog-Signature)=)[^&#]*/g;

/**
 * The fetch job (js/fetch/request.js, or the stream entry's) a call's job
 * is or wraps (hedging, auth and a fallback's job hold the one they wrap
 * as `job`); undefined for retry(fn)'s.
 * @param {any} job
 * @returns {any}
 */
const fetchJobOf = (job) => {
  while (job.job) job = job.job;
  return typeof job.model === 'function' ? job : undefined;
};

/**
 * What the request of a fetch call is now (beforeRetry may change it between
 * attempts; failover, where it goes: the job's request stages run for the
 * next attempt), the semantic conventions' attributes.
 * @param {any} j the call's fetch job (`fetchJobOf`)
 * @returns {Attributes}
 */
function request(j) {
  let input = j.isReq ? j.input.url : j.input;
  /** @type {RequestInit | undefined} */
  let o = j.init;
  for (const stage of j.stages) [input, o] = stage(input, o, 0);
  const method = j.model().method;
  const href = input instanceof Request ? input.url : String(input);
  /** @type {Attributes} */
  const a = { 'http.request.method': method };
  const m = PLAIN.exec(href);
  let scheme, host, port;
  if (m) [, scheme, host, port] = m;
  else {
    let u;
    try {
      u = new URL(href, globalThis.location?.href);
    } catch {
      return a;
    }
    if (u.username || u.password) [u.username, u.password] = ['REDACTED', 'REDACTED'];
    [scheme, host, port] = [u.protocol.slice(0, -1), u.hostname, u.port];
    a['url.full'] = u.href;
  }
  a['url.full'] ??= href;
  // (credentials never go into telemetry: the conventions' redaction)
  if (/** @type {string} */ (a['url.full']).includes('?')) a['url.full'] = String(a['url.full']).replace(SECRET, '$1REDACTED');
  a['server.address'] = host.toLowerCase();
  a['server.port'] = Number(port) || (scheme.toLowerCase() === 'https' ? 443 : 80);
  return a;
}

/** The attributes of a call's metrics: its request's method, server and port (no URL: a bounded set), and the instrument's. */
const metric = (/** @type {Attributes} */ req, /** @type {Attributes} */ base) => {
  /** @type {Attributes} */
  const a = { ...base };
  for (const k of ['http.request.method', 'server.address', 'server.port']) if (k in req) a[k] = req[k];
  return a;
};

/**
 * The conventions' `error.type` of an outcome: the status of an HTTP error
 * answer ('503'), the error's name ('TimeoutError', 'TypeError'), else none.
 * @param {Outcome} o
 */
function errorType(o) {
  if (!o.failed) return o.status !== undefined && o.status >= 400 ? String(o.status) : undefined;
  const e = /** @type {any} */ (o.error);
  return (typeof e?.name === 'string' && e.name) || '_OTHER';
}

/**
 * An outcome as onRetry and onDone tell it (an error, or a status).
 * @param {{ status?: number, error?: unknown }} i
 * @returns {Outcome}
 */
const told = (i) => (i.error !== undefined ? { failed: true, error: i.error } : { failed: false, status: i.status });

/** One call's spans and metrics. */
class CallTap {
  /** When the last attempt ended (no attempt in flight since). */
  #idle = 0;
  /** Time with no attempt in flight between attempts, ms. */
  #waited = 0;
  /** @type {Attributes} the request's attributes as last sent */
  #req = {};
  /** @type {Attributes} the metrics' attributes, from #req (while metering) */
  #m = {};
  /** @type {Map<number, import("@opentelemetry/api").Span>} the attempts' spans while they run */
  #spans = new Map();

  /**
   * @param {Kit} kit
   * @param {import('../engine/call.js').Call} call
   * @param {any} job the job as the call runs it (its request as it stands)
   */
  constructor(kit, call, job) {
    this.kit = kit;
    /** The call's fetch job, if it is a fetch call. */
    this.fj = fetchJobOf(job);
    this.http = !!this.fj;
    if (this.http) this.#req = request(this.fj);
    if (kit.metering) this.#m = metric(this.#req, kit.base);
    const name = this.http ? `${this.#req['http.request.method']}` : 'retry';
    const parent = context.active();
    this.span = kit.tracer.startSpan(
      name,
      { kind: SpanKind.INTERNAL, startTime: call.start, attributes: { ...this.#req, ...kit.base } },
      parent,
    );
    this.recording = this.span.isRecording();
    /** The attempts' parent context (none unless recorded). */
    this.ctx = this.recording ? trace.setSpan(parent, this.span) : parent;
    if (kit.seen && this.http) kit.seen(/** @type {any} */ (call.c).gate?.keyOf?.(this.fj.input, this.fj.init));
  }

  /**
   * Runs attempt `n` (`run`) in its own span (none when the call's span is
   * not recorded: no SDK, or sampled out; a fetch instrumentation then sees
   * the caller's context, whose sampling decision is the same).
   * @param {number} n
   * @param {() => void} run
   */
  attempt(n, run) {
    const { kit } = this;
    const resend = n - 1;
    if (resend) this.#waited += Date.now() - this.#idle;
    // (the request as this attempt sends it: beforeRetry's, failover's endpoint)
    if (this.http) {
      this.#req = request(this.fj);
      if (kit.metering) this.#m = metric(this.#req, kit.base);
    }
    if (kit.metering) kit.started.add(1, { ...this.#m, 'wasm_backoff.attempt_type': resend ? 'retry' : 'original' });
    if (!this.recording) return run();
    /** @type {Attributes} */
    const attrs = { ...this.#req, ...kit.base, 'wasm_backoff.attempt': n };
    if (resend && this.http) attrs['http.request.resend_count'] = resend;
    const kind = this.http ? SpanKind.CLIENT : SpanKind.INTERNAL;
    const span = kit.tracer.startSpan(this.http ? `${this.#req['http.request.method']}` : 'attempt', { kind, attributes: attrs }, this.ctx);
    this.#spans.set(n, span);
    context.with(trace.setSpan(this.ctx, span), run);
  }

  /**
   * Attempt `n` ended (answered, failed, or aborted): its span, with its outcome.
   * @param {number} n
   * @param {Outcome} o
   */
  attempted(n, o) {
    this.#idle = Date.now();
    const span = this.#spans.get(n);
    if (!span) return;
    this.#spans.delete(n);
    if (o.status !== undefined) span.setAttribute('http.response.status_code', o.status);
    const type = errorType(o);
    if (type) {
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (o.failed && o.error instanceof Error) span.recordException(o.error);
    }
    span.end();
  }

  /**
   * Another attempt follows after a wait (what onRetry is told): an event on the call's span.
   * @param {{ attempt: number, delayMs: number, status?: number, error?: unknown, retryAfterMs?: number }} i
   */
  retry(i) {
    if (!this.recording) return;
    /** @type {Attributes} */
    const a = { 'wasm_backoff.retry.attempt': i.attempt, 'wasm_backoff.retry.delay_ms': i.delayMs };
    const type = errorType(told(i));
    if (type) a['wasm_backoff.retry.reason'] = type;
    if (i.retryAfterMs !== undefined) a['wasm_backoff.retry.server_wait_ms'] = i.retryAfterMs;
    this.span.addEvent('wasm_backoff.retry.wait', a);
  }

  /**
   * The call ended (what onDone is told): its span, and its two histograms.
   * @param {{ attempts: number, reason: string, status?: number, error?: unknown }} i
   */
  done(i) {
    const { kit, span } = this;
    const { attempts: n, reason: why, status } = i;
    const type = errorType(told(i));
    if (kit.metering) {
      // (a wait cut short, by an abort or the deadline, counts too)
      if (n) this.#waited += Date.now() - this.#idle;
      /** @type {Attributes} */
      const a = { ...this.#m, 'wasm_backoff.outcome': why };
      if (type) a['error.type'] = type;
      kit.retries.record(Math.max(n - 1, 0), a);
      kit.delay.record(this.#waited / 1000, a);
    }
    if (this.recording) {
      span.setAttribute('wasm_backoff.attempts', n);
      span.setAttribute('wasm_backoff.outcome', why);
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (type) {
        span.setAttribute('error.type', type);
        span.setStatus({ code: SpanStatusCode.ERROR, message: why });
      }
    }
    span.end();
  }
}

/**
 * The `telemetry` option's function for `kit`: per call, its observer (a
 * CallTap: js/engine/loop.js's Tap), which sees each attempt, wait and the
 * end, and cannot change an outcome (the engine guards every call of it);
 * none when neither recorded nor measured (the API's no-ops: a span not
 * recorded needs no end).
 * @param {Kit} kit
 * @returns {(call: import('../engine/call.js').Call, job: import('../engine/loop.js').Job) => import('../engine/loop.js').Tap | undefined}
 */
export function telemetry(kit) {
  return (call, job) => {
    const t = new CallTap(kit, call, job);
    return t.recording || kit.metering ? t : undefined;
  };
}
