// A Cloudflare Worker (run by miniflare's real workerd) that runs the otel
// smoke (tests/otel/otel-checks.mjs) inside workerd: the package's workerd
// entries with the OpenTelemetry SDK's in-memory exporters, which the
// checks import by their package names: tests/otel/otel.workerd.test.mjs
// bundles this file with esbuild first, the package's .wasm files left as they ship.
import * as main from '../../pkg/workerd.js';
import { instrument } from '../../pkg/otel/workerd.js';
import { otelSmokes } from '../otel/otel-checks.mjs';

export default {
  async fetch(_request, env) {
    return Response.json(await otelSmokes({ lib: main, instrument }, env.ORIGIN));
  },
};
