// Request throughput when the first attempt always succeeds: what a retry
// wrapper costs on the happy path. Every contender uses Node's global fetch
// underneath, against a keep-alive `node:http` server on 127.0.0.1 that runs
// in a separate Node process (this same file, started with --server).
//
//   node bench/throughput.mjs     after `npm run build`; installs the peers
//                                 (bench/'s own dev-dependencies) on first use
//
// Contenders: bare fetch, fetchWithBackoff, ky, p-retry around fetch,
// fetch-retry's wrapped fetch, cockatiel's retry policy (handleAll,
// ExponentialBackoff, 3 attempts) executing fetch; all with default options.
//
// Method: every contender is warmed up, then R rounds; each round runs every
// contender once, in an order rotated by one each round, so drift hits all of
// them alike. A sample is requests/s over a fixed number of requests. Reported:
// the median over rounds, and the ratio to bare fetch in the same round
// (median, min and max over rounds). Many short rounds rather than a few long
// ones: on a small shared machine, sequential ping-pong between two processes
// varies a lot from one second to the next, and the median of many adjacent
// comparisons is what stays put. Prints one markdown table per mode and writes
// the same to bench/THROUGHPUT.md.
//
// Options (--name=value): rounds (both modes), seq-rounds, seq (requests per
// sequential sample), conc-rounds, conc (per concurrent sample), concurrency;
// modes=sequential,concurrent and only=<contender,...> for a partial run (no
// THROUGHPUT.md then); out=<file> writes the markdown there instead of
// bench/THROUGHPUT.md (bench/run.mjs does). E.g. for a CPU profile:
//   node --cpu-prof bench/throughput.mjs --only=fetchWithBackoff --modes=sequential
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import http from 'node:http';
import os from 'node:os';
import v8 from 'node:v8';
import { ensurePeers } from './peers.mjs';
import vm from 'node:vm';

const SELF = fileURLToPath(import.meta.url);
const BENCH = dirname(SELF);

// ---------------------------------------------------------------- the server
if (process.argv[2] === '--server') {
  const body = Buffer.from('ok');
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': body.length });
    res.end(body);
  });
  server.keepAliveTimeout = 120_000; // connections stay open between samples
  server.headersTimeout = 125_000;
  server.requestTimeout = 0;
  server.maxRequestsPerSocket = 0;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
  // The parent holds our stdin: when it goes away (exit, crash, kill), so do we.
  process.stdin
    .on('end', () => process.exit(0))
    .on('error', () => process.exit(0))
    .resume();
  process.on('SIGTERM', () => process.exit(0));
} else {
  await main();
}

