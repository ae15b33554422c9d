// A scripted HTTP server that produces REAL HTTP failures for the retry
// library's tests: status codes, Retry-After headers, slow answers, hung
// requests, connection resets. Node built-ins only.
//
// In-process use (node:test, or a Node parent of a Chromium/workerd/Deno/Bun test):
//
//   import { startScripted } from './server/scripted.mjs';
//   const srv = await startScripted();          // 127.0.0.1, ephemeral port
//   srv.script('/flaky', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
//   await fetch(srv.url + '/flaky');             // 503, then 503, then 200 'ok' (repeats)
//   srv.count('/flaky'); srv.requests; srv.preflights; srv.reset(); await srv.close();
//
// A script for a path is one of:
//   - an array of steps, one consumed per request; the last one repeats;
//   - a single step object (same as a one-step array);
//   - a function (req, n) => step, n = 0-based number of requests to that path
//     since this script was set (req is the logged request record);
//   - { failRate, status = 503, seed = 1, body = '', headers } : each request
//     fails with `status` with probability failRate (mulberry32 PRNG seeded
//     with `seed`, one draw per request in arrival order), else 200 'ok';
//   - { rate, burst = rate / 10, status = 429, headers } : a server of
//     `rate` requests per second (a token bucket of `burst` tokens, full at
//     the start): a request that finds a token gets 200 'ok', the others
//     `status` (with `headers`, e.g. Retry-After), as a rate-limited API.
// The path '*' is a fallback for every path that has no script of its own.
// Paths are matched on the pathname (the query string is ignored; the logged
// record keeps it in `url`). Unscripted paths answer 404.
//
// Step fields: status (200), body ('' ; a non-string is sent as JSON), headers
// ({}), delayMs (wait before answering), holdUntil (a name: then wait until
// it is released, `srv.release(name)` or POST /__control/release, before
// answering; at once if it was already: an answer a test lets go when it
// has acted, not after a guessed delay), hang (never answer), reset (destroy
// the socket without a response), echo (200 JSON {method, headers, body}),
// bodyDelayMs (send the headers and the first half of the body at once, the
// rest that much later: a slow body), early (answer, or reset, as soon as
// the request's headers arrive, before its body: the body is read after,
// into the logged record's `body`, with `complete` true once it ended; a
// script of steps only, not a function; such a script logs each request on
// arrival, with `complete` false until its body was read to its end).
// Streamed bodies (sent in `chunk`-byte writes, default 16 KiB, with
// backpressure): size (a body of that many bytes, byte i = i * 7 % 251, in
// place of `body`), stallAfter (send that many bytes, then nothing: the
// socket stays open), cutAfter (send that many bytes, then destroy the
// socket), range (answer `Range: bytes=N-` with 206 and its Content-Range,
// unless an `If-Range` differs from the step's ETag / Last-Modified header:
// then 200 and the whole body). Each logged request records `sent`, the
// body bytes written, and `closed` (true once its connection closed before
// the answer was sent in full: the client aborted it).
// Hostile variants of a streamed body (property tests, tests/props/):
// version (an integer >= 0: the synthetic body of that version of the
// resource, byte i = (i * 7 + version) % 251, `patternByte(i, version)`;
// 0, the default, is the pattern above; two versions differ at every
// byte), noLength (no Content-Length: a chunked answer), rangeLie (how a
// 206 lies; with `range`): 'ifRange' (206 even when an If-Range differs:
// the bytes of this step's version, with its own validator), 'start' (the
// Content-Range names a start one byte after the bytes sent, which start
// where asked), 'total' (its total one byte more than the body's),
// 'end' (only the first half of the rest, its Content-Range saying so: a
// lawful partial answer), 'short' (the Content-Range names all the rest,
// but only its first half is sent, with a Content-Length of that half,
// and the answer ends cleanly).
// For uploads: cutBodyAfter (with early: reset the connection once that
// many bytes of the request body came, whether or not the step's answer
// went first; with `hang`, only the body's end or the reset ends it). An
// early request whose body broke off is logged with `broken` true
// (`complete` stays false).
//
// Separate process (for tests whose client runs in another runtime):
//   node tests/server/scripted.mjs [--port N] [--exit-with-stdin]
// prints one line {"url":"http://127.0.0.1:PORT"} and is driven over HTTP:
//   POST /__control/script    {path, steps}       (steps: array, step, or failRate object)
//   GET  /__control/requests[?path=/x]             -> JSON list of logged requests
//   GET  /__control/count?path=/x                  -> JSON number
//   GET  /__control/preflights                     -> JSON list of logged preflights
//   POST /__control/release   {name}              (answers the steps held on `name`)
//   POST /__control/reset
// Control requests are never logged or counted. spawnScripted() below does
// the spawning and wraps the control API for a Node parent.

