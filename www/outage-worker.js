// Runs the outage model (outage.js) off the main thread: the package's real
// fetch driver and gate on a virtual clock, one run at a time, every row of
// OUTAGE_POLICIES per run.
//   {id, point: {C, K, T}, runs, schedule} -> {id, run, results: {policyId: means so far}} after each run, then {id, done}
// A newer request stops the older one at the end of its current run.
import { OUTAGE_POLICIES, loadLib, outageRun, meanOf, macrotask } from './outage.js';

const lib = await loadLib((m) => import(new URL(`../pkg/${m ? `${m}/` : ''}index.js`, import.meta.url).href));
const settle = macrotask();
let latest = 0;
let queue = Promise.resolve(); // one simulation at a time: each owns the clock while it runs

async function simulate({ id, point, runs, schedule }) {
  const all = Object.fromEntries(OUTAGE_POLICIES.map((p) => [p.id, []]));
  for (let run = 0; run < runs; run++) {
    for (const policy of OUTAGE_POLICIES) {
      if (latest !== id) return;
      all[policy.id].push(await outageRun(point, policy, lib, { run, schedule, settle }));
    }
    self.postMessage({ id, run, results: Object.fromEntries(Object.entries(all).map(([k, v]) => [k, meanOf(v)])) });
  }
  self.postMessage({ id, done: true });
}

self.onmessage = ({ data }) => {
  latest = data.id;
  queue = queue.then(() => simulate(data)).catch((e) => self.postMessage({ id: data.id, error: String(e) }));
};
self.postMessage({ ready: true });
