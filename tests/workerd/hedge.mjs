// A Cloudflare Worker (miniflare's real workerd) that runs the shared
// hedging and failover scenarios inside workerd against the three scripted
// servers on 127.0.0.1 (env.A, env.B, env.C). /fleet runs the failover scenario
// with a gate again, the gate being the fleet's: sharedGate on GateObject
// (env.GATES), so the object keeps each endpoint's health.
import * as main from '../../pkg/workerd.js';
import { createGate, GateObject, sharedGate } from '../../pkg/gate/workerd.js';
import { hedge } from '../../pkg/hedge/workerd.js';
import { failover } from '../../pkg/failover/workerd.js';
import { SCENARIOS, hedgeScenarios } from '../hedge/hedge-checks.mjs';

export { GateObject };

export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === '/fleet') {
      const shared = (/** @type {any} */ o) => sharedGate(env.GATES, o);
      const lib = { ...main, createGate: shared, hedge, failover };
      const mine = (/** @type {string} */ n) => n.startsWith('with a gate, a failed endpoint');
      if (Object.keys(SCENARIOS).filter(mine).length !== 1) return Response.json(['no scenario of failover with a gate']);
      return Response.json(await hedgeScenarios(lib, [env.A, env.B, env.C], mine));
    }
    return Response.json(await hedgeScenarios({ ...main, createGate, hedge, failover }, [env.A, env.B, env.C]));
  },
};
