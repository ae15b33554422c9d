// The checks of wasm-backoff/sse and wasm-backoff/ws against the live server
// (tests/server/live.mjs) on 127.0.0.1, shared by every runtime: Node
// (live.node.test.mjs), a Chromium page (tests/browser/live.js), workerd
// (tests/workerd/live.mjs), Deno and Bun (tests/runtimes/live.mjs). Real
// time, short waits (baseMs 5), one real-time wait of a server-named second
// (the rest of the timing is tested on the virtual clock: tests/sse/*.virtual).
// `liveScenarios(lib, server)` resolves to the names of the failed checks
// with their reasons: [] when all pass.
//
// lib: { EventSource, WebSocket, WS?: the WebSocket implementation to inject,
//        prefix: a key prefix (one per runtime), skip?: (name) => boolean }
// server: { url, wsUrl }

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves when `f()` holds (polled every 5 ms), or rejects naming `what` after `ms`. */
async function until(what, f, ms = 5000) {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const eq = (a, b, what) => {
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`${what}: ${JSON.stringify(a)} !== ${JSON.stringify(b)}`);
};

/** What a scenario opened, closed after it whatever happened (a failed check leaves no connection behind). */
const opened = [];

/** The server's log of `key`. */
const logOf = async (server, key) => (await fetch(`${server.url}/log/${key}`)).json();

/** An EventSource recording what it hears. */
function watched(lib, url, options) {
  const es = new lib.EventSource(url, { baseMs: 5, seed: 7, ...options });
  opened.push(es);
  const seen = [];
  es.addEventListener('open', () => seen.push('open'));
  es.addEventListener('message', (e) => seen.push(`${e.data}#${e.lastEventId}`));
  es.addEventListener('error', (e) => seen.push(`error ${es.readyState}${e.status ? ` ${e.status}` : ''}`));
  return { es, seen };
}

const SSE = {
  'sse: events in order across a clean end, a 503 and a cut; Last-Event-ID on each reconnect; a 204 ends it': async (lib, server, key) => {
    const { es, seen } = watched(lib, `${server.url}/sse/${key}?plan=ok2,503,hold1,ok1,204`);
    // (the third connection is cut once e3 was heard: a cut before the client read it would drop it
    // with the stream's unread chunks, and it would come again after the reconnect)
    await until('e3', () => seen.includes('e3#3'));
    await fetch(`${server.url}/cut/${key}`);
    await until('the end', () => es.readyState === 2);
    eq(
      seen,
      ['open', 'e1#1', 'e2#2', 'error 0', 'error 0 503', 'open', 'e3#3', 'error 0', 'open', 'e4#4', 'error 0', 'error 2 204'],
      'events',
    );
    eq(
      (await logOf(server, key)).map((r) => r.lastEventId),
      [null, '2', '2', '3', '4'],
      'Last-Event-ID',
    );
  },
  'sse: a 404 closes it with an error event naming the status, and nothing more is sent': async (lib, server, key) => {
    const { es, seen } = watched(lib, `${server.url}/sse/${key}?plan=404`);
    let message;
    es.onerror = (e) => (message = e.message);
    await until('the end', () => es.readyState === 2);
    await sleep(30);
    eq(seen, ['error 2 404'], 'events');
    if (!/404/.test(message)) throw new Error(`message ${message}`);
    eq((await logOf(server, key)).length, 1, 'connections');
  },
  'sse: an answer that is not an event stream closes it': async (lib, server, key) => {
    const { es, seen } = watched(lib, `${server.url}/sse/${key}?plan=html`);
    await until('the end', () => es.readyState === 2);
    eq(seen, ['error 2 200'], 'events');
  },
  'sse: POST with a body and headers, sent again on the reconnect': async (lib, server, key) => {
    const { es, seen } = watched(lib, `${server.url}/sse/${key}?plan=ok1,ok1,204`, {
      method: 'POST',
      body: 'q=1',
      headers: { 'content-type': 'text/plain' },
    });
    await until('the end', () => es.readyState === 2);
    eq(
      seen.filter((s) => /^e\d/.test(s)),
      ['e1#1', 'e2#2'],
      'events',
    );
    eq(
      (await logOf(server, key)).map((r) => [r.method, r.body, r.accept]),
      Array(3).fill(['POST', 'q=1', 'text/event-stream']),
      'requests',
    );
  },
  'sse: close() ends it: no event, no request after it': async (lib, server, key) => {
    const { es, seen } = watched(lib, `${server.url}/sse/${key}?plan=hold1`);
    await until('the first event', () => seen.includes('e1#1'));
    es.close();
    await sleep(50);
    eq([es.readyState, seen], [2, ['open', 'e1#1']], 'after close');
    eq((await logOf(server, key)).length, 1, 'connections');
  },
  'sse: a 503 with Retry-After: 1 is waited (real time)': async (lib, server, key) => {
    const { es, seen } = watched(lib, `${server.url}/sse/${key}?plan=503ra1,ok1,204`);
    await until('the end', () => es.readyState === 2, 8000);
    const [a, b] = await logOf(server, key);
    if (!(b.at - a.at >= 990)) throw new Error(`the retry went after ${b.at - a.at} ms`);
    eq(seen.slice(0, 3), ['error 0 503', 'open', 'e1#1'], 'events');
  },
};

