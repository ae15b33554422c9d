// Runs the shared checks of wasm-backoff/testing (testing-checks.mjs) in
// whatever runtime executes this file (Deno, Bun), importing the package by
// its name as a user would; prints one JSON line: the failures.
// Usage: <runtime> tests/testing/run.mjs
import * as testing from 'wasm-backoff/testing';
import { withBackoff, retry } from 'wasm-backoff';
import { createGate, BrokenCircuitError } from 'wasm-backoff/gate';
import { testingFailures } from './testing-checks.mjs';

console.log(JSON.stringify(await testingFailures({ ...testing, withBackoff, retry, createGate, BrokenCircuitError })));
