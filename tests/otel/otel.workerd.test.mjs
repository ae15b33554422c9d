// wasm-backoff/otel in workerd (miniflare): the runtime smoke of
// otel-checks.mjs inside a Worker, with workerd's fetch, against the
// scripted server on 127.0.0.1 (outcomes and order only: what telemetry
// records of waits is otel.node.test.mjs's, on virtual time). The worker imports the
// SDK by its package names, so it is bundled with esbuild first (into
// target/otel-worker/, beside the package's .wasm files it imports as they ship).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { workerOptions } from '../support/workerd.mjs';
import { startScripted } from '../server/scripted.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const out = path.join(root, 'target/otel-worker/worker.mjs');

let mf, srv;
before(async () => {
  srv = await startScripted();
  await build({
    entryPoints: [path.join(root, 'tests/workerd/otel.mjs')],
    outfile: out,
    bundle: true,
    format: 'esm',
    // (the SDK's browser builds: workerd has no node:os, node:util)
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    external: ['cloudflare:workers'],
    logLevel: 'warning',
    plugins: [
      {
        // (each .wasm stays an import of pkg/'s file: workerd compiles it as a module)
        name: 'pkg-wasm',
        setup: (b) => b.onResolve({ filter: /\.wasm$/ }, (a) => ({ path: `../../pkg/${path.basename(a.path)}`, external: true })),
      },
    ],
  });
  mf = new Miniflare({ ...workerOptions('otel.mjs', { ORIGIN: srv.url }), scriptPath: out });
});
after(async () => {
  await mf?.dispose();
  await srv?.close();
});

test('the otel smoke passes inside workerd', { timeout: 60_000 }, async () => {
  const res = await mf.dispatchFetch('http://worker.test/');
  assert.deepEqual(await res.json(), []);
});
