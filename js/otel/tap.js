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
 * What the request of a fetch call is now (beforeRetry may change it between
 * attempts): its method and URL, the semantic conventions' attributes.
 * @param {any} job a FetchJob (js/fetch/request.js)
 * @returns {Attributes}
 */
function request(job) {
  const req = job.isReq ? job.input : undefined;
  const method = String(job.init?.method ?? req?.method ?? 'GET').toUpperCase();
  /** @type {Attributes} */
  const a = { 'http.request.method': method };
  const href = req ? req.url : String(job.input);
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

  /**
   * @param {Kit} kit
   * @param {import('../engine/call.js').Call} call
   * @param {any} job the job as the call runs it (its request as it stands)
   */
  constructor(kit, call, job) {
    this.kit = kit;
    this.job = job;
    this.http = 'send' in job;
    if (this.http) this.#req = request(job);
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
    if (kit.seen && this.http) kit.seen(/** @type {any} */ (call.c).gate?.keyOf?.(job.input, job.init));
  }

  /**
   * Runs one attempt (`run`) in its own span (none when the call's span is
   * not recorded: no SDK, or sampled out; a fetch instrumentation then sees
   * the caller's context, whose sampling decision is the same).
   * @param {import('../engine/call.js').Call} call
   * @param {() => Promise<Outcome>} run
   * @returns {Promise<Outcome>}
   */
  attempt(call, run) {
    const { kit } = this;
    const resend = call.n - 1;
    if (resend) {
      this.#waited += Date.now() - this.#idle;
      if (this.http) this.#req = request(this.job);
      if (this.http && kit.metering) this.#m = metric(this.#req, kit.base);
    }
    if (kit.metering) kit.started.add(1, { ...this.#m, 'wasm_backoff.attempt_type': resend ? 'retry' : 'original' });
    /** @type {import("@opentelemetry/api").Span | undefined} */
    let span;
    if (this.recording) {
      /** @type {Attributes} */
      const attrs = { ...this.#req, ...kit.base, 'wasm_backoff.attempt': call.n };
      if (resend && this.http) attrs['http.request.resend_count'] = resend;
      const kind = this.http ? SpanKind.CLIENT : SpanKind.INTERNAL;
      span = kit.tracer.startSpan(this.http ? `${this.#req['http.request.method']}` : 'attempt', { kind, attributes: attrs }, this.ctx);
    }
    // (then, not async/await: no tick more than the attempt's own)
    const p = span ? context.with(trace.setSpan(this.ctx, span), run) : run();
    return p.then(
      (o) => this.#end(span, o),
      (error) => {
        // (aborted, or past the deadline: the call ends with it)
        this.#end(span, { failed: true, error });
        throw error;
      },
    );
  }

  /**
   * An attempt ended: its span, with its outcome.
   * @param {import('@opentelemetry/api').Span | undefined} span
   * @param {Outcome} o
   */
  #end(span, o) {
    this.#idle = Date.now();
    if (!span) return o;
    if (o.status !== undefined) span.setAttribute('http.response.status_code', o.status);
    const type = errorType(o);
    if (type) {
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR });
      if (o.failed && o.error instanceof Error) span.recordException(o.error);
    }
    span.end();
    return o;
  }

  /**
   * Another attempt follows after a wait (what onRetry is told): an event on the call's span.
   * @param {{ attempt: number, delayMs: number, status?: number, error?: unknown, retryAfterMs?: number }} i
   */
  wait(i) {
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
 * The `telemetry` option's function for `kit`: per call, a CallTap; the
 * call's options copied with onRetry and onDone wrapped (the caller's still
 * called, after, as before: what they throw is the engine's to report); the
 * job's `attempt` wrapped on the job itself (made per call; not a copy, nor
 * an object over it as prototype: what beforeRetry changes on it is what the
 * next attempt sends, and V8 keeps it fast).
 * @param {Kit} kit
 * @returns {(call: import('../engine/call.js').Call, job: import('../engine/loop.js').Job) => import('../engine/loop.js').Job}
 */
export function telemetry(kit) {
  return (call, job) => {
    const t = new CallTap(kit, call, job);
    // (neither recorded nor measured, the API's no-ops: the job as it is; a
    // span not recorded needs no end)
    if (!t.recording && !kit.metering) return job;
    const c = call.c;
    const { onRetry, onDone } = c;
    call.c = {
      ...c,
      onRetry: (/** @type {any} */ i) => (t.wait(i), onRetry?.(i)),
      onDone: (/** @type {any} */ i) => (t.done(i), onDone?.(i)),
    };
    const run = job.attempt;
    job.attempt = (cc) => t.attempt(cc, () => run.call(job, cc));
    return job;
  };
}
