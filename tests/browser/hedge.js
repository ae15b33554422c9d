// Runs the shared hedging and failover scenarios in this page against the
// three scripted servers whose URLs are in ?a=…&b=…&c=…
import * as main from '/pkg/index.js';
import { createGate } from '/pkg/gate/index.js';
import { hedge } from '/pkg/hedge/index.js';
import { failover } from '/pkg/failover/index.js';
import { hedgeScenarios } from '/tests/hedge/hedge-checks.mjs';

const q = new URL(location.href).searchParams;
window.results = await hedgeScenarios({ ...main, createGate, hedge, failover }, [q.get('a'), q.get('b'), q.get('c')]);
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
