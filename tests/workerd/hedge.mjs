// A Cloudflare Worker (miniflare's real workerd) that runs the hedging and
// failover smokes (tests/hedge/hedge-checks.mjs) inside workerd, with its
// own fetch, against the two scripted servers on 127.0.0.1 (env.A, env.B).
import * as main from '../../pkg/workerd.js';
import { createGate } from '../../pkg/gate/workerd.js';
import { hedge } from '../../pkg/hedge/workerd.js';
import { failover } from '../../pkg/failover/workerd.js';
import { hedgeSmokes } from '../hedge/hedge-checks.mjs';

export default {
  async fetch(_request, env) {
    return Response.json(await hedgeSmokes({ ...main, createGate, hedge, failover }, [env.A, env.B]));
  },
};