// ---------------------------------------------------------------- the client
async function main() {
  const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
  const num = (k, d) => {
    if (!args.has(k)) return d;
    const v = Number(args.get(k));
    if (!(Number.isInteger(v) && v > 0)) throw new RangeError(`--${k} must be a positive integer`);
    return v;
  };
  const SEQ_ROUNDS = num('seq-rounds', num('rounds', 61));
  const SEQ_N = num('seq', 300); // requests per sequential sample
  const CONC = num('concurrency', 256);
  const CONC_ROUNDS = num('conc-rounds', num('rounds', 25));
  const CONC_N = num('conc', 2000); // requests per concurrent sample
  const only = args.get('only')?.split(',');
  const modes = args.get('modes')?.split(',') ?? ['sequential', 'concurrent'];
  const writeMd = !args.has('no-md') && !only && args.get('modes') === undefined;
  const mdFile = args.get('out') ?? join(BENCH, 'THROUGHPUT.md');

  ensurePeers();
  const [{ default: ky }, { default: pRetry }, { default: fetchRetry }, { retry, handleAll, ExponentialBackoff }, { fetchWithBackoff }] =
    await Promise.all([
      import('ky'),
      import('p-retry'),
      import('fetch-retry'),
      import('cockatiel'),
      import('wasm-backoff').catch((e) => {
        throw new Error(`cannot import 'wasm-backoff' (build pkg/ first: npm run build): ${e.message}`);
      }),
    ]);

  // A full GC between samples, so no sample pays for the previous one's garbage.
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');

  const server = spawn(process.execPath, [SELF, '--server'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const stop = () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGTERM');
  };
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

  try {
    const port = await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.once('exit', (code) => reject(new Error(`server exited (${code}) before listening`)));
      createInterface({ input: server.stdout }).once('line', (l) => resolve(Number(l)));
    });
    const url = `http://127.0.0.1:${port}/`;

    // Made once, as a user would (fetch-retry wraps fetch; a cockatiel policy is shared).
    const retryingFetch = fetchRetry(fetch);
    const policy = retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() });
    /** Each contender: one request, resolving with the body text. */
    let contenders = [
      ['bare fetch', () => fetch(url).then((r) => r.text())],
      ['fetchWithBackoff', () => fetchWithBackoff(url).then((r) => r.text())],
      ['ky', () => ky(url).text()],
      [
        'p-retry',
        () =>
          pRetry(() =>
            fetch(url).then((r) => {
              if (!r.ok) throw new Error(r.status);
              return r.text();
            }),
          ),
      ],
      ['fetch-retry', () => retryingFetch(url).then((r) => r.text())],
      ['cockatiel', () => policy.execute(() => fetch(url).then((r) => r.text()))],
    ];
    if (only) contenders = contenders.filter(([name]) => only.includes(name));
    if (!contenders.length) throw new Error(`--only: no such contender`);

    const check = (t) => {
      if (t !== 'ok') throw new Error(`unexpected body ${JSON.stringify(t)}`);
    };
    async function sequential(one, n) {
      for (let i = 0; i < n; i++) check(await one());
    }
    async function concurrent(one, n) {
      let next = 0;
      const worker = async () => {
        while (next++ < n) check(await one());
      };
      await Promise.all(Array.from({ length: Math.min(CONC, n) }, worker));
    }
    async function sample(run, one, n) {
      gc();
      const t0 = process.hrtime.bigint();
      await run(one, n);
      const s = Number(process.hrtime.bigint() - t0) / 1e9;
      return n / s;
    }

    const MODES = {
      sequential: {
        run: sequential,
        n: SEQ_N,
        rounds: SEQ_ROUNDS,
        warm: 1500,
        label: `Sequential: 1 in flight, ${SEQ_N} requests per sample, ${SEQ_ROUNDS} rounds`,
      },
      concurrent: {
        run: concurrent,
        n: CONC_N,
        rounds: CONC_ROUNDS,
        warm: 2 * CONC_N,
        label: `${CONC} concurrent: ${CONC} workers on a shared counter, ${CONC_N} requests per sample, ${CONC_ROUNDS} rounds`,
      },
    };

    const cpu = os.cpus();
    const machine = `Machine: ${cpu[0]?.model ?? 'unknown CPU'}, ${cpu.length} cores, Node ${process.version} (${os.platform()} ${os.arch()}). Server: node:http, keep-alive, in a separate Node process on 127.0.0.1, answering 200 \`ok\`. Counts: sequential ${SEQ_ROUNDS} rounds × ${SEQ_N} requests per contender, ${CONC} concurrent ${CONC_ROUNDS} rounds × ${CONC_N}; each contender warmed up first; order rotated every round. ky ${pkgVersion('ky')}, p-retry ${pkgVersion('p-retry')}, fetch-retry ${pkgVersion('fetch-retry')}, cockatiel ${pkgVersion('cockatiel')} (default options; cockatiel: handleAll, maxAttempts 3, default ExponentialBackoff), wasm-backoff ${pkgVersion('wasm-backoff')} (default options).`;
    const out = [`# Throughput, first attempt always succeeds`, '', machine, ''];
    console.log(machine + '\n');
    const t0 = Date.now();

    for (const mode of modes) {
      const m = MODES[mode];
      if (!m) throw new Error(`unknown mode ${mode}`);
      const load = otherLoad(server.pid);
      // Warm-up: JIT, the connection pool (CONC sockets in concurrent mode), the wasm module.
      for (const [, one] of contenders) await m.run(one, m.warm);
      const rps = new Map(contenders.map(([name]) => [name, []]));
      const ratio = new Map(contenders.map(([name]) => [name, []]));
      for (let r = 0; r < m.rounds; r++) {
        const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]);
        const round = new Map();
        for (const [name, one] of order) round.set(name, await sample(m.run, one, m.n));
        for (const [name, v] of round) {
          rps.get(name).push(v);
          ratio.get(name).push(v / (round.get('bare fetch') ?? NaN));
        }
        process.stderr.write(
          `[throughput] ${mode} round ${r + 1}/${m.rounds}: ${[...round].map(([n, v]) => `${n} ${v.toFixed(0)}`).join(', ')}\n`,
        );
      }
      const lines = [
        `## ${m.label}`,
        '',
        '| contender | median req/s | ratio to bare fetch | min–max ratio |',
        '|---|---:|---:|---:|',
        ...contenders.map(([name]) => {
          const rs = ratio.get(name);
          return `| ${name} | ${median(rps.get(name)).toFixed(0)} | ${fmt(median(rs))} | ${rs.every(Number.isFinite) ? `${fmt(Math.min(...rs))}–${fmt(Math.max(...rs))}` : '—'} |`;
        }),
        '',
        `Other load during this mode (other processes and hypervisor steal; this client and the server excluded): ${loadText(load())}.`,
        '',
      ];
      console.log(lines.join('\n'));
      out.push(...lines);
    }
    const took = ((Date.now() - t0) / 1000).toFixed(0);
    const tail = `Median req/s: over rounds. Ratio: median over rounds of (contender req/s ÷ bare fetch req/s in the same round); min–max: of those per-round ratios. All contenders call Node's global fetch and read the body with .text(). Took ${took} s, warm-ups included.`;
    out.push(tail, '');
    console.log(tail);
    if (writeMd) writeFileSync(mdFile, out.join('\n'));
  } finally {
    stop();
  }
  // Undici's idle keep-alive sockets would hold the process open for a while.
  process.exit(0);
}

