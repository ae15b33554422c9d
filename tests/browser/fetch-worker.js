// A module Web Worker: no window, only the globals fetch/setTimeout. The
// server URL comes in the worker's own URL (a message could arrive before
// this module, which awaits the wasm, has installed its handler).
import * as main from '/pkg/index.js';
import { RetryBudget } from '/pkg/budget/index.js';
import { createGate } from '/pkg/gate/index.js';
import { fetchScenarios } from '/tests/fetch/fetch-checks.mjs';

// (the budget and gate entries load here too, as the scenarios' `lib` offers them)
const lib = { ...main, RetryBudget, createGate };

const server = new URL(self.location.href).searchParams.get('server');
self.postMessage(await fetchScenarios(lib, server));
