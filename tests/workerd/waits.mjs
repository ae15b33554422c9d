// A Cloudflare Worker (miniflare's real workerd) that runs the shared wait
// scenarios (tests/fetch/waits-checks.mjs) inside workerd, against the
// scripted server on 127.0.0.1 (env.ORIGIN).
import * as main from '../../pkg/workerd.js';
import { createGate } from '../../pkg/gate/workerd.js';
import { waitScenarios } from '../fetch/waits-checks.mjs';

export default {
  async fetch(_request, env) {
    return Response.json(await waitScenarios({ ...main, createGate }, env.ORIGIN));
  },
};
