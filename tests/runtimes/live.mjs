// Runs the shared checks of wasm-backoff/sse and /ws (tests/sse/live-checks.mjs)
// in whatever runtime executes this file (Deno, Bun: each has a WebSocket),
// importing the package by its name, and prints one JSON line of failures.
// Usage: <runtime> tests/runtimes/live.mjs <live server URL> <its ws URL> <prefix>
import { EventSource } from 'wasm-backoff/sse';
import { WebSocket } from 'wasm-backoff/ws';
import { liveScenarios } from '../sse/live-checks.mjs';

const [url, wsUrl, prefix] = globalThis.Deno?.args ?? process.argv.slice(2);
console.log(JSON.stringify(await liveScenarios({ EventSource, WebSocket, prefix }, { url, wsUrl })));
