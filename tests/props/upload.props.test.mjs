// Property (issue 34): an upload's bytes, as the server stored them, are
// the caller's bytes or nothing, and the call succeeds only when they are
// the caller's bytes. wasm-backoff/stream (and the main entry, where it
// takes the body; hedges of a whole body) with every kind of body (a
// ReadableStream whose chunks come at random times and sizes, a Request
// with a streamed or a plain body, a body function returning a string,
// bytes or a stream, a plain string), sources that error or give a chunk
// fetch refuses, replayBufferBytes below and above the body, against a
// scripted server that answers before the body (503s, resets), resets the
// connection at any byte of the body, answers 5xx or 400 after it, hangs
// (timeoutMs), or takes it (an echo, a 201).
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fetchWithBackoff } from 'wasm-backoff/stream';
import { fetchWithBackoff as main } from 'wasm-backoff';
import { hedge } from 'wasm-backoff/hedge';
import { startScripted, mulberry32 } from '../server/scripted.mjs';
import { sleep } from '../support/wait.mjs';
import { property } from './props.mjs';

let srv;
before(async () => {
  srv = await startScripted();
});
/** Every case's path → the caller's body (null: the caller never gave a whole one). */
const bodies = new Map();
after(async () => {
  // Late arrivals too (a body an early answer left streaming): every request
  // any case's server read to its end holds that case's bytes.
  await sleep(200);
  for (const r of srv?.requests ?? []) {
    if (!bodies.has(r.path) || r.complete === false) continue;
    assert.equal(r.body, bodies.get(r.path), `${r.path}: a stored body is not the caller's`);
  }
  await srv?.close();
});

let unique = 0;
const enc = new TextEncoder();

/** The caller's body of a case: `size` ASCII letters drawn from `salt`. */
function text(size, salt) {
  const r = mulberry32(salt);
  let s = '';
  for (let i = 0; i < size; i++) s += String.fromCharCode(97 + Math.floor(r() * 26));
  return s;
}

/**
 * A ReadableStream of `bytes` in the case's chunks, each after its delay;
 * `fault` replaces chunk `at` by an error of the source or by a chunk that
 * is not a Uint8Array.
 */
function source(bytes, c) {
  let i = 0;
  let at = 0;
  return new ReadableStream(
    {
      async pull(ctl) {
        if (i >= c.chunks.length) return ctl.close();
        if (c.delays[i]) await sleep(c.delays[i]);
        if (c.fault && c.fault.at === i) {
          if (c.fault.kind === 'error') return ctl.error(new Error('the source broke'));
          return ctl.enqueue(/** @type {any} */ (bytes.slice(at, at + c.chunks[i]).buffer));
        }
        ctl.enqueue(bytes.slice(at, at + c.chunks[i]));
        at += c.chunks[i++];
      },
    },
    { highWaterMark: 0 },
  );
}

/** `size` cut into `k` chunk sizes (some may be 0). */
function cut(g, size, k) {
  const at = g.many(k - 1, () => g.int(0, size)).sort((a, b) => a - b);
  return [...at, size].map((x, i) => x - (i ? at[i - 1] : 0));
}

const KINDS = ['stream', 'request-stream', 'request-bytes', 'function-string', 'function-bytes', 'function-stream', 'string'];

