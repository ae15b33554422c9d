// Runs the shared wait scenarios (tests/fetch/waits-checks.mjs) in this
// page against the scripted server whose URL is in ?server=… (another origin:
// the headers read are exposed by its CORS answer).
import * as main from '/pkg/index.js';
import { createGate } from '/pkg/gate/index.js';
import { waitScenarios } from '/tests/fetch/waits-checks.mjs';

const server = new URL(location.href).searchParams.get('server');
window.results = await waitScenarios({ ...main, createGate }, server);
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