import http from 'node:http';
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { mulberry32 } from '../../js/testing/random.js';

const STEP_KEYS = new Set([
  'status',
  'body',
  'headers',
  'delayMs',
  'holdUntil',
  'hang',
  'reset',
  'echo',
  'bodyDelayMs',
  'size',
  'chunk',
  'stallAfter',
  'cutAfter',
  'range',
  'early',
  'version',
  'noLength',
  'rangeLie',
  'cutBodyAfter',
]);
const RANGE_LIES = new Set(['ifRange', 'start', 'total', 'end', 'short']);
const CONTROL = '/__control';
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
  'access-control-allow-headers': '*',
  // Lets a cross-origin page read Retry-After and any other scripted header.
  'access-control-expose-headers': '*',
};

function checkStep(step, where) {
  if (step === null || typeof step !== 'object' || Array.isArray(step)) {
    throw new TypeError(`${where}: a step must be an object, got ${JSON.stringify(step)}`);
  }
  for (const k of Object.keys(step)) {
    if (!STEP_KEYS.has(k)) throw new TypeError(`${where}: unknown step field '${k}'`);
  }
  if (step.status !== undefined && !(Number.isInteger(step.status) && step.status >= 100 && step.status <= 999)) {
    throw new RangeError(`${where}: status must be an integer 100..999, got ${step.status}`);
  }
  if (step.delayMs !== undefined && !(Number.isFinite(step.delayMs) && step.delayMs >= 0)) {
    throw new RangeError(`${where}: delayMs must be a number >= 0, got ${step.delayMs}`);
  }
  if (step.holdUntil !== undefined && !(typeof step.holdUntil === 'string' && step.holdUntil)) {
    throw new TypeError(`${where}: holdUntil must be a non-empty string, got ${JSON.stringify(step.holdUntil)}`);
  }
  if (step.version !== undefined && !(Number.isInteger(step.version) && step.version >= 0)) {
    throw new RangeError(`${where}: version must be an integer >= 0, got ${step.version}`);
  }
  if (step.rangeLie !== undefined && !RANGE_LIES.has(step.rangeLie)) {
    throw new RangeError(`${where}: rangeLie must be one of ${[...RANGE_LIES].join(', ')}, got ${step.rangeLie}`);
  }
  if (step.cutBodyAfter !== undefined && !(step.early && Number.isInteger(step.cutBodyAfter) && step.cutBodyAfter >= 0)) {
    throw new RangeError(`${where}: cutBodyAfter must be an integer >= 0, in an early step`);
  }
  return step;
}

// (wasm-backoff/testing's PRNG: its chaos, seeded alike, faults the same requests as failRate)
export { mulberry32 };

