// wasm-backoff/auth in headless Chromium: the runtime smokes of auth-checks.mjs
// in a page, against the scripted server on another origin (the
// Authorization header through CORS and its preflight): one refresh for 50
// calls, a failed refresh's error. The timing logic is auth.node.test.mjs's,
// on virtual time.
import { pageTest } from '../auth/around-runtimes.mjs';

pageTest('auth');
