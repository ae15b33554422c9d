// Mistakes a user can make, each of which index.d.ts must reject: every one
// is preceded by `// @ts-expect-error`, so this file compiles with
// `tsc --strict --noEmit` only if EVERY line below really is a type error
// (an unused @ts-expect-error is itself an error, TS2578). Never run.
import { Backoff, fetchWithBackoff, withBackoff, parseRetryAfter, retry } from 'wasm-backoff';
import { RetryBudget } from 'wasm-backoff/budget';
import { instrument } from 'wasm-backoff/otel';
// @ts-expect-error the gate lives in 'wasm-backoff/gate' (the full module), not in the main entry
import { createGate } from 'wasm-backoff';
import { backoffStats } from 'wasm-backoff/stats';
import { TaskQueue, enqueueTo } from 'wasm-backoff/queue';
import { queryRetry, swrRetry } from 'wasm-backoff/query';
import { fetchWithBackoff as streamFetch } from 'wasm-backoff/stream';
import { retryInterceptor } from 'wasm-backoff/undici';
import { hedge, type Hedge } from 'wasm-backoff/hedge';
import { failover, type Failover } from 'wasm-backoff/failover';
// @ts-expect-error the calculator-only entry has no fetch driver
import { fetchWithBackoff as notThere } from 'wasm-backoff/backoff';
// @ts-expect-error the statistics entry has no fetch driver
import { withBackoff as alsoNotThere } from 'wasm-backoff/stats';
// @ts-expect-error internal files are not in `exports`
import * as internal from 'wasm-backoff/node.mjs';

// ---- BackoffOptions ----
// @ts-expect-error wrong option type: baseMs is a number
new Backoff({ baseMs: '100' });
// @ts-expect-error misspelled option (baseMS)
new Backoff({ baseMS: 100 });
// @ts-expect-error misspelled option (maxDelay)
new Backoff({ maxDelay: 1000 });
// @ts-expect-error wrong preset name
new Backoff({ preset: 'google' });
// @ts-expect-error presets are lower case
new Backoff({ preset: 'AWS' });
// @ts-expect-error unknown strategy
new Backoff({ strategy: 'exp' });
// @ts-expect-error unknown jitter name
new Backoff({ jitter: 'random' });
// @ts-expect-error wrong jitter shape: ratio is a number
new Backoff({ jitter: { ratio: '0.2' } });
// @ts-expect-error wrong jitter shape: no such field
new Backoff({ jitter: { amount: 0.2 } });
// @ts-expect-error wrong jitter shape: a bare number
new Backoff({ jitter: 0.2 });
// @ts-expect-error a ratio together with addMaxMs
new Backoff({ jitter: { ratio: 0.2, addMaxMs: 100 } });
// @ts-expect-error maxAttempts is a number, not a string
new Backoff({ maxAttempts: '3' });
// @ts-expect-error seed is a number, not a bigint
new Backoff({ seed: 42n });
// @ts-expect-error atCeiling is 'stay' | 'reset'
new Backoff({ strategy: 'slotted', atCeiling: 'wrap' });
// @ts-expect-error slotMode is 'binary' | 'exponent'
new Backoff({ strategy: 'slotted', slotMode: 'linear' });
// @ts-expect-error options are an object or undefined, not null
new Backoff(null);
// @ts-expect-error options are an object, not a preset name
new Backoff('aws');

// ---- Backoff ----
const b = new Backoff({ preset: 'flume', seed: 1 });
// @ts-expect-error next() returns number | undefined, not a string
const s: string = b.next();
// @ts-expect-error next() may return undefined (give up): not assignable to number
const n: number = b.next();
// @ts-expect-error next() takes no argument
b.next(1);
// @ts-expect-error attempt is read-only
b.attempt = 3;
// @ts-expect-error elapsedMs is read-only
b.elapsedMs = 0;
// @ts-expect-error no such method
b.previous();
// @ts-expect-error sample() needs attempt and count
Backoff.sample({ preset: 'aws' });
// @ts-expect-error sample() returns a Float64Array, not number[]
const arr: number[] = Backoff.sample({ preset: 'aws' }, 1, 10);
// @ts-expect-error sample is static
b.sample({}, 1, 1);

