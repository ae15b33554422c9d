// Runs JS test files, each in a node process of its own (node runs the
// file, its tests reporting as under `node --test`), from one queue, by
// `--jobs` (2) at a time: one while the file `--hold` names exists
// (scripts/test.sh holds it while the Rust checks still build),
// two once it is gone, three once only short files are left. Each file's
// output is printed whole when it ends (never interleaved), with node's own
// `ℹ pass N` / `ℹ fail N` lines, which scripts/test.sh sums; the files
// that failed are listed again at the end.
// The longest files go first (their seconds in the last run, kept in
// target/test-times.json; in a fresh clone, scripts/test-times.json, a
// recent run's, committed: else every file counted as long, they ran in
// alphabetical order, and the longest, tests/site/, began near the end;
// a file not seen yet counts as long).
//
//   node scripts/run-tests.mjs [--hold <file>] [--jobs N] <test files…>
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHROMIUM, launchOptions } from '../tests/support/chromium.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TIMES = join(ROOT, 'target', 'test-times.json');
const BASELINE = join(ROOT, 'scripts', 'test-times.json');

const args = process.argv.slice(2);
/** @param {string} name */
const take = (name) => {
  const i = args.indexOf(name);
  if (i < 0) return undefined;
  const [, v] = args.splice(i, 2);
  return v;
};
const hold = take('--hold');
const jobs = Number(take('--jobs') ?? 2);
const files = args;

/** @type {Record<string, number>} */
let times = {};
for (const f of [TIMES, BASELINE]) {
  try {
    times = JSON.parse(readFileSync(f, 'utf8'));
    break;
  } catch {}
}
const queue = [...files].sort((a, b) => (times[b] ?? 1e9) - (times[a] ?? 1e9));

const failed = [];
let running = 0;

/**
 * A file that took under SHORT s in the last run is mostly a process
 * starting and waiting on I/O: once only such files are left, one more
 * runs beside the `jobs` (the queue's last ~50 files kept two cores 50-85 %
 * busy; alone, by 2 they took 23-24 s, by 3 19-20 s).
 */
const SHORT = 3;

/**
 * Whether another file may start now: one at a time while the hold file exists, one more for the short
 * tail (the queue is longest first: only short files are left once the next is short).
 */
const room = () => {
  if (hold && existsSync(hold)) return running < 1;
  return running < ((times[queue[0]] ?? 1e9) < SHORT ? jobs + 1 : jobs);
};

/**
 * A file ends when its process exits by itself: no `--test-force-exit`, so a timer, an interval, a
 * socket, a listener or a child process that a test left behind keeps it alive (a leak delays the
 * file, or hangs it, instead of passing unseen). One still running LIMIT s after it started is
 * stopped and failed. (The longest, tests/site/ or tests/demo/demo-models, took 43-64 s in ten stressed full runs.)
 */
const LIMIT = 300;

/** Runs one file; resolves when it ended (its output printed). @param {string} file */
function run(file) {
  running++;
  const t0 = Date.now();
  return new Promise((resolve) => {
    // (the file run by node itself, not under `node --test`, which starts a second process to run it
    // in: one process a file, not two, ~0.2 s of CPU less each; the same reporter, the same exit code)
    const child = spawn(process.execPath, ['--test-reporter=spec', file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    /** @type {Buffer[]} */
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    let late = false;
    const cap = setTimeout(() => {
      late = true;
      child.kill('SIGKILL');
      // (a process it started may hold the pipes open: the file has ended all the same)
      child.stdout.destroy();
      child.stderr.destroy();
    }, LIMIT * 1000);
    child.on('close', (code) => {
      clearTimeout(cap);
      running--;
      const s = (Date.now() - t0) / 1000;
      times[file] = s;
      let text = Buffer.concat(out).toString();
      // A file that failed with no test failing (it threw as it loaded, or after its tests, or did not
      // end) counts as one failure in the closing total, as `node --test` counted it.
      const uncounted = code !== 0 && !/^ℹ fail [1-9]/m.test(text);
      if (late) text += `✖ ${file} did not end within ${LIMIT} s: a test hung, or left a timer, a socket or a process behind\n`;
      else if (uncounted) text += `✖ ${file} failed outside its tests (exit code ${code})\n`;
      if (uncounted) text += 'ℹ fail 1\n';
      process.stdout.write(`\n▶ ${file} (${s.toFixed(1)} s)\n${text}`);
      if (code !== 0) failed.push(file);
      resolve(undefined);
    });
  });
}

// One Chromium for every file (a Playwright browser server, which tests/support/browser.mjs's launch()
// connects to: each file's pages in contexts of their own, closed as it disconnects), not one launched
// per file: the 22 Chromium files took 261 s of CPU against 294. Should it not start, each file
// launches its own (and reports what is wrong with Chromium itself).
let browser;
if (!process.env.WASM_BACKOFF_BROWSER && existsSync(CHROMIUM)) {
  try {
    const { chromium } = await import('playwright-core');
    browser = await chromium.launchServer(launchOptions());
    process.env.WASM_BACKOFF_BROWSER = browser.wsEndpoint();
  } catch (e) {
    process.stdout.write(`(no shared Chromium, each file launches its own: ${String(e).split('\n')[0]})\n`);
  }
}

await new Promise((done) => {
  const pump = () => {
    while (queue.length && room()) run(/** @type {string} */ (queue.shift())).then(pump);
    if (!queue.length && running === 0) return done(undefined);
    // (the hold file may go while every slot is busy or waiting: look again)
    if (queue.length && !room()) setTimeout(pump, 500).unref?.();
  };
  pump();
  // (a slot opens when the hold file goes, not only when a file ends)
  const watch = setInterval(pump, 500);
  watch.unref();
});

await browser?.close();
mkdirSync(dirname(TIMES), { recursive: true });
writeFileSync(TIMES, JSON.stringify(times, null, 1));
if (failed.length) {
  process.stdout.write(`\n✖ files that failed (${failed.length}):\n${failed.map((f) => `  ${f}\n`).join('')}`);
  process.exitCode = 1;
}
