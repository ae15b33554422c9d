// The peers' DEFAULT delay schedules for the retry-storm table, in the same
// form as storm-policies.mjs's `make` entries. Where a peer exports its delay
// function it is called (cockatiel, exponential-backoff, @smithy/util-retry);
// where it does not (ky, p-retry, fetch-retry), its default is transcribed
// from the installed source, cited per entry. In the model clients retry
// until they succeed, so the peers' attempt caps are lifted and reported as
// `maxAttempts` (the table counts the clients that would have given up).
import { createRequire } from 'node:module';
import { version } from './peers.mjs';

const require = createRequire(import.meta.url);

export async function peerPolicies() {
  const { ExponentialBackoff } = await import('cockatiel');
  const { StandardRetryStrategy, DEFAULT_MAX_ATTEMPTS } = await import('@smithy/util-retry');
  const { DelayFactory } = require('exponential-backoff/dist/delay/delay.factory');
  const { getSanitizedOptions } = require('exponential-backoff/dist/options');
  const eb = getSanitizedOptions({});
  const v = (n) => `${n} ${version(n)}`;
  return [
    {
      // ky/distribution/utils/normalize.js: delay(n) = 0.3 · 2^(n−1) · 1000, backoffLimit ∞, no jitter, limit 2.
      name: v('ky'),
      note: '300 ms · 2^(n−1), no cap, no jitter (transcribed; not exported)',
      maxAttempts: 3,
      make: () => (n) => 0.3 * 2 ** (n - 1) * 1000,
    },
    {
      // p-retry/index.js calculateDelay: round(minTimeout 1000 · factor 2^(n−1)), maxTimeout ∞, clamped to 2^31 − 1; retries 10.
      name: v('p-retry'),
      note: '1 s · 2^(n−1), no jitter, clamped to 2^31 − 1 ms (transcribed; not exported)',
      maxAttempts: 11,
      make: () => (n) => Math.min(Math.round(1000 * 2 ** (n - 1)), 2 ** 31 - 1),
    },
    {
      // fetch-retry/index.js: retries 3, retryDelay 1000.
      name: v('fetch-retry'),
      note: 'constant 1 s',
      maxAttempts: 4,
      make: () => () => 1000,
    },
    {
      // cockatiel: retry()'s own default backoff is ConstantBackoff(0) (= no
      // backoff, above) with maxAttempts Infinity; its ExponentialBackoff()
      // defaults are what a user who asks for backoff gets.
      name: v('cockatiel'),
      note: '`new ExponentialBackoff()`: decorrelated jitter v2, 128 ms, cap 30 s (called)',
      maxAttempts: Infinity,
      make: () => {
        const factory = new ExponentialBackoff();
        let b;
        return (n) => {
          b = n === 1 ? factory.next() : b.next();
          return b.duration;
        };
      },
    },
    {
      name: v('exponential-backoff'),
      note: "defaults: 100 ms · 2^(n−1), jitter 'none', no cap (DelayFactory called)",
      maxAttempts: eb.numOfAttempts,
      make: () => (n) => DelayFactory(eb, n).jitteredDelay,
    },
    {
      name: v('@smithy/util-retry'),
      note: 'StandardRetryStrategy: full jitter, 50 ms · 2^(n−1), cap 20 s (computeNextBackoffDelay called)',
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      make: () => {
        const s = new StandardRetryStrategy().retryBackoffStrategy;
        return (n) => s.computeNextBackoffDelay(n - 1);
      },
    },
  ];
}
