// One outage scenario of the backoff gate in this page, against the scripted
// server whose URL is in ?server=… (its /gate-outage path is down for the
// first 23 requests: the 20 first tries and 3 probes).
import { withBackoff } from '/pkg/index.js';
import { createGate } from '/pkg/gate/index.js';

const server = new URL(location.href).searchParams.get('server');
const gate = createGate({ baseMs: 20, maxDelayMs: 80, jitter: 'none', consecutive: 1 });
const calls = [];
const f = withBackoff(
  (input, init) => {
    calls.push(Number(new URL(String(input)).searchParams.get('i')));
    return fetch(input, init);
  },
  { gate, maxAttempts: Infinity },
);
let bodies, error;
try {
  const res = await Promise.all(Array.from({ length: 20 }, (_, i) => f(`${server}/gate-outage?i=${i}`)));
  bodies = await Promise.all(res.map((r) => r.text()));
} catch (e) {
  error = String(e);
}
window.results = { bodies, error, calls, stats: gate.stats() };
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