property('an upload stores the caller’s bytes or nothing, and succeeds only when stored', {
  cases: 100,
  generate(g) {
    const size = g.weighted([
      [1, 0],
      [3, g.int(1, 1000)],
      [6, g.int(1000, 150_000)],
    ]);
    const k = g.int(1, 8);
    const kind = g.pick(KINDS);
    const streamed = kind === 'stream' || kind === 'request-stream' || kind === 'function-stream';
    // (the main entry takes no body function: a one-shot stream is sent once, a Request is cloned)
    const entry = !kind.startsWith('function') && g.chance(0.3) ? 'main' : 'stream';
    const method = g.weighted([
      [6, 'PUT'],
      [2, 'POST+key'],
      [1, 'POST'],
    ]);
    const c = {
      size,
      salt: g.int(1, 2 ** 31),
      kind,
      method,
      chunks: cut(g, size, k),
      delays: g.many(k, () => (g.chance(0.3) ? g.int(1, 20) : 0)),
      // (a stream a body function returns goes to fetch as it is, and so does
      // the main entry's (or a tee of it): given a chunk that is not bytes,
      // Node 20's own fetch may hang, library or not)
      /** @type {{ at: number, kind: 'error' | 'not-bytes' } | undefined} */
      fault:
        streamed && g.chance(0.12)
          ? { at: g.int(0, k - 1), kind: kind === 'function-stream' || entry === 'main' ? 'error' : g.pick(['error', 'not-bytes']) }
          : undefined,
      entry,
      // (racers of a body sent whole each time: a string or a Request's bytes)
      hedge: (kind === 'string' || kind === 'request-bytes') && g.chance(0.2) ? g.int(1, 20) : undefined,
      options: {
        maxAttempts: g.int(1, 5),
        baseMs: g.int(1, 5),
        ...(g.chance(0.6) && { replayBufferBytes: g.pick([0, 1000, 65_536, 200_000, g.int(0, size + 1)]) }),
        ...(method === 'POST+key' && { idempotencyKey: true }),
      },
      /** @type {any[]} */
      steps: [],
    };
    for (let n = g.int(0, 3), i = 0; i < n; i++) {
      c.steps.push(
        g.weighted([
          [3, () => ({ early: true, status: g.pick([503, 500, 408]), delayMs: g.int(0, 40) })],
          [2, () => ({ early: true, reset: true, delayMs: g.int(0, 40) })],
          [2, () => ({ early: true, cutBodyAfter: g.int(0, Math.max(0, size - 1)), status: 503, delayMs: g.int(0, 60) })],
          [2, () => ({ status: g.pick([503, 500, 502]) })],
          [1, () => ({ reset: true })],
          [1, () => ({ hang: true })],
          [0.5, () => ({ status: 400 })],
        ])(),
      );
    }
    c.steps.push(
      g.weighted([
        [4, { echo: true }],
        [1, { status: 201 }],
        [1, { early: true, status: 503 }],
      ]),
    );
    // (a hung request ends only by a timeout)
    if (c.steps.some((s) => s.hang)) c.options.timeoutMs = g.int(100, 250);
    return c;
  },
  async check(c) {
    const p = `/upload-${unique++}`;
    const url = srv.url + p;
    const caller = text(c.size, c.salt);
    const bytes = enc.encode(caller);
    bodies.set(p, c.fault ? null : caller);
    srv.script(p, c.steps);
    const method = c.method.startsWith('POST') ? 'POST' : 'PUT';
    /** @type {[any, any]} */
    let args;
    if (c.kind === 'stream') args = [url, { method, body: source(bytes, c), duplex: 'half' }];
    else if (c.kind === 'request-stream') args = [new Request(url, { method, body: source(bytes, c), duplex: 'half' }), undefined];
    else if (c.kind === 'request-bytes') args = [new Request(url, { method, body: caller }), undefined];
    else if (c.kind === 'function-string') args = [url, { method, body: () => caller }];
    else if (c.kind === 'function-bytes') args = [url, { method, body: () => bytes.slice() }];
    else if (c.kind === 'function-stream') args = [url, { method, body: () => source(bytes, c), duplex: 'half' }];
    else args = [url, { method, body: caller }];
    /** @type {Response | undefined} */
    let res;
    let error;
    try {
      const { replayBufferBytes, ...own } = c.options;
      // (replayBufferBytes is the stream entry's: the main entry refuses it)
      /** @type {Record<string, any>} */
      const options = c.entry === 'main' ? own : { ...own, replayBufferBytes };
      if (c.hedge !== undefined) options.hedge = hedge({ delayMs: c.hedge });
      res = await (c.entry === 'main' ? main : fetchWithBackoff)(...args, options);
      await res.body?.cancel();
    } catch (e) {
      error = e;
    }
    const mine = () => srv.requests.filter((r) => r.path === p);
    // (an early answer may leave the body streaming: its end is waited for a
    // little, then left to the check of every case's requests at the end)
    const ended = () => mine().every((r) => r.complete !== false || r.broken);
    for (let t = 0; t < 40 && !ended(); t++) await sleep(5);
    const stored = mine().filter((r) => r.complete !== false);
    for (const r of stored) {
      assert.ok(
        !c.fault,
        `a body the caller never gave whole (${c.fault?.kind} at chunk ${c.fault?.at}) was stored: ${r.body.length} bytes`,
      );
      assert.ok(r.body === caller, `a stored body of ${r.body.length} bytes is not the caller's ${caller.length}`);
    }
    if (res?.ok) assert.ok(stored.length > 0, `the call resolved ${res.status} but no request holds the caller's bytes`);
    return `${res ? `${res.ok ? '2xx' : res.status}` : `rejected ${error?.name}`}, ${stored.length ? 'stored' : 'none stored'}`;
  },
});
