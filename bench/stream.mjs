// 10. Streams (wasm-backoff/stream, issue 26): what its three body paths
// cost and keep, against the real scripted server in another process.
//
// - Idle timeout: MB/s of a 100 MB body (written in 16 KiB chunks) read
//   to its end, fetchWithBackoff with idleTimeoutMs against bare fetch,
//   interleaved rounds, median ratio (target ≥ 0.95×).
// - Replay buffer: retained memory (heap + array buffers after a full GC,
//   sampled every 5 MB) while a 100 MB streamed upload is sent and the
//   server drops it at 90 %; the stream entry's bounded buffer against the
//   main entry cloning a Request with a stream body (target ≤ buffer + one
//   chunk).
// - Resume: a 100 MB download cut 5 times at seeded random offsets,
//   resumed with Range: its SHA-256 against the body's, the requests, and
//   the bytes the server sent beyond the body (lost in flight when cut).
//
//   node --expose-gc bench/stream.mjs [rounds]   prints the section's lines (bench/run.mjs puts them in RESULTS.md)
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { fetchWithBackoff, withBackoff as streamed } from 'wasm-backoff/stream';
import { mulberry32, spawnScripted } from '../tests/server/scripted.mjs';

const MB = 1e6;
const SIZE = 100 * MB;
const CHUNK = 16384;
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const fmt = (x, d = 2) => x.toFixed(d);
const int = (x) => Math.round(x).toLocaleString('en-US');

/** Reads a body to its end; [bytes, ms]. */
async function drain(res, hash) {
  const t0 = performance.now();
  let n = 0;
  for await (const c of res.body) {
    n += c.byteLength;
    hash?.update(c);
  }
  return [n, performance.now() - t0];
}

/** MB/s of bare fetch and of fetchWithBackoff with idleTimeoutMs, interleaved. */
async function throughput(srv, rounds) {
  await srv.script('/big', { size: SIZE, chunk: CHUNK });
  const url = `${srv.url}/big`;
  const runs = {
    fetch: () => fetch(url),
    idle: () => fetchWithBackoff(url, undefined, { idleTimeoutMs: 30_000 }),
  };
  const mbs = { fetch: [], idle: [] };
  const ratios = [];
  // (a round of each first, untimed: connections, JIT)
  for (const k of ['fetch', 'idle']) await drain(await runs[k]());
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ['idle', 'fetch'] : ['fetch', 'idle'];
    const t = {};
    for (const k of order) {
      const [n, ms] = await drain(await runs[k]());
      if (n !== SIZE) throw new Error(`${k}: ${n} bytes`);
      t[k] = n / MB / (ms / 1000);
      mbs[k].push(t[k]);
    }
    ratios.push(t.idle / t.fetch);
  }
  return [
    '| 100 MB body, 16 KiB writes | MB/s (median) | ratio to bare fetch (median of rounds) |',
    '|---|---:|---:|',
    `| bare \`fetch\` | ${fmt(median(mbs.fetch), 0)} | 1.00 |`,
    `| \`fetchWithBackoff\` (stream entry), \`idleTimeoutMs: 30000\` | ${fmt(median(mbs.idle), 0)} | **${fmt(median(ratios))}** (rounds ${fmt(Math.min(...ratios))}–${fmt(Math.max(...ratios))}; target ≥ 0.95) |`,
    '',
    `${rounds} interleaved rounds after an untimed one (the order alternates), Node ${process.version}'s fetch against the scripted server in another process on 127.0.0.1.`,
  ];
}

