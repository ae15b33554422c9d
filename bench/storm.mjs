// 5. Retry storm: Brooker's optimistic-concurrency model (www/storm.js's
// `simulate`, unchanged), for our policies (bench/storm-policies.mjs) and the
// peers' default schedules (bench/storm-peers.mjs), at each N, over the same
// seeds for every policy (network seed 1 + 7919·r, client i's Backoff seed
// network seed · 1000 + i, as www/storm.js's storm()). Points are spread over
// worker threads (one per core).
//
//   node bench/storm.mjs [seeds]
import { Worker, isMainThread, parentPort } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { fmt } from './peers.mjs';

const SELF = fileURLToPath(import.meta.url);

export const STORM_REFERENCE = 'full jitter';
/** The issue's independent run at N = 100: mean calls and completion time (ms). */
export const ISSUE_REFERENCE = {
  'full jitter': [796, 4921],
  decorrelated: [1002, 4603],
  'equal jitter': [812, 6651],
  'no backoff': [2421, 2027],
};

/** Every policy of the table, ours first; the same list in every thread. */
async function allPolicies() {
  const [{ OUR_POLICIES }, { peerPolicies }, { Backoff }] = await Promise.all([
    import('./storm-policies.mjs'),
    import('./storm-peers.mjs'),
    import('wasm-backoff/backoff'),
  ]);
  const ours = OUR_POLICIES.map((p) => ({
    ...p,
    ours: true,
    ...(p.make ? { maxAttempts: p.maxAttempts ?? Infinity } : fromOptions(Backoff, p)),
  }));
  const peers = (await peerPolicies()).map((p) => ({ ...p, group: 'peers (default schedule)' }));
  return [...ours, ...peers];
}

/**
 * `make` and the attempt cap for a Backoff-options entry. The run lifts the
 * options' own limits (clients in the model never give up); the cap is what
 * the options give up after, counted on a seeded instance.
 */
function fromOptions(Backoff, p) {
  if (p.options === null) return { make: () => () => 0, maxAttempts: p.maxAttempts ?? Infinity };
  let lifted = { ...p.options, maxAttempts: Infinity, maxElapsedMs: undefined };
  try {
    new Backoff(lifted);
  } catch {
    lifted = { ...lifted, maxAttempts: 63 }; // preset 'hadoop' allows at most 63
  }
  let maxAttempts = p.maxAttempts;
  if (maxAttempts === undefined) {
    const b = new Backoff({ ...p.options, seed: 1 });
    let retries = 0;
    while (retries < 10_000 && b.next() !== undefined) retries++;
    maxAttempts = retries === 10_000 ? Infinity : retries + 1;
  }
  return {
    maxAttempts,
    make: ({ seed, client }) => {
      const b = new Backoff({ ...lifted, seed: seed * 1000 + client });
      let last = 0;
      // Should the lifted schedule still end (hadoop past 62 retries), keep its last wait.
      return () => (last = b.next() ?? last);
    },
  };
}

// ------------------------------------------------------------------ worker
if (!isMainThread) {
  const { simulate } = await import('../www/storm.js');
  const policies = await allPolicies();
  parentPort.on('message', ({ index, clients, seeds }) => {
    const p = policies[index];
    let calls = 0,
      time = 0,
      gaveUp = 0;
    for (let r = 0; r < seeds; r++) {
      const seed = 1 + r * 7919;
      const failures = new Array(clients).fill(0);
      const out = simulate({
        clients,
        seed,
        makeBackoff: (client) => {
          const f = p.make({ seed, client });
          return (attempt) => {
            failures[client] = attempt;
            return f(attempt);
          };
        },
      });
      calls += out.calls;
      time += out.timeMs;
      gaveUp += failures.filter((n) => n >= p.maxAttempts).length;
    }
    parentPort.postMessage({ index, clients, calls: calls / seeds, timeMs: time / seeds, gaveUp: gaveUp / seeds });
  });
}

