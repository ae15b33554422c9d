// Runs the shared checks of wasm-backoff/sse and /ws (tests/sse/live-checks.mjs)
// in this page, with Chromium's fetch and WebSocket, against the live server
// whose URLs are in ?url=…&ws=….
import { EventSource } from '/pkg/sse/index.js';
import { WebSocket } from '/pkg/ws/index.js';
import { liveScenarios } from '/tests/sse/live-checks.mjs';

const q = new URL(location.href).searchParams;
window.results = await liveScenarios({ EventSource, WebSocket, prefix: 'chromium' }, { url: q.get('url'), wsUrl: q.get('ws') });
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
