// Runs the fetch driver's runtime smoke set (tests/fetch/fetch-checks.mjs)
// in this page, then in a module Web Worker, against the scripted server
// whose URL is in ?server=… (another origin: CORS and preflights).
import * as main from '/pkg/index.js';
import { RetryBudget } from '/pkg/budget/index.js';
import { createGate } from '/pkg/gate/index.js';
import { fetchScenarios } from '/tests/fetch/fetch-checks.mjs';

// (the budget and gate entries load here too, as the scenarios' `lib` offers them)
const lib = { ...main, RetryBudget, createGate };

const server = new URL(location.href).searchParams.get('server');
const page = await fetchScenarios(lib, server);
const worker = await new Promise((resolve) => {
  const w = new Worker(`/tests/browser/fetch-worker.js?server=${encodeURIComponent(server)}`, { type: 'module' });
  w.onmessage = (e) => resolve(e.data);
  w.onerror = (e) => resolve([`worker error: ${e.message}`]);
});
window.results = { page, worker };
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
