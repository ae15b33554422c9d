// wasm-backoff/undici's edges, with undici's Agent against a node:http
// server of this file's that tells which sockets were closed: an answer held
// while an async shouldRetry judges it is aborted (not drained) when the
// caller aborts or the deadline passes; a retried answer still draining
// when the call ends is let go; an upgrade (101) is the answer, told once;
// a dispatch that throws is not retried; a caller handler that throws gets
// onError, not an unhandled rejection; an attempt queued behind a busy
// connection still meets timeoutMs and the deadline; an abort just before
// a held answer is handed over wins.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Agent } from 'undici';
import { retryInterceptor } from 'wasm-backoff/undici';
import { sleep, until } from '../support/wait.mjs';

let server;
let url;
/** The server's side of each upgraded connection. @type {import('node:net').Socket[]} */
const upgraded = [];
/** Every request's socket: { path, closed }. */
const sockets = [];
before(async () => {
  server = http.createServer((req, res) => {
    const rec = { path: req.url, closed: false };
    sockets.push(rec);
    req.socket.once('close', () => (rec.closed = true));
    if (req.url.startsWith('/stall')) {
      // a failure whose body never ends
      res.writeHead(req.url.includes('503') ? 503 : 500, { 'content-length': '1000' });
      res.write('x'.repeat(10));
      return;
    }
    if (req.url.startsWith('/retry-stall') && sockets.filter((s) => s.path === req.url).length === 1) {
      res.writeHead(503, { 'content-length': '1000' });
      res.write('y'.repeat(10));
      return;
    }
    if (req.url.startsWith('/hang')) return;
    if (req.url.startsWith('/nf')) return void res.writeHead(404).end('nope');
    res.end('ok');
  });
  server.on('upgrade', (req, socket) => {
    upgraded.push(socket); // (an upgraded socket leaves the server's connections: closed in after())
    sockets.push({ path: `upgrade ${req.url}`, closed: false });
    socket.write('HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: x\r\n\r\n');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${server.address().port}`;
});
after(() => {
  for (const s of upgraded) s.destroy();
  server.closeAllConnections();
  server.close();
});

/** A legacy handler that records what it is told; `abort` is what onConnect gave. */
function recorder(throwAt) {
  const ev = [];
  const h = {
    ev,
    abort: undefined,
    onConnect(a) {
      ev.push('connect');
      h.abort = a;
    },
    onHeaders(s) {
      ev.push(`headers ${s}`);
      if (throwAt === 'headers') throw new Error('handler threw');
      return true;
    },
    onData() {
      if (ev.at(-1) !== 'data') ev.push('data');
      return true;
    },
    onComplete() {
      ev.push('complete');
    },
    onError(e) {
      ev.push(`error ${e?.message ?? e}`);
    },
    onUpgrade(s, _headers, socket) {
      ev.push(`upgrade ${s}`);
      socket.destroy(); // (the upgraded socket is the handler's to own: undici lets it go)
    },
  };
  return h;
}

/** An Agent and its dispatch through the interceptor. */
function through(options, agentOptions) {
  const agent = new Agent(agentOptions);
  return [agent, retryInterceptor(options)(agent.dispatch.bind(agent))];
}

const socketOf = (path) => sockets.find((s) => s.path === path);

test('an answer held while shouldRetry judges is aborted when the caller aborts, and at the deadline', async () => {
  const [agent, d] = through({ baseMs: 5, shouldRetry: () => new Promise(() => {}) });
  const h = recorder();
  d({ origin: url, path: '/stall-abort', method: 'GET' }, h);
  await until('the held answer', () => socketOf('/stall-abort'));
  await sleep(30);
  h.abort(new Error('caller abort'));
  await until('its socket closed', () => socketOf('/stall-abort').closed, 2000);
  assert.deepEqual(h.ev, ['connect', 'error caller abort']);
  const [agent2, d2] = through({ baseMs: 5, maxElapsedMs: 150, shouldRetry: () => new Promise(() => {}) });
  const h2 = recorder();
  d2({ origin: url, path: '/stall-deadline', method: 'GET' }, h2);
  await until('the deadline', () => h2.ev.length === 2, 3000);
  await until('its socket closed', () => socketOf('/stall-deadline')?.closed, 2000);
  assert.deepEqual(h2.ev, ['connect', 'error maxElapsedMs (150 ms) passed']);
  await Promise.all([agent.destroy(), agent2.destroy()]);
});

test("a retried 503 whose body stalls is let go when the call ends on the next attempt's 200", async () => {
  const [agent, d] = through({ baseMs: 5 });
  const h = recorder();
  d({ origin: url, path: '/retry-stall', method: 'GET' }, h);
  await until('the call', () => h.ev.includes('complete'), 3000);
  await until('the first socket closed', () => socketOf('/retry-stall').closed, 2000);
  assert.deepEqual(h.ev, ['connect', 'headers 200', 'data', 'complete']);
  await agent.destroy();
});

test('an upgrade (101) is the answer: told once, never retried nor timed out, and the call ends', async () => {
  const done = [];
  const [agent, d] = through({ baseMs: 5, timeoutMs: 100, onDone: (i) => done.push(i.reason) });
  const h = recorder();
  d({ origin: url, path: '/up', method: 'GET', upgrade: 'x' }, h);
  await until('the call', () => done.length, 2000);
  await sleep(200); // (past timeoutMs)
  assert.deepEqual(h.ev, ['connect', 'upgrade 101']);
  assert.deepEqual(done, ['success']);
  assert.equal(sockets.filter((s) => s.path === 'upgrade /up').length, 1);
  await agent.destroy();
});

test('a dispatch that throws is not retried; a caller handler that throws gets onError', async () => {
  let calls = 0;
  const d = retryInterceptor({ baseMs: 1 })(() => {
    calls++;
    throw new TypeError('bad dispatch');
  });
  const h = recorder();
  d({ origin: url, path: '/x', method: 'GET' }, h);
  await until('the error', () => h.ev.length === 2);
  assert.equal(calls, 1);
  assert.deepEqual(h.ev, ['connect', 'error bad dispatch']);
  const unhandled = [];
  const seen = (e) => unhandled.push(e);
  process.on('unhandledRejection', seen);
  const [agent, d2] = through({ baseMs: 5 });
  const h2 = recorder('headers');
  d2({ origin: url, path: '/nf', method: 'GET' }, h2); // (a 404: held, then handed over)
  await until('the error', () => h2.ev.length === 3);
  await sleep(20);
  process.off('unhandledRejection', seen);
  assert.deepEqual(h2.ev, ['connect', 'headers 404', 'error handler threw']);
  assert.deepEqual(unhandled, []);
  await agent.destroy();
});

test('an attempt queued behind a busy connection meets timeoutMs and the deadline', async () => {
  // (each on its own: together, which ends the call depends on how late the real timers fire)
  for (const [options, error] of [
    [{ timeoutMs: 100, maxAttempts: 1 }, 'timeoutMs (100 ms) passed'],
    [{ maxElapsedMs: 300 }, 'maxElapsedMs (300 ms) passed'],
  ]) {
    const [agent, d] = through({ baseMs: 5, ...options }, { connections: 1 });
    // (the one connection, busy with a request that never ends)
    agent.dispatch({ origin: url, path: '/hang', method: 'GET' }, recorder());
    const h = recorder();
    d({ origin: url, path: '/queued', method: 'GET' }, h);
    await until(error, () => h.ev.length === 2, 3000);
    assert.deepEqual(h.ev, ['connect', `error ${error}`]);
    await agent.destroy();
  }
});

test('an abort in the microtasks between the verdict and the hand-over wins', async () => {
  for (let depth = 0; depth < 6; depth++) {
    let h;
    const [agent, d] = through({
      baseMs: 5,
      shouldRetry: () => {
        let p = Promise.resolve();
        for (let i = 0; i < depth; i++) p = p.then();
        p.then(() => h.abort(new Error('late abort')));
        return Promise.resolve(false);
      },
    });
    h = recorder();
    d({ origin: url, path: `/stall-503-late-${depth}`, method: 'GET' }, h);
    await until(`depth ${depth}`, () => h.ev.some((e) => e.startsWith('error')), 2000);
    assert.equal(h.ev.filter((e) => e.startsWith('error')).length, 1, `depth ${depth}: ${h.ev}`);
    await agent.destroy();
  }
});
