// The fallback option and wasm-backoff/cache inside workerd (miniflare):
// the runtime smokes of cache-checks.mjs with workerd's Cache API (no
// keys(), no caches.delete(): staleIfError bounds and clears what it stored).
import { workerTest } from '../auth/around-runtimes.mjs';

workerTest('cache');
