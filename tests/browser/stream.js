// Runs the stream entry's shared scenarios in this page against the
// scripted server whose URL is in ?server=… (Chromium streams a request
// body over HTTP/2 only, and the server speaks HTTP/1.1: the stream upload
// scenarios run in Node, workerd, Deno and Bun, and in Chromium over HTTP/2
// in stream-h2.js).
import * as main from '/pkg/index.js';
import * as stream from '/pkg/stream/index.js';
import { streamScenarios } from '/tests/fetch/stream-checks.mjs';

const server = new URL(location.href).searchParams.get('server');
window.results = await streamScenarios({ ...stream, main }, server, (name) => !name.startsWith('stream upload: a ReadableStream'));
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
