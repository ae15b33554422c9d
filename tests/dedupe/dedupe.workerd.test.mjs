// wasm-backoff/dedupe inside workerd (miniflare): the runtime smokes of
// dedupe-checks.mjs with workerd's fetch: one request for 100 callers, a
// caller's abort.
import { workerTest } from '../auth/around-runtimes.mjs';

workerTest('dedupe');
