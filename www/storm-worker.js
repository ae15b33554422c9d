// Runs the retry-storm simulation off the main thread (module worker) and
// posts each strategy's results as they complete.
import { Backoff } from '/pkg/backoff/index.js';
import { storm, BROOKER } from './storm.js';

self.onmessage = ({ data: { sizes, runs, yours } }) => {
  const strategies = { ...BROOKER, ...(yours ? { 'your policy': yours } : {}) };
  for (const [name, options] of Object.entries(strategies)) {
    const points = sizes.map((n) => ({ n, ...storm(Backoff, options, n, runs) }));
    self.postMessage({ name, points });
  }
  self.postMessage({ done: true });
};
// Tell the page the module (and its wasm) is ready: a message sent before
// this handler existed would be lost.
self.postMessage({ ready: true });
