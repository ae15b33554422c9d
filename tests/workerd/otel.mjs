// A Cloudflare Worker (run by miniflare's real workerd) that runs the shared
// otel scenarios (tests/otel/otel-checks.mjs) inside workerd: the package's
// workerd entries with the OpenTelemetry SDK's in-memory exporters, which
// the checks import by their package names: tests/otel/otel.workerd.test.mjs
// bundles this file with esbuild first, the package's .wasm files left as they ship.
import * as main from '../../pkg/workerd.js';
import { createGate, createLimiter } from '../../pkg/gate/workerd.js';
import { RetryBudget } from '../../pkg/budget/workerd.js';
import { instrument } from '../../pkg/otel/workerd.js';
import { otelScenarios } from '../otel/otel-checks.mjs';

const lib = { ...main, createGate, createLimiter, RetryBudget };

export default {
  async fetch(_request, env) {
    return Response.json(await otelScenarios({ lib, instrument }, env.ORIGIN));
  },
};
