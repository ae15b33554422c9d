// wasm-backoff/dedupe in headless Chromium: the runtime smokes of
// dedupe-checks.mjs in a page: one request for 100 callers through the
// browser's fetch, a caller's abort. The timing logic is
// dedupe.node.test.mjs's, on virtual time.
import { pageTest } from '../auth/around-runtimes.mjs';

pageTest('dedupe');
