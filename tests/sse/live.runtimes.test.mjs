// wasm-backoff/sse and /ws in Deno and Bun (the `deno` and `bun` dev
// packages), imported by name, against the live server on 127.0.0.1: the
// shared checks (tests/sse/live-checks.mjs) with each runtime's own WebSocket.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLive } from '../server/live.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = (...p) => path.join(root, 'node_modules', ...p);
// (Bun's binary, where npm skipped its install script: as tests/package/runtimes.test.mjs)
const platformBun = bin('@oven', 'bun-linux-x64', 'bin', 'bun');
const RUNTIMES = {
  deno: [bin('.bin', 'deno'), ['run', '--allow-read', '--allow-net=127.0.0.1', '--allow-env', 'tests/runtimes/live.mjs']],
  bun: [existsSync(platformBun) ? platformBun : bin('.bin', 'bun'), ['tests/runtimes/live.mjs']],
};

let live;
before(async () => {
  live = await startLive();
});
after(() => live?.close());

for (const [name, [cmd, args]] of Object.entries(RUNTIMES)) {
  test(`${name}: the shared EventSource and WebSocket checks`, { timeout: 60_000 }, async () => {
    const stdout = await new Promise((resolve, reject) =>
      execFile(
        cmd,
        [...args, live.url, live.wsUrl, name],
        { cwd: root, env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } },
        (err, out, errOut) => (err ? reject(new Error(`${name} failed: ${err.message}\n${errOut}`)) : resolve(out)),
      ),
    );
    assert.deepEqual(JSON.parse(stdout.trim().split('\n').pop()), []);
  });
}