/**
 * CPU used by processes other than this one and the server since the call,
 * in cores, from /proc (Linux); the returned function reads it. Another load
 * on a 2-core machine shifts all numbers, the ratios less so.
 */
function otherLoad(serverPid) {
  const machine = () => {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .map(Number);
    return user + nice + system + irq + softirq + steal;
  };
  const proc = (pid) => {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]); // utime + stime, jiffies
  };
  try {
    const m0 = machine(),
      p0 = proc('self') + proc(serverPid),
      t0 = Date.now();
    return () => {
      try {
        const jiffies = machine() - m0 - (proc('self') + proc(serverPid) - p0);
        return Math.max(0, jiffies / 100 / ((Date.now() - t0) / 1000)); // USER_HZ = 100 on Linux
      } catch {
        return undefined;
      }
    };
  } catch {
    return () => undefined;
  }
}

function loadText(cores) {
  if (cores === undefined) return 'unknown';
  const busy =
    cores > 0.25
      ? ' — a busy machine: the numbers, sequential ones most, then measure scheduling more than the libraries; rerun when it is idle'
      : '';
  return `${cores.toFixed(2)} of the ${os.cpus().length} cores on average${busy}`;
}

function fmt(x) {
  return Number.isFinite(x) ? x.toFixed(2) : '—';
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const h = s.length >> 1;
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

function pkgVersion(name) {
  for (const dir of [join(BENCH, 'node_modules', name), join(BENCH, '..', 'node_modules', name)]) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;
    } catch {}
  }
  return '?';
}
