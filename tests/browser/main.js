// Imports the package the way a page would (plain module script, no init
// call) and runs the shared checks; the Playwright test reads window.results.
import { Backoff } from '/pkg/index.js';
import { goldenFailures, validationFailures, semanticsFailures } from '/tests/package/checks.mjs';

const golden = await (await fetch('/core/tests/golden/seeded.json')).json();
window.Backoff = Backoff;
window.results = {
  golden: goldenFailures(Backoff, golden),
  validation: validationFailures(Backoff),
  semantics: semanticsFailures(Backoff),
};
document.getElementById('status').textContent = 'done';
document.body.dataset.done = '1';