/** A WebSocket recording what it hears. */
function socket(lib, url, options) {
  const ws = new lib.WebSocket(url, undefined, { WebSocket: lib.WS, baseMs: 5, seed: 7, ...options });
  opened.push(ws);
  const seen = [];
  ws.addEventListener('open', () => seen.push('open'));
  ws.addEventListener('message', (e) => seen.push(String(e.data)));
  // (Deno tells an abnormal closure as code 0, the others as 1006)
  ws.addEventListener('close', (e) => seen.push(`close ${e.code || 1006} ${ws.readyState}`));
  return { ws, seen };
}

const WS = {
  'ws: a drop reconnects; what is sent meanwhile waits in the queue and goes in order': async (lib, server, key) => {
    // (the server drops the connection once it has echoed the first message: no race with its clock)
    const { ws, seen } = socket(lib, `${server.wsUrl}/ws/${key}?plan=dropafter1,echo`);
    ws.send('a'); // (queued: not open yet)
    // (sent from the drop's close event: the socket is down, so they are queued for the reconnect)
    let queued;
    ws.addEventListener('close', () => {
      if (queued !== undefined || ws.readyState !== 0) return; // (only the drop: not a close for good)
      ws.send('b');
      ws.send('c');
      queued = ws.bufferedAmount;
    });
    await until('the echoes', () => seen.includes('echo c'));
    eq(queued, 2, 'bytes queued while down');
    ws.close();
    await until('closed', () => ws.readyState === 3);
    eq(seen, ['open', 'echo a', 'close 1006 0', 'open', 'echo b', 'echo c', 'close 1005 3'], 'events');
    eq((await logOf(server, key)).length, 2, 'connections');
  },
  'ws: a refused upgrade is retried': async (lib, server, key) => {
    const { ws, seen } = socket(lib, `${server.wsUrl}/ws/${key}?plan=refuse503,echo`);
    await until('open', () => seen.includes('open'));
    ws.close(1000);
    await until('closed', () => ws.readyState === 3);
    eq((await logOf(server, key)).length, 2, 'connections');
  },
  'ws: the close code 1008 ends it for good': async (lib, server, key) => {
    const { ws, seen } = socket(lib, `${server.wsUrl}/ws/${key}?plan=close1008,echo`);
    await until('closed', () => ws.readyState === 3);
    await sleep(40);
    eq(seen, ['open', 'close 1008 3'], 'events');
    eq((await logOf(server, key)).length, 1, 'connections');
  },
  'ws: past maxQueued, send throws a RangeError; the queued messages go': async (lib, server, key) => {
    const { ws, seen } = socket(lib, `${server.wsUrl}/ws/${key}?plan=echo`, { maxQueued: 2 });
    ws.send('1');
    ws.send('2');
    let error;
    try {
      ws.send('3');
    } catch (e) {
      error = e;
    }
    if (!(error instanceof RangeError && /maxQueued/.test(error.message))) throw new Error(`send threw ${error}`);
    await until('the echoes', () => seen.includes('echo 2'));
    ws.close();
    eq((await logOf(server, key))[0].messages, ['1', '2'], 'sent');
  },
};

/**
 * Runs every scenario (but those `lib.skip` names); resolves to the failures.
 * @returns {Promise<string[]>}
 */
export async function liveScenarios(lib, server) {
  const failures = [];
  let i = 0;
  for (const [name, run] of Object.entries({ ...SSE, ...WS })) {
    if (lib.skip?.(name)) continue;
    try {
      await run(lib, server, `${lib.prefix}-${i++}`);
    } catch (e) {
      failures.push(`${name}: ${e?.stack ?? e}`);
    } finally {
      for (const x of opened.splice(0)) x.close();
    }
  }
  return failures;
}
