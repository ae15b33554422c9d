// The fallback option and wasm-backoff/cache in headless Chromium: the
// runtime smokes of cache-checks.mjs in a page (a secure context:
// staleIfError keeps its copies in the Cache API). The ages and maxStaleMs
// are cache.node.test.mjs's, on virtual time.
import { pageTest } from '../auth/around-runtimes.mjs';

pageTest('cache');
