// A CommonJS TypeScript consumer: in a .cts file these imports compile to
// require('wasm-backoff') (the "node" → "require" condition, node.cjs).
// Must compile with `tsc --strict --noEmit` under module nodenext and node16.
import { Backoff, fetchWithBackoff, type RetryOptions } from 'wasm-backoff';
import { Backoff as SmallBackoff } from 'wasm-backoff/backoff';

const options: RetryOptions = { preset: 'aws', maxAttempts: 3 };
export const first: number | undefined = new Backoff({ preset: 'flume', seed: 1 }).next();
export const smallFirst: number | undefined = new SmallBackoff({ preset: 'flume', seed: 1 }).next();
export const response: Promise<Response> = fetchWithBackoff('https://example.test/', undefined, options);
