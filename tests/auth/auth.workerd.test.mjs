// wasm-backoff/auth inside workerd (miniflare): the runtime smokes of
// auth-checks.mjs with workerd's fetch: one refresh for 50 calls, a failed
// refresh's error.
import { workerTest } from '../auth/around-runtimes.mjs';

workerTest('auth');