/** The retained memory now, after a full GC (heap + array buffers). */
const retained = () => {
  globalThis.gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** A 100 MB stream of fresh 16 KiB chunks that calls `sample` every 5 MB, and how many bytes were read from it. */
function upload(sample) {
  let sent = 0;
  const stream = new ReadableStream(
    {
      pull(ctl) {
        if (sent >= SIZE) return ctl.close();
        if (sent % (5 * MB) < CHUNK) sample();
        ctl.enqueue(new Uint8Array(CHUNK).fill(sent & 255));
        sent += CHUNK;
      },
    },
    { highWaterMark: 0 },
  );
  return [stream, () => sent];
}

/** Runs `go` on an upload, sampling retained memory (after a full GC) every 5 MB of it and every 500 ms; [its outcome, peak growth (B), bytes read]. */
async function peakOf(go) {
  const base = retained();
  let peak = 0;
  const sample = () => (peak = Math.max(peak, retained() - base));
  const [body, sent] = upload(sample);
  const timer = setInterval(sample, 500);
  let outcome;
  try {
    outcome = String((await go(body)).status);
  } catch (e) {
    outcome = `rejects: ${e.message}${e.cause ? ` (${e.cause.message ?? e.cause})` : ''}`;
  } finally {
    clearInterval(timer);
  }
  return [outcome, peak, sent()];
}

/**
 * A fetch function that reads the request's body as a socket would, and
 * fails as a dropped connection does after `cut` bytes: what is retained
 * then is the driver's alone (undici's own write queue, which a real
 * socket adds whatever the driver, is left out).
 */
const dropping = (cut) => async (input, init) => {
  const body = init?.body ?? input.body;
  let n = 0;
  for await (const c of body) if ((n += c.byteLength) >= cut) throw new TypeError('fetch failed');
  return new Response('ok');
};

async function replay(rounds) {
  const send = dropping(0.9 * SIZE);
  const runs = [
    ['the fetch function alone, `body: stream` (the reference)', (body) => send('http://upload.test/', { method: 'PUT', body })],
    [
      'stream entry: `body: stream` (`replayBufferBytes` 65 536)',
      (body) => streamed(send, { baseMs: 10, maxAttempts: 2 })('http://upload.test/', { method: 'PUT', body }),
    ],
  ];
  const peaks = runs.map(() => []);
  const last = [];
  for (let r = 0; r < rounds; r++) {
    for (const [k, [, go]] of runs.entries()) {
      const [outcome, peak, sent] = await peakOf(go);
      peaks[k].push(peak);
      last[k] = [outcome, sent];
    }
  }
  const ref = Math.min(...peaks[0]);
  const rows = runs.map(
    ([name], k) =>
      `| ${name} | ${int(last[k][1] / MB)} MB | ${int(Math.min(...peaks[k]) / 1024)} KiB (${peaks[k].map((p) => int(p / 1024)).join(', ')}) | ${k ? `**${int((Math.min(...peaks[k]) - ref) / 1024)} KiB**` : '—'} | ${last[k][0]} |`,
  );
  return [
    '| 100 MB streamed upload, the connection dropped at 90 MB | read from the source | peak retained growth, least of the rounds (each round) | over the reference | the call |',
    '|---|---:|---:|---:|---|',
    ...rows,
    '',
    "Retained memory: `heapUsed + arrayBuffers` after `gc()`, sampled every 5 MB read from the source and every 500 ms, less the same before the call; fresh 16 KiB chunks; `maxAttempts: 2`; interleaved rounds. The reference reads the same stream with nothing of ours. In some rounds of either row a sample also holds about 5 MB of chunks that the GC has let go but Node has not yet freed (its array buffers are released after the collection): the least of the rounds leaves that out. The request goes to a fetch function that reads the body and fails at 90 MB as a dropped connection does (`fetch failed`), so that what is measured is the driver's own: Node's fetch adds its write queue on a real socket whatever the driver (up to the whole body on 127.0.0.1, where the source is faster than the socket). Target for the stream entry: the buffer plus one chunk (80 KiB). Its failure comes after the buffer overflowed: the call ends (`'not-replayable'`) and rejects. (The main entry's `Request` clone, a tee, is not measured here: against this fetch function its second attempt never ends in Node 20, the tee of a tee waiting on a cancelled branch; on a real socket it keeps every byte sent for the next attempt.)",
  ];
}

async function resume(srv) {
  const r = mulberry32(26);
  // Five answers cut after a seeded random share of what is left, then one whole.
  const cuts = Array.from({ length: 5 }, () => 1 + Math.floor(r() * (SIZE / 5)));
  const headers = { etag: '"big-v1"' };
  await srv.script('/resume', [
    ...cuts.map((cutAfter) => ({ size: SIZE, range: true, headers, cutAfter })),
    { size: SIZE, range: true, headers },
  ]);
  const want = createHash('sha256');
  for (let at = 0; at < SIZE; at += 65536) {
    const n = Math.min(65536, SIZE - at);
    want.update(Uint8Array.from({ length: n }, (_, i) => ((at + i) * 7) % 251));
  }
  const got = createHash('sha256');
  const t0 = performance.now();
  const res = await fetchWithBackoff(`${srv.url}/resume`, undefined, { baseMs: 10, maxAttempts: 10, resume: true });
  const [n] = await drain(res, got);
  const ms = performance.now() - t0;
  const reqs = await srv.requests('/resume');
  const sent = reqs.reduce((s, q) => s + (q.sent ?? 0), 0);
  const [a, b] = [want.digest('hex'), got.digest('hex')];
  return [
    '| 100 MB download, cut 5 times | bytes received | SHA-256 equal | requests | bytes sent by the server | re-sent (sent − 100 MB) | time |',
    '|---|---:|---|---:|---:|---:|---:|',
    `| \`resume: true\`, strong ETag | ${int(n)} | ${a === b ? '**yes**' : `NO (${b.slice(0, 12)} vs ${a.slice(0, 12)})`} | ${reqs.length} | ${int(sent)} | ${int(sent - SIZE)} | ${int(ms)} ms |`,
    '',
    `Each answer cut after (seed 26): ${cuts.map(int).join(', ')} bytes; resumed from ${reqs
      .slice(1)
      .map((q) => int(+/^bytes=(\d+)-$/.exec(q.headers.range)[1]))
      .join(
        ', ',
      )}. Re-sent bytes are those the server wrote that never reached the client (in flight when the socket was cut); the client asks for exactly what it lacks.`,
  ];
}

/** The section's lines. */
export async function streamSection({ quick = false } = {}) {
  const srv = await spawnScripted();
  try {
    return [
      'The stream entry (`wasm-backoff/stream`) against the scripted server in another process (`node --expose-gc bench/stream.mjs`).',
      '',
      '**Idle timeout: throughput**',
      '',
      ...(await throughput(srv, quick ? 2 : 21)),
      '',
      '**Replay buffer: memory of a streamed upload that fails at 90 %**',
      '',
      ...(await replay(quick ? 1 : 7)),
      '',
      '**Resume: a download cut five times**',
      '',
      ...(await resume(srv)),
    ];
  } finally {
    await srv.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');
  console.log((await streamSection({ quick: process.argv.includes('--quick') })).join('\n'));
  process.exit(0);
}
