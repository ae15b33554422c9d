// Runs the stream entry's two ReadableStream upload scenarios in this page
// against the scripted server over HTTP/2 (tests/server/h2.mjs) whose URL is
// in ?server=…: Chromium streams a request body only over HTTP/2 or later.
import * as main from '/pkg/index.js';
import * as stream from '/pkg/stream/index.js';
import { streamScenarios } from '/tests/fetch/stream-checks.mjs';

const server = new URL(location.href).searchParams.get('server');
window.results = await streamScenarios({ ...stream, main }, server, (name) => name.startsWith('stream upload: a ReadableStream'));
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
