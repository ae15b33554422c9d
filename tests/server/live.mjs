// A scripted server of long-lived connections on 127.0.0.1, for the tests of
// wasm-backoff/sse and wasm-backoff/ws in every runtime: an event stream
// (Server-Sent Events) and a WebSocket endpoint, each driven by the URL so
// that a client in any runtime (Chromium, workerd, Deno, Bun) can script it
// without a control channel. Node built-ins and the `ws` package.
//
//   import { startLive } from './server/live.mjs';
//   const live = await startLive();         // { url, wsUrl, log(key), close() }
//
// GET /sse/<key>?plan=a,b,c&retry=ms : the n-th connection to <key> follows
// step n of the plan (the last repeats):
//   503, 429, 404, …   that status (text/plain)
//   503ra<s>           503 with Retry-After: <s>
//   204                No Content (the stream is over)
//   html               200 text/html (not an event stream)
//   ok<n>              an event stream: n events, then the stream ends cleanly
//   hold<n>            n events, then the stream stays open (until the client goes,
//                      or GET /cut/<key>)
//   stream             an event every `every` ms (default 20), for ever
// Events are numbered on from the request's Last-Event-ID (id: k, data: e<k>);
// `retry` adds a `retry:` field at the start. CORS allows any origin and header.
// GET /log/<key> : JSON, one record per connection: { at, lastEventId, method,
// body, accept, sent (events sent), closed (ms since start, once it closed) }.
// GET /cut/<key> : destroys the sockets of <key>'s open event streams (no clean
// end); answers how many. A cut the test makes once its client has read what
// it was sent: a cut at a time of the server's (some ms after the last event)
// could come before a loaded client read the event, and a stream that errors
// drops the chunks its reader had not taken yet (WHATWG streams), so the
// event would be heard only after the reconnect.
//
// WebSocket /ws/<key>?plan=… : the n-th connection follows step n:
//   refuse<status>     the upgrade is refused with that status
//   echo               messages are echoed (as `echo <message>`)
//   dropafter<n>       echo, and the socket is destroyed (no close frame) as soon as
//                      the n-th echo is written: a drop at a point of the exchange,
//                      not of the clock (what a preempted client would miss)
//   close<code>        echo, then a close frame with that code after `after` ms (default 30)
// Every connection is logged under /log/<key> too ({ at, messages }).
import http from 'node:http';
import { WebSocketServer } from 'ws';

/** The step of a plan for connection `n`. @param {URL} url @param {number} n */
const stepOf = (url, n) => {
  const plan = (url.searchParams.get('plan') ?? 'hold0').split(',');
  return plan[Math.min(n, plan.length - 1)];
};

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': '*',
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-expose-headers': '*',
};

/**
 * Starts the server; resolves to { url, wsUrl, log(key), logs, close() }.
 * @param {{ port?: number }} [options]
 */
