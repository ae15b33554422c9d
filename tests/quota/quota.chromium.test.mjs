// wasm-backoff/quota in headless Chromium: the runtime smokes of
// quota-checks.mjs in a page (the rate-limit headers read through CORS). The
// pace and the waits are quota.node.test.mjs's, on virtual time.
import { pageTest } from '../auth/around-runtimes.mjs';

pageTest('quota');
