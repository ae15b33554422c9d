// Runs the shared checks in whatever runtime executes this file (Deno, Bun),
// importing the package by its name as a user would, and prints one JSON line
// of failures: the calculator's, and the fetch and stream entries' runtime
// smoke sets against the scripted server. Usage: <runtime> tests/runtimes/run.mjs <scripted server URL>
import * as main from 'wasm-backoff';
import { RetryBudget } from 'wasm-backoff/budget';
import { createGate } from 'wasm-backoff/gate';
import * as stream from 'wasm-backoff/stream';

const lib = { ...main, RetryBudget, createGate };
import { goldenFailures, validationFailures, semanticsFailures } from '../package/checks.mjs';
import { fetchScenarios } from '../fetch/fetch-checks.mjs';
import { streamScenarios } from '../fetch/stream-checks.mjs';

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
  // The runtime smoke sets (timing and policy run once, in Node's virtual time).
  fetch: await fetchScenarios(lib, server),
  stream: await streamScenarios({ ...stream, main }, server),
};
console.log(JSON.stringify(out));