export async function startLive({ port = 0 } = {}) {
  const logs = new Map();
  const t0 = performance.now();
  const now = () => Math.round(performance.now() - t0);
  const logOf = (key) => logs.get(key) ?? (logs.set(key, []), logs.get(key));
  /** Open event-stream answers, ended at close() (or GET /cut/<key>), and the key of each. @type {Map<http.ServerResponse, string>} */
  const open = new Map();

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    const [, kind, key] = url.pathname.split('/');
    if (req.method === 'OPTIONS') return res.writeHead(204, CORS).end();
    if (kind === 'log') return res.writeHead(200, { ...CORS, 'content-type': 'application/json' }).end(JSON.stringify(logOf(key)));
    if (kind === 'cut') {
      const cut = [...open].filter(([, k]) => k === key).map(([r]) => r);
      for (const r of cut) r.destroy();
      return res.writeHead(200, { ...CORS, 'content-type': 'application/json' }).end(String(cut.length));
    }
    if (kind !== 'sse' || !key) return res.writeHead(404, CORS).end();
    let body = '';
    for await (const chunk of req) body += chunk;
    const log = logOf(key);
    const last = req.headers['last-event-id'];
    const rec = { at: now(), lastEventId: last ?? null, method: req.method, body, accept: req.headers.accept ?? null, sent: 0 };
    log.push(rec);
    res.on('close', () => (rec.closed = now()));
    answer(url, log.length - 1, req, res, rec, open, key);
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => upgrade(wss, req, socket, head, logOf, now));
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  const base = `127.0.0.1:${server.address().port}`;
  return {
    url: `http://${base}`,
    wsUrl: `ws://${base}`,
    logs,
    log: (key) => logOf(key),
    close: async () => {
      for (const r of open.keys()) r.destroy();
      for (const c of wss.clients) c.terminate();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Answers an event-stream request by its step. */
function answer(url, n, req, res, rec, open, key) {
  const step = stepOf(url, n);
  let m;
  if ((m = /^(\d{3})(?:ra(\d+))?$/.exec(step))) {
    const headers = { ...CORS, 'content-type': 'text/plain' };
    if (m[2]) headers['retry-after'] = m[2];
    return res.writeHead(+m[1], headers).end(+m[1] === 204 ? undefined : `status ${m[1]}`);
  }
  if (step === 'html') return res.writeHead(200, { ...CORS, 'content-type': 'text/html' }).end('<p>not a stream</p>');
  if (!(m = /^(ok|hold)(\d+)$|^stream$/.exec(step))) return res.writeHead(500, CORS).end(`unknown step ${step}`);
  res.writeHead(200, { ...CORS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
  const retry = url.searchParams.get('retry');
  res.write(retry ? `retry: ${retry}\n\n` : ':\n\n');
  let id = Number(req.headers['last-event-id'] ?? 0) || 0;
  const send = () => {
    id++;
    rec.sent++;
    res.write(`id: ${id}\ndata: e${id}\n\n`);
  };
  open.set(res, key);
  res.on('close', () => open.delete(res));
  if (step === 'stream') {
    const every = Number(url.searchParams.get('every') ?? 20);
    const timer = setInterval(send, every);
    return res.on('close', () => clearInterval(timer));
  }
  for (let i = 0; i < +m[2]; i++) send();
  if (m[1] === 'ok') res.end();
}

/** Answers a WebSocket upgrade by its step. */
function upgrade(wss, req, socket, head, logOf, now) {
  const url = new URL(req.url, 'http://x');
  const [, kind, key] = url.pathname.split('/');
  const log = logOf(key);
  const step = stepOf(url, log.length);
  const rec = { at: now(), messages: [] };
  log.push(rec);
  let m;
  if (kind !== 'ws' || (m = /^refuse(\d{3})$/.exec(step))) {
    socket.end(`HTTP/1.1 ${m?.[1] ?? 404} Refused\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    return;
  }
  wss.handleUpgrade(req, socket, head, (ws) => {
    const dropAfter = Number(/^dropafter(\d+)$/.exec(step)?.[1] ?? Infinity);
    let echoed = 0;
    ws.on('message', (data, binary) => {
      rec.messages.push(binary ? `<${data.length} bytes>` : String(data));
      const last = ++echoed === dropAfter;
      ws.send(binary ? data : `echo ${data}`, last ? () => ws.terminate() : undefined);
    });
    if ((m = /^close(\d+)$/.exec(step))) setTimeout(() => ws.close(+m[1], 'scripted'), Number(url.searchParams.get('after') ?? 30));
  });
}

// As a process (for runtimes that cannot start it): prints {"url", "wsUrl"}; exits when stdin closes.
if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const live = await startLive({ port: Number(process.argv[2] ?? 0) });
  console.log(JSON.stringify({ url: live.url, wsUrl: live.wsUrl }));
  process.stdin.on('end', () => live.close().then(() => process.exit(0)));
  process.stdin.resume();
}
