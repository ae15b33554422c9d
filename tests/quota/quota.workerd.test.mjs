// wasm-backoff/quota inside workerd (miniflare): the runtime smokes of
// quota-checks.mjs with workerd's fetch.
import { workerTest } from '../auth/around-runtimes.mjs';

workerTest('quota');
