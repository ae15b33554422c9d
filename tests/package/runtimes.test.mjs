// The package in Deno and Bun (both from npm: the `deno` and `bun` dev
// packages), imported by name: the calculator checks, the golden schedules
// and the fetch and stream entries' runtime smoke sets
// (tests/fetch/fetch-checks.mjs, stream-checks.mjs: outcomes and order,
// never a duration) against the scripted server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startScripted } from '../server/scripted.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = (...p) => path.join(root, 'node_modules', ...p);
// Bun's npm package moves its binary into place with an install script; if
// npm skipped that script, the binary is still in the platform package.
const platformBun = bin('@oven', 'bun-linux-x64', 'bin', 'bun');
const BUN = existsSync(platformBun) ? platformBun : bin('.bin', 'bun');
const RUNTIMES = {
  deno: [bin('.bin', 'deno'), ['run', '--allow-read', '--allow-net=127.0.0.1', '--allow-env', 'tests/runtimes/run.mjs']],
  bun: [BUN, ['tests/runtimes/run.mjs']],
};

let srv;
before(async () => {
  srv = await startScripted();
});
after(() => srv?.close());

for (const [name, [cmd, args]] of Object.entries(RUNTIMES)) {
  test(`${name}: import by name, golden schedules, validation, fetch and stream smokes`, { timeout: 60_000 }, async () => {
    const stdout = await new Promise((resolve, reject) =>
      execFile(
        cmd,
        [...args, srv.url],
        { cwd: root, env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1' } },
        (err, out, errOut) => (err ? reject(new Error(`${name} failed: ${err.message}\n${errOut}`)) : resolve(out)),
      ),
    );
    const r = JSON.parse(stdout.trim().split('\n').pop());
    assert.deepEqual(r, { golden: [], validation: [], semantics: [], fetch: [], stream: [] });
  });
}