// ------------------------------------------------------------------ main
/** Runs every (policy, N) point; returns the markdown lines and the raw results. */
export async function stormSection({
  seeds = 300,
  sizes = [10, 25, 50, 100],
  threads = Math.max(1, Math.min(availableParallelism(), 4)),
  log = () => {},
} = {}) {
  const policies = await allPolicies();
  const tasks = [];
  for (const clients of [...sizes].sort((a, b) => b - a))
    for (let index = 0; index < policies.length; index++) tasks.push({ index, clients, seeds });
  const results = new Map(); // `${index}/${clients}` → result
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: Math.min(threads, tasks.length) }, async () => {
      const w = new Worker(SELF);
      try {
        await new Promise((resolve, reject) => {
          w.on('error', reject);
          const next = () => {
            const t = tasks.shift();
            if (!t) return resolve();
            w.postMessage(t);
          };
          w.on('message', (m) => {
            results.set(`${m.index}/${m.clients}`, m);
            log(`[storm] ${results.size} points (${policies[m.index].name}, N=${m.clients})`);
            next();
          });
          next();
        });
      } finally {
        await w.terminate();
      }
    }),
  );
  const took = (Date.now() - t0) / 1000;
  const ref = policies.findIndex((p) => p.name === STORM_REFERENCE);
  const get = (i, n) => results.get(`${i}/${n}`);
  const secs = (ms) =>
    ms >= 1e7 ? `${(ms / 1000).toExponential(1)} s` : ms >= 1e4 ? `${(ms / 1000).toFixed(0)} s` : `${(ms / 1000).toFixed(2)} s`;
  const ratio = (x) => (x >= 1000 ? x.toExponential(1) : fmt(x));
  const cell = (v, r, text) => `${text(v)} (${ratio(v / r)})`;
  const name = (p) => (p.ours ? `**${p.name}**` : p.name);
  const capText = (m) => (m === Infinity ? '∞' : String(m));
  const big = sizes[sizes.length - 1];
  const callsTable = [
    `| policy | group | ${sizes.map((n) => `N=${n}`).join(' | ')} | max attempts (real use) | would give up at N=${big} |`,
    `|---|---|${sizes.map(() => '---:').join('|')}|---:|---:|`,
    ...policies.map(
      (p, i) =>
        `| ${name(p)} | ${p.group ?? ''} | ${sizes.map((n) => cell(get(i, n).calls, get(ref, n).calls, (v) => v.toFixed(0))).join(' | ')} | ${capText(p.maxAttempts)} | ${p.maxAttempts === Infinity ? '—' : `${get(i, big).gaveUp.toFixed(1)} of ${big}`} |`,
    ),
  ];
  const timeTable = [
    `| policy | ${sizes.map((n) => `N=${n}`).join(' | ')} |`,
    `|---|${sizes.map(() => '---:').join('|')}|`,
    ...policies.map((p, i) => `| ${name(p)} | ${sizes.map((n) => cell(get(i, n).timeMs, get(ref, n).timeMs, secs)).join(' | ')} |`),
  ];
  const notes = policies.filter((p) => p.note).map((p) => `${p.name}: ${p.note}`);
  // Agreement with the issue's reference run at N = 100.
  const agree = [];
  let allAgree = true;
  if (sizes.includes(100)) {
    for (const [n, [c, t]] of Object.entries(ISSUE_REFERENCE)) {
      const i = policies.findIndex((p) => p.name === n);
      if (i < 0) continue;
      const dc = get(i, 100).calls / c - 1,
        dt = get(i, 100).timeMs / t - 1;
      const ok = Math.abs(dc) <= 0.05 && Math.abs(dt) <= 0.05;
      allAgree &&= ok;
      agree.push(
        `| ${n} | ${c} / ${t} ms | ${get(i, 100).calls.toFixed(0)} / ${get(i, 100).timeMs.toFixed(0)} ms | ${(dc * 100).toFixed(1)} % / ${(dt * 100).toFixed(1)} % | ${ok ? 'yes' : '**no**'} |`,
      );
    }
  }
  const lines = [
    `### Mean calls (writes) per run; in brackets the ratio to ${STORM_REFERENCE} at the same N`,
    '',
    ...callsTable,
    '',
    `### Mean completion time (when the last client succeeds); in brackets the ratio to ${STORM_REFERENCE}`,
    '',
    ...timeTable,
    '',
    `${seeds} seeds per point, the same seeds for every policy; ${policies.length} policies × ${sizes.length} sizes computed in ${took.toFixed(0)} s on ${threads} worker threads. Hop: |N(10 ms, 2 ms)|; calls count writes, as in Brooker's post. In the model every client retries until it succeeds: the policies' attempt limits are lifted for the run, and the last column counts the clients (mean per run) whose failures reached the limit they have in real use, i.e. that would have given up and surfaced an error instead. Peers using Math.random are not seeded (their rows vary a little from run to run). Our Backoff presets run exactly as shipped (bases of 100 ms to 1 s). Schedules without jitter (exponential, flume, ky, p-retry, exponential-backoff, fetch-retry's constant) keep the clients in lockstep, so each round lets only a few through: their calls do not depend on the base, and with no cap and no attempt limit their completion times grow as 2^rounds — the astronomical times are that, not a bug; in real use those clients give up instead (last column of the calls table).`,
    '',
    ...(notes.length
      ? [
          "Peers' schedules (n = retry number, 1 = first): " +
            notes.join('; ') +
            ". cockatiel's `retry()` without a backoff waits 0 ms (ConstantBackoff(0)), i.e. the no-backoff row.",
          '',
        ]
      : []),
  ];
  if (agree.length) {
    lines.push(
      `### Agreement with the issue's reference run (N = 100)`,
      '',
      '| strategy | issue: calls / time | this run | difference | within 5 %? |',
      '|---|---:|---:|---:|---:|',
      ...agree,
      '',
      allAgree ? 'All four agree with the reference within 5 % (calls and time).' : 'Not all agree within 5 %: see the rows marked **no**.',
    );
  }
  return { lines, results, policies, allAgree };
}

if (isMainThread && process.argv[1] === SELF) {
  const { lines } = await stormSection({ seeds: Number(process.argv[2] ?? 50), log: (m) => process.stderr.write(m + '\n') });
  console.log(lines.join('\n'));
}
