// A Cloudflare Worker (run by miniflare's real workerd): it wraps its
// outgoing fetch with withBackoff and proxies every request to a flaky
// origin on 127.0.0.1 (env.ORIGIN). /__scenarios runs the fetch driver's
// runtime smoke set (tests/fetch/fetch-checks.mjs) inside workerd itself.
import * as main from '../../pkg/workerd.js';
import { RetryBudget } from '../../pkg/budget/workerd.js';
import { createGate } from '../../pkg/gate/workerd.js';

const lib = { ...main, RetryBudget, createGate };
import { fetchScenarios } from '../fetch/fetch-checks.mjs';

let retries = 0;
const retrying = lib.withBackoff(fetch, { baseMs: 5, maxDelayMs: 20, onRetry: () => retries++ });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/__scenarios') return Response.json(await fetchScenarios(lib, env.ORIGIN));
    const res = await retrying(env.ORIGIN + url.pathname + url.search, {
      method: request.method,
      headers: request.headers,
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer(),
    });
    const headers = new Headers(res.headers);
    headers.set('x-retries', String(retries));
    return new Response(res.body, { status: res.status, headers });
  },
};