// Turns what script() was given into a function (req) => step with its own counter.
function compile(path, spec) {
  let n = 0;
  if (typeof spec === 'function') {
    return (req) => checkStep(spec(req, n++), `script ${path} (function, request ${n - 1})`);
  }
  if (Array.isArray(spec)) {
    if (spec.length === 0) throw new TypeError(`script ${path}: empty step list`);
    const steps = spec.map((s, i) => checkStep(s, `script ${path} step ${i}`));
    const next = () => steps[Math.min(n++, steps.length - 1)];
    // (a step that answers before the request body is read: chosen first)
    if (steps.some((s) => s.early)) next.early = true;
    return next;
  }
  if (spec && typeof spec === 'object' && 'failRate' in spec) {
    const { failRate, status = 503, seed = 1, body = '', headers = {}, ...rest } = spec;
    if (Object.keys(rest).length) throw new TypeError(`script ${path}: unknown failRate field '${Object.keys(rest)[0]}'`);
    if (!(failRate >= 0 && failRate <= 1)) throw new RangeError(`script ${path}: failRate must be in [0, 1]`);
    const fail = checkStep({ status, body, headers }, `script ${path}`);
    const ok = { status: 200, body: 'ok' };
    const rand = mulberry32(seed);
    return () => (n++, rand() < failRate ? fail : ok);
  }
  if (spec && typeof spec === 'object' && 'rate' in spec) {
    const { rate, burst = Math.max(1, rate / 10), status = 429, headers = {}, ...rest } = spec;
    if (Object.keys(rest).length) throw new TypeError(`script ${path}: unknown rate field '${Object.keys(rest)[0]}'`);
    if (!(rate > 0 && Number.isFinite(rate))) throw new RangeError(`script ${path}: rate must be a number > 0`);
    if (!(burst >= 1 && Number.isFinite(burst))) throw new RangeError(`script ${path}: burst must be a number >= 1`);
    const throttled = checkStep({ status, headers }, `script ${path}`);
    const ok = { status: 200, body: 'ok' };
    let tokens = burst;
    let at = performance.now();
    return () => {
      const now = performance.now();
      tokens = Math.min(burst, tokens + ((now - at) * rate) / 1000);
      at = now;
      n++;
      if (tokens < 1) return throttled;
      tokens -= 1;
      return ok;
    };
  }
  const step = checkStep(spec, `script ${path}`);
  const next = () => step;
  if (step.early) next.early = true;
  return next;
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res, status, body, headers = {}) {
  if (res.destroyed || res.writableEnded) return;
  let payload = body ?? '';
  let type = 'text/plain; charset=utf-8';
  if (typeof payload !== 'string' && !(payload instanceof Uint8Array)) {
    payload = JSON.stringify(payload);
    type = 'application/json';
  }
  const noBody = status === 204 || status === 304 || (status >= 100 && status < 200) || res.req.method === 'HEAD';
  const h = { ...CORS, 'content-type': type };
  for (const [k, v] of Object.entries(headers)) h[k.toLowerCase()] = v;
  if (noBody) {
    delete h['content-type'];
    res.writeHead(status, h);
    res.end();
  } else {
    const buf = Buffer.from(payload);
    h['content-length'] = buf.length;
    res.writeHead(status, h);
    res.end(buf);
  }
}

/** Byte `i` of a synthetic body (`size`) of `version`: a pattern with no short period. */
export const patternByte = (i, version = 0) => (i * 7 + version) % 251;

/** The pattern, long enough for any chunk (≤ 64 KiB) at any phase of its period (251). */
const PATTERN = Buffer.from(Array.from({ length: 65536 + 251 }, (_, i) => patternByte(i)));

/** Bytes [from, to) of a step's body (to - from ≤ 64 KiB). */
function slice(step, from, to) {
  if (step.size === undefined) return Buffer.from(String(step.body ?? '')).subarray(from, to);
  // (version v's byte i is the pattern's byte i + 36v: 36 · 7 = 252 ≡ 1 mod 251)
  const at = (from + 36 * (step.version ?? 0)) % 251;
  return PATTERN.subarray(at, at + to - from);
}

/**
 * A streamed answer: the step's body (or `size` synthetic bytes) from a
 * Range's start, in `chunk`-byte writes that wait for the socket to drain,
 * stopped by `stallAfter` (hang) or `cutAfter` (destroy) bytes of body.
 */
