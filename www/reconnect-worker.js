// Runs the reconnect-storm model (reconnect.js) off the main thread, every
// policy at one point, with the package's calculator:
//   {id, point: {N, C, R}} -> {id, policy, result} per policy, then {id, done}
import { Backoff } from '../pkg/backoff/index.js';
import { RECONNECT_POLICIES, reconnectRun } from './reconnect.js';

let latest = 0;
self.onmessage = async ({ data: { id, point } }) => {
  latest = id;
  for (const p of RECONNECT_POLICIES) {
    // (a newer request drops this one between two policies)
    await new Promise((r) => setTimeout(r));
    if (latest !== id) return;
    const { perSecond, peak, backMs, attempts, idealMs, left } = reconnectRun(point, p, Backoff);
    self.postMessage({ id, policy: p.id, result: { perSecond, peak, backMs, attempts, idealMs, left } });
  }
  self.postMessage({ id, done: true });
};
self.postMessage({ ready: true });