// ---- fetchWithBackoff / withBackoff / RetryOptions ----
// @ts-expect-error it returns a Promise<Response>, not a Response
const r: Response = fetchWithBackoff('/x');
// @ts-expect-error the options are the third argument: the second is RequestInit (maxAttempts is not a RequestInit field)
fetchWithBackoff('/x', { maxAttempts: 3 });
// @ts-expect-error misspelled option (maxAttempt)
fetchWithBackoff('/x', undefined, { maxAttempt: 3 });
// @ts-expect-error retryOn is a list of numbers
fetchWithBackoff('/x', undefined, { retryOn: ['503'] });
// @ts-expect-error retryOn is a list, not one status
fetchWithBackoff('/x', undefined, { retryOn: 503 });
// @ts-expect-error retryNonIdempotent is a boolean
fetchWithBackoff('/x', undefined, { retryNonIdempotent: 'yes' });
// @ts-expect-error timeoutMs is a number
fetchWithBackoff('/x', undefined, { timeoutMs: '5s' });
// @ts-expect-error RetryInfo has delayMs, not delay
fetchWithBackoff('/x', undefined, { onRetry: (info) => console.log(info.delay) });
// @ts-expect-error DoneInfo.reason is a DoneReason: there is no 'timeout'
fetchWithBackoff('/x', undefined, { onDone: (info) => info.reason === 'timeout' });
// @ts-expect-error shouldRetry returns boolean | undefined, not a string
fetchWithBackoff('/x', undefined, { shouldRetry: () => 'yes' });
// @ts-expect-error budget is a RetryBudget, not a number
fetchWithBackoff('/x', undefined, { budget: 5 });
// @ts-expect-error budget is a RetryBudget, not its options
fetchWithBackoff('/x', undefined, { budget: { ttlMs: 1000 } });
// @ts-expect-error gate is a Gate from createGate, not `true`
fetchWithBackoff('/x', undefined, { gate: true });
// @ts-expect-error gate is a Gate from createGate, not its options
withBackoff(fetch, { gate: { maxQueued: 10 } });
// @ts-expect-error wrong preset name in RetryOptions too
withBackoff(fetch, { preset: 'exponential' });
// @ts-expect-error withBackoff takes the fetch function first
withBackoff({ maxAttempts: 3 });
const retrying = withBackoff(fetch);
// @ts-expect-error per-call options are RetryOptions too
retrying('/x', undefined, { maxAttempts: '3' });
// @ts-expect-error retry takes a function
retry(42);
// @ts-expect-error retry's options have no fetch-only options
retry(() => 1, { retryOn: [503] });
// @ts-expect-error beforeRetry returns a Request, headers or nothing
fetchWithBackoff('/x', undefined, { beforeRetry: () => 42 });
// @ts-expect-error methods is a list
fetchWithBackoff('/x', undefined, { methods: 'GET' });
// @ts-expect-error a number is not a RequestInfo
retrying(42);

// ---- RetryBudget / parseRetryAfter ----
// @ts-expect-error misspelled option (ttl)
new RetryBudget({ ttl: 1000 });
// @ts-expect-error retryRatio is a number
new RetryBudget({ retryRatio: '20%' });
// @ts-expect-error withdraw() returns a boolean
const count: number = new RetryBudget().withdraw();
// @ts-expect-error parseRetryAfter takes the header's string value
parseRetryAfter(120);
// @ts-expect-error the result may be undefined
const wait: number = parseRetryAfter('120');

// ---- wasm-backoff/stats ----
// @ts-expect-error backoffStats needs the attempt
backoffStats({ preset: 'gcs' });
// @ts-expect-error DelayStats has p50, not median
backoffStats(undefined, 1).median;
// ---- wasm-backoff/queue ----
// @ts-expect-error notBefore is a time (ms) or a Date
new TaskQueue({ handler() {} }).enqueue(1, { notBefore: 'in 5 minutes' });
// @ts-expect-error only finished records can be purged
new TaskQueue({ handler() {} }).purge({ states: ['pending'] });
// @ts-expect-error maxRetentionMs is a number of ms
new TaskQueue({ handler() {}, maxRetentionMs: '1d' });
// @ts-expect-error enqueueTo takes the namespace binding, not a stub's name
enqueueTo('JOBS', {});
// ---- wasm-backoff/query ----
// @ts-expect-error maxElapsedMs is not an option of the query adapters (no start time)
queryRetry({ maxElapsedMs: 10_000 });
// @ts-expect-error retryOn is a list of statuses
swrRetry({ retryOn: 503 });
// @ts-expect-error shouldRetry is synchronous (TanStack Query's retry is)
queryRetry({ shouldRetry: async () => true });
// ---- wasm-backoff/stream ----
// @ts-expect-error idleTimeoutMs is an option of wasm-backoff/stream, not of wasm-backoff
fetchWithBackoff('https://example.com', undefined, { idleTimeoutMs: 5_000 });
// @ts-expect-error resume is a boolean
streamFetch('https://example.com', undefined, { resume: 'yes' });
// @ts-expect-error a body function returns a body, not a promise of one
streamFetch('https://example.com', { method: 'PUT', body: async () => 'x' });
// ---- wasm-backoff/hedge, wasm-backoff/failover ----
// @ts-expect-error hedge is made by hedge(options), not written by hand
withBackoff(fetch, { hedge: { delayMs: 50, maxHedges: 1 } });
// @ts-expect-error a hand-written object is not a Hedge
const handHedge: Hedge = { delayMs: 50, maxHedges: 1 };
// @ts-expect-error hedge takes hedge()'s result, not its options
fetchWithBackoff('https://example.com', undefined, { hedge: { delayMs: 50 } });
// @ts-expect-error endpoints is made by failover(endpoints), not a plain array
withBackoff(fetch, { endpoints: ['https://a.example', 'https://b.example'] });
// @ts-expect-error a hand-written object is not a Failover
const handFailover: Failover = { endpoints: ['https://a.example'], weighted: false };
// @ts-expect-error delayMs is a number
hedge({ delayMs: '50' });
// @ts-expect-error failover takes an array of endpoints
failover('https://a.example');
// ---- wasm-backoff/undici ----
// @ts-expect-error beforeRetry has no meaning at a dispatcher (no Request to change)
retryInterceptor({ beforeRetry: () => undefined });
// @ts-expect-error a gate is not an option at a dispatcher
retryInterceptor({ gate: {} });
// @ts-expect-error attemptHeader is a header name
retryInterceptor({ attemptHeader: true });
// @ts-expect-error pace is a boolean
retryInterceptor({ pace: 'yes' });
export const used = [notThere, alsoNotThere, internal, createGate, s, n, arr, r, count, wait, handHedge, handFailover];

// @ts-expect-error tracer is an OpenTelemetry Tracer, not a string
instrument({}, { tracer: 'app' });
// @ts-expect-error name is a string
instrument({}, { name: 1 });
