// A Cloudflare Worker (miniflare's real workerd) that runs the shared checks
// of wasm-backoff/testing (testing-checks.mjs) inside workerd, on the
// package's workerd builds: the virtual clock there is the same code as in
// Node, standing in for workerd's own globals.
import * as testing from '../../pkg/testing/workerd.js';
import { withBackoff, retry } from '../../pkg/workerd.js';
import { createGate, BrokenCircuitError } from '../../pkg/gate/workerd.js';
import { testingFailures } from './testing-checks.mjs';

export default {
  async fetch() {
    return Response.json(await testingFailures({ ...testing, withBackoff, retry, createGate, BrokenCircuitError }));
  },
};
