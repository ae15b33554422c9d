// A Cloudflare Worker (miniflare's real workerd) that runs the shared checks
// of wasm-backoff/sse and /ws (tests/sse/live-checks.mjs) against the live
// server (env.LIVE, env.LIVE_WS), with workerd's own fetch and WebSocket.
import { EventSource } from '../../pkg/sse/workerd.js';
import { WebSocket } from '../../pkg/ws/workerd.js';
import { liveScenarios } from '../sse/live-checks.mjs';

export default {
  async fetch(_request, env) {
    return Response.json(await liveScenarios({ EventSource, WebSocket, prefix: 'workerd' }, { url: env.LIVE, wsUrl: env.LIVE_WS }));
  },
};