async function streamBody(req, res, step, rec) {
  const total = step.size ?? Buffer.byteLength(String(step.body ?? ''));
  const h = { ...CORS, 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
  const tag = step.headers?.etag ?? step.headers?.ETag ?? step.headers?.['last-modified'];
  const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  const ifRange = req.headers['if-range'];
  let from = 0;
  let to = total;
  let status = step.status ?? 200;
  const lie = step.rangeLie;
  if (step.range && m && (ifRange === undefined || ifRange === tag || lie === 'ifRange') && +m[1] < total) {
    from = +m[1];
    status = 206;
    if (lie === 'end' || lie === 'short') to = from + Math.floor((total - from) / 2);
    const [start, end, length] = [from + (lie === 'start' ? 1 : 0), (lie === 'end' ? to : total) - 1, total + (lie === 'total' ? 1 : 0)];
    h['content-range'] = `bytes ${start}-${end}/${length}`;
  }
  if (!step.noLength) h['content-length'] = to - from;
  res.writeHead(status, { ...h, ...step.headers });
  res.flushHeaders();
  const chunk = Math.min(step.chunk ?? 16384, 65536);
  const stop = step.stallAfter ?? step.cutAfter ?? Infinity;
  rec.sent = 0;
  for (let at = from; at < to; ) {
    if (res.destroyed) return;
    if (rec.sent >= stop) {
      if (step.cutAfter !== undefined) req.socket.destroy();
      return;
    }
    const n = Math.min(chunk, to - at, stop - rec.sent);
    const ok = res.write(slice(step, at, at + n));
    at += n;
    rec.sent += n;
    if (!ok) {
      await new Promise((resolve) => {
        const done = () => (res.off('drain', done).off('close', done), resolve());
        res.on('drain', done).on('close', done);
      });
    }
  }
  res.end();
}

/**
 * Starts the scripted server on 127.0.0.1.
 * @param {{port?: number}} [options] port 0 (default) picks a free one.
 */
export async function startScripted({ port = 0 } = {}) {
  let scripts = new Map(); // pathname -> (req) => step
  let requests = [];
  let preflights = [];
  let counts = new Map(); // pathname -> number
  const sockets = new Set();
  const timers = new Set();
  let closing = null;
  /** holdUntil: the names released, and the answers waiting on each name. */
  let released = new Set();
  /** @type {Map<string, Array<() => void>>} */
  const held = new Map();
  const hold = (/** @type {string} */ name) =>
    released.has(name) || closing
      ? undefined
      : new Promise((resolve) => {
          if (!held.has(name)) held.set(name, []);
          held.get(name)?.push(() => resolve(undefined));
        });

  const srv = {
    url: '',
    get requests() {
      return requests;
    },
    get preflights() {
      return preflights;
    },
    script(path, spec) {
      if (typeof path !== 'string' || !(path.startsWith('/') || path === '*')) {
        throw new TypeError(`script: path must start with '/' (or be '*'), got ${JSON.stringify(path)}`);
      }
      if (path === CONTROL || path.startsWith(CONTROL + '/')) throw new TypeError(`script: ${CONTROL} is reserved`);
      scripts.set(path, compile(path, spec));
      return srv;
    },
    count(path) {
      return counts.get(path) ?? 0;
    },
    /** Lets the answers held on `name` (step field holdUntil) go, and those held on it later. */
    release(name) {
      released.add(name);
      for (const go of held.get(name) ?? []) go();
      held.delete(name);
    },
    reset() {
      released = new Set();
      scripts = new Map();
      requests = [];
      preflights = [];
      counts = new Map();
    },
    close() {
      closing ??= new Promise((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const name of [...held.keys()]) srv.release(name); // (their sockets are destroyed below)
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };

  function log(req, url, body) {
    const rec = {
      path: url.pathname,
      url: url.pathname + url.search,
      method: req.method,
      headers: req.headers,
      body,
      at: performance.now(),
    };
    requests.push(rec);
    counts.set(url.pathname, (counts.get(url.pathname) ?? 0) + 1);
    return rec;
  }

  async function control(req, res, url, body) {
    const sub = url.pathname.slice(CONTROL.length);
    try {
      if (req.method === 'POST' && sub === '/script') {
        const { path, steps } = JSON.parse(body);
        srv.script(path, steps);
        return send(res, 200, { ok: true });
      }
      if (req.method === 'POST' && sub === '/release') {
        const { name } = JSON.parse(body);
        if (typeof name !== 'string' || !name) throw new TypeError('release: name must be a non-empty string');
        srv.release(name);
        return send(res, 200, { ok: true });
      }
      if (req.method === 'POST' && sub === '/reset') {
        srv.reset();
        return send(res, 200, { ok: true });
      }
      if (req.method === 'GET' && sub === '/requests') {
        const p = url.searchParams.get('path');
        return send(res, 200, p === null ? requests : requests.filter((r) => r.path === p));
      }
      if (req.method === 'GET' && sub === '/count') {
        return send(res, 200, srv.count(url.searchParams.get('path') ?? ''));
      }
      if (req.method === 'GET' && sub === '/preflights') {
        return send(res, 200, preflights);
      }
      return send(res, 404, { error: `no control endpoint ${req.method} ${url.pathname}` });
    } catch (e) {
      return send(res, 400, { error: String(e?.message ?? e) });
    }
  }

  const server = http.createServer(
    {
      keepAlive: true, // TCP keep-alive on accepted sockets; HTTP keep-alive is on by default
      requestTimeout: 0, // a hung request may last as long as the test wants
      headersTimeout: 60_000,
      keepAliveTimeout: 30_000,
    },
    async (req, res) => {
      const url = new URL(req.url, 'http://x');
      const isControl = url.pathname === CONTROL || url.pathname.startsWith(CONTROL + '/');
      if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined) {
        if (!isControl) preflights.push({ path: url.pathname, method: req.method, headers: req.headers, at: performance.now() });
        req.resume();
        // Echo the asked-for headers: '*' does not cover Authorization. Max-age 0
        // so a browser sends (and srv.preflights logs) a preflight every time.
        return send(res, 204, '', {
          'access-control-allow-headers': req.headers['access-control-request-headers'] || '*',
          'access-control-max-age': '0',
        });
      }
      const next = isControl ? undefined : (scripts.get(url.pathname) ?? scripts.get('*'));
      /** @type {any} */
      let step;
      /** @type {any} */
      let rec;
      // An `early` step answers (or resets) as soon as the headers arrive;
      // the request body is read after, into the record (`body`, and
      // `complete`: false when the client stopped sending it).
      if (next?.early) {
        rec = log(req, url, '');
        step = next(rec);
        if (step.early) {
          rec.complete = false;
          const cutAt = step.cutBodyAfter;
          if (cutAt !== undefined) {
            let got = 0;
            const cut = (/** @type {Buffer} */ c) => {
              got += c.length;
              if (got >= cutAt) req.off('data', cut), req.socket.destroy();
            };
            req.on('data', cut);
          }
          readBody(req).then(
            (b) => Object.assign(rec, { body: b, complete: true }),
            () => (rec.broken = true),
          );
          req.once('close', () => (rec.broken ||= !req.complete));
        }
      }
      if (!step?.early) {
        // (logged already, by a script with early steps: not complete until its body is)
        if (rec) rec.complete = false;
        let body;
        try {
          body = await readBody(req);
        } catch {
          if (rec) rec.broken = true;
          return; // client went away mid-body
        }
        if (isControl) return control(req, res, url, body);
        if (rec) Object.assign(rec, { body, complete: true });
        else rec = log(req, url, body);
      }
      // (the client went away before the answer was sent: an abort reached the network)
      res.on('close', () => (rec.closed = !res.writableFinished));
      if (!next) return send(res, 404, `no script for ${url.pathname}`);
      try {
        step ??= next(rec);
      } catch (e) {
        return send(res, 500, `script error: ${e?.message ?? e}`);
      }
      if (step.delayMs > 0) {
        await new Promise((resolve) => {
          const t = setTimeout(() => {
            timers.delete(t);
            resolve();
          }, step.delayMs);
          // (unref: the client's tests count their own timers, not the server's)
          t.unref();
          timers.add(t);
        });
        if (closing || res.destroyed || req.socket.destroyed) return;
      }
      if (step.holdUntil !== undefined) {
        await hold(step.holdUntil);
        if (closing || res.destroyed || req.socket.destroyed) return;
      }
      if (step.reset) return req.socket.destroy();
      if (step.hang) return; // the socket stays open until the client aborts or close()
      if (step.echo) return send(res, 200, { method: req.method, headers: req.headers, body: rec.body }, step.headers);
      if (step.size !== undefined || step.stallAfter !== undefined || step.cutAfter !== undefined || step.range) {
        return streamBody(req, res, step, rec);
      }
      if (step.bodyDelayMs > 0) {
        const text = String(step.body ?? '');
        res.writeHead(step.status ?? 200, { ...CORS, 'content-type': 'text/plain; charset=utf-8', ...step.headers });
        res.write(text.slice(0, text.length >> 1));
        const t = setTimeout(() => {
          timers.delete(t);
          if (!res.destroyed) res.end(text.slice(text.length >> 1));
        }, step.bodyDelayMs);
        t.unref();
        timers.add(t);
        return;
      }
      return send(res, step.status ?? 200, step.body ?? '', step.headers);
    },
  );
  server.maxConnections = 100_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // A socket destroyed by the client mid-request must not crash the server.
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  srv.url = `http://127.0.0.1:${server.address().port}`;
  srv.server = server;
  return srv;
}

/**
 * Starts this file as a separate Node process and wraps its control API.
 * Returns {url, child, script(path, steps), requests(path?), count(path),
 * preflights(), release(name), reset(), close()}; all methods but url are async.
 * The child exits when close() is called or when this process dies.
 */
export async function spawnScripted({ port = 0 } = {}) {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, [self, '--port', String(port), '--exit-with-stdin'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const url = await new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        child.stdout.off('data', onData);
        try {
          resolve(JSON.parse(out.slice(0, nl)).url);
        } catch (e) {
          reject(e);
        }
      }
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => reject(new Error(`scripted server exited early (code ${code})`)));
    child.once('error', reject);
  });
  child.stdout.resume();
  const call = async (method, path, body) => {
    const r = await fetch(url + CONTROL + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await r.json();
    if (!r.ok) throw new Error(`control ${method} ${path}: ${json.error}`);
    return json;
  };
  return {
    url,
    child,
    script: (path, steps) => call('POST', '/script', { path, steps }),
    requests: (path) => call('GET', '/requests' + (path === undefined ? '' : `?path=${encodeURIComponent(path)}`)),
    count: (path) => call('GET', `/count?path=${encodeURIComponent(path)}`),
    preflights: () => call('GET', '/preflights'),
    release: (name) => call('POST', '/release', { name }),
    reset: () => call('POST', '/reset'),
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

// ---- run as a program ----
function isMain() {
  if (!process.argv[1]) return false;
  try {
    return realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  const args = process.argv.slice(2);
  const portAt = args.indexOf('--port');
  const port = portAt >= 0 ? Number(args[portAt + 1]) : 0;
  const srv = await startScripted({ port });
  process.stdout.write(JSON.stringify({ url: srv.url }) + '\n');
  const stop = async () => {
    await srv.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (args.includes('--exit-with-stdin')) {
    process.stdin.on('end', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }
}
