// Runs the hedging and failover smokes (tests/hedge/hedge-checks.mjs) in
// this page against the two scripted servers whose URLs are in ?a=…&b=…
import * as main from '/pkg/index.js';
import { createGate } from '/pkg/gate/index.js';
import { hedge } from '/pkg/hedge/index.js';
import { failover } from '/pkg/failover/index.js';
import { hedgeSmokes } from '/tests/hedge/hedge-checks.mjs';

const q = new URL(location.href).searchParams;
window.results = await hedgeSmokes({ ...main, createGate, hedge, failover }, [q.get('a'), q.get('b')]);
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
