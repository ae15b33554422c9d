// Runs the shared checks in whatever runtime executes this file (Deno, Bun),
// importing the package by its name as a user would, and prints one JSON line
// of failures. Usage: <runtime> tests/runtimes/run.mjs <scripted server URL>
import * as main from 'wasm-backoff';
import { RetryBudget } from 'wasm-backoff/budget';
import { createGate } from 'wasm-backoff/gate';
import * as stream from 'wasm-backoff/stream';

const lib = { ...main, RetryBudget, createGate };
import { goldenFailures, validationFailures, semanticsFailures } from '../package/checks.mjs';
import { fetchScenarios } from '../fetch/fetch-checks.mjs';
import { streamScenarios } from '../fetch/stream-checks.mjs';
import { waitScenarios } from '../fetch/waits-checks.mjs';

const server = (globalThis.Deno?.args ?? process.argv.slice(2))[0];
const golden = JSON.parse(
  await (globalThis.Deno
    ? Deno.readTextFile(new URL('../../core/tests/golden/seeded.json', import.meta.url))
    : Bun.file(new URL('../../core/tests/golden/seeded.json', import.meta.url)).text()),
);
const out = {
  golden: goldenFailures(lib.Backoff, golden),
  validation: validationFailures(lib.Backoff),
  semantics: semanticsFailures(lib.Backoff),
  // The real-time one-second wait already ran in Node and Chromium.
  fetch: await fetchScenarios(lib, server, (name) => !name.includes('real one-second')),
  stream: await streamScenarios({ ...stream, main }, server),
  // The waits the outcome chooses (issue 26), as in Node, Chromium and workerd.
  waits: await waitScenarios(lib, server),
};
console.log(JSON.stringify(out));
