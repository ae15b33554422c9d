// Every export and every option of wasm-backoff's index.d.ts, used as a
// TypeScript user would, against the installed npm-pack tarball. Must compile
// with `tsc --strict --noEmit` (tests/install/tarball.test.mjs copies this
// file into a fresh project that has the tarball installed). Never run.
import {
  Backoff,
  fetchWithBackoff,
  withBackoff,
  parseRetryAfter,
  serverWait,
  retry as retryWork,
  type BackoffOptions,
  type Preset,
  type Strategy,
  type Jitter,
  type RetryOptions,
  type RetryFnOptions,
  type FetchWithBackoff,
  type BeforeRetryInfo,
  type DelayInfo,
  type RetryInfo,
  type DoneInfo,
  type DoneReason,
} from 'wasm-backoff';
import { RetryBudget, type RetryBudgetOptions } from 'wasm-backoff/budget';
import { instrument, type InstrumentWith } from 'wasm-backoff/otel';
import { metrics, trace } from '@opentelemetry/api';
import { Backoff as SmallBackoff, type BackoffOptions as SmallOptions } from 'wasm-backoff/backoff';
import type { Preset as SmallPreset, Strategy as SmallStrategy, Jitter as SmallJitter } from 'wasm-backoff/backoff';
import { Backoff as StatsBackoff, backoffStats, type DelayStats, type BackoffOptions as StatsOptions } from 'wasm-backoff/stats';

// Exact type equality: Expect<Equal<A, B>> fails to compile unless A and B are the same type.
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

// ---- the types, exactly (the members of the Preset, Strategy, … unions are
// the core's lists: tests/package/lists.test.mjs checks them in types/) ----
export type Checks = [
  Expect<Equal<ReturnType<Backoff['next']>, number | undefined>>,
  Expect<Equal<ReturnType<Backoff['reset']>, void>>,
  Expect<Equal<ReturnType<typeof Backoff.sample>, Float64Array>>,
  Expect<Equal<ReturnType<typeof fetchWithBackoff>, Promise<Response>>>,
  Expect<Equal<ReturnType<typeof parseRetryAfter>, number | undefined>>,
  Expect<Equal<ReturnType<RetryBudget['withdraw']>, boolean>>,
  Expect<Equal<SmallOptions, BackoffOptions>>,
  Expect<Equal<SmallPreset, Preset>>,
  Expect<Equal<SmallStrategy, Strategy>>,
  Expect<Equal<SmallJitter, Jitter>>,
  Expect<Equal<StatsOptions, BackoffOptions>>,
  // The option lists, exactly: a new option in index.d.ts fails here until this file uses it.
  Expect<Equal<keyof BackoffOptions, 'preset' | 'strategy' | 'baseMs' | 'factor' | 'maxDelayMs' | 'jitter' | 'maxAttempts' | 'maxElapsedMs' | 'seed' | 'ceiling' | 'atCeiling' | 'slotMode'>>,
  Expect<Equal<Exclude<keyof RetryOptions, keyof BackoffOptions>, 'retryOn' | 'methods' | 'retryNonIdempotent' | 'idempotencyKey' | 'attemptHeader' | 'timeoutMs' | 'maxRetryAfterMs' | 'onRetry' | 'onDone' | 'shouldRetry' | 'beforeRetry' | 'budget' | 'telemetry' | 'gate' | 'delay' | 'throttleBaseMs' | 'retryOnTimeout' | 'retryAfterOverMax' | 'pace' | 'hedge' | 'endpoints' | 'fallback' | 'auth' | 'dedupe' | 'limit'>>,
  Expect<Equal<Exclude<keyof RetryFnOptions, keyof BackoffOptions>, 'timeoutMs' | 'signal' | 'onRetry' | 'onDone' | 'shouldRetry' | 'budget' | 'telemetry' | 'delay' | 'throttleBaseMs' | 'retryOnTimeout' | 'maxRetryAfterMs' | 'retryAfterOverMax'>>,
  Expect<Equal<keyof DelayInfo, 'attempt' | 'status' | 'error' | 'response' | 'retryAfterMs' | 'delayMs'>>,
  Expect<Equal<keyof BeforeRetryInfo, 'attempt' | 'request' | 'status' | 'error' | 'response' | 'signal'>>,
  Expect<Equal<ReturnType<typeof serverWait>, number | undefined>>,
  Expect<Equal<keyof RetryBudgetOptions, 'ttlMs' | 'minPerSec' | 'retryRatio'>>,
  Expect<Equal<keyof RetryInfo, 'attempt' | 'delayMs' | 'status' | 'error' | 'retryAfterMs' | 'response'>>,
  Expect<Equal<keyof DoneInfo, 'attempts' | 'elapsedMs' | 'reason' | 'status' | 'error' | 'won' | 'hedges' | 'endpoint' | 'refreshed' | 'quotaMs'>>,
  Expect<Equal<keyof DelayStats, 'exact' | 'min' | 'max' | 'p50' | 'p90' | 'mean'>>,
  Expect<Equal<ReturnType<typeof backoffStats>, DelayStats>>,
];

// ---- BackoffOptions: every field ----
const presets: Preset[] = ['gcs', 'ethernet', 'hadoop'];
const strategies: Strategy[] = ['exponential', 'fibonacci', 'slotted'];
const jitters: Jitter[] = ['none', 'full', 'equal', { ratio: 0.2 }, { addMaxMs: 1000 }, { ratio: 0.5, addMaxMs: undefined }, { addMaxMs: 5, ratio: undefined }];

const everything: BackoffOptions = {
  preset: 'gcs',
  strategy: 'exponential',
  baseMs: 100,
  factor: 2,
  maxDelayMs: Infinity,
  jitter: { ratio: 0.2 },
  maxAttempts: 5,
  maxElapsedMs: 60_000,
  seed: 42,
  ceiling: 10,
  atCeiling: 'reset',
  slotMode: 'exponent',
};
const slotted: BackoffOptions = { strategy: 'slotted', baseMs: 0.0512, ceiling: 10, atCeiling: 'stay', slotMode: 'binary', jitter: 'none' };

// ---- Backoff: constructor, methods, getters, sample ----
const b = new Backoff(everything);
const none = new Backoff();
const undef = new Backoff(undefined);
const first: number | undefined = b.next();
if (first !== undefined) {
  const ms: number = first;
  void ms;
}
b.reset();
const counters: number[] = [b.attempt, b.totalRetries, b.resets, b.elapsedMs, none.attempt, undef.elapsedMs];
const draws: Float64Array = Backoff.sample(slotted, 3, 1000);
const drawsDefault: Float64Array = Backoff.sample(undefined, 1, 0);
for (const preset of presets) new Backoff({ preset, seed: 1 }).next();
for (const strategy of strategies) new Backoff({ strategy }).next();
for (const jitter of jitters) new Backoff({ jitter }).next();

// The calculator-only entry.
const small = new SmallBackoff({ preset: 'flume', seed: 1 });
const smallNext: number | undefined = small.next();
small.reset();
const smallCounters: number[] = [small.attempt, small.totalRetries, small.resets, small.elapsedMs];
const smallDraws: Float64Array = SmallBackoff.sample({ preset: 'aws' }, 1, 10);

// The calculator with the statistics of its delays.
const stats: DelayStats = backoffStats({ preset: 'gcs', seed: 1 }, 3);
const statFields: [boolean, number, number, number, number, number] = [stats.exact, stats.min, stats.max, stats.p50, stats.p90, stats.mean];
const statsDefault: DelayStats = backoffStats(undefined, 1);
const statsNext: number | undefined = new StatsBackoff({ preset: 'aws' }).next();

// ---- freeing a schedule now ----
new Backoff().free();

// ---- RetryBudget ----
const budgetOptions: RetryBudgetOptions = { ttlMs: 10_000, minPerSec: 10, retryRatio: 0.2 };
const budget = new RetryBudget(budgetOptions);
const defaultBudget = new RetryBudget();
budget.deposit();
budget.deposit(Date.now());
const took: boolean = budget.withdraw() && budget.withdraw(Date.now());
const left: number = budget.available() + defaultBudget.available(Date.now());

// ---- RetryOptions: every field (its own and the inherited ones) ----
function onRetry(info: RetryInfo): void {
  const attempt: number = info.attempt;
  const delay: number = info.delayMs;
  const status: number | undefined = info.status;
  const error: unknown = info.error;
  const retryAfter: number | undefined = info.retryAfterMs;
  const requestId: string | null | undefined = info.response?.headers.get('x-request-id');
  void [attempt, delay, status, error, retryAfter, requestId];
}

function describe(reason: DoneReason): string {
  switch (reason) {
    case 'success':
    case 'not-retryable':
    case 'not-idempotent':
    case 'not-replayable':
    case 'vetoed':
    case 'exhausted':
    case 'retry-after':
    case 'deadline':
    case 'budget':
    case 'aborted':
    case 'hook-error':
    case 'evicted':
    case 'freed':
    case 'circuit-open':
      return reason;
    default: {
      const never: never = reason; // every DoneReason is handled above
      return never;
    }
  }
}

function onDone(info: DoneInfo): void {
  const attempts: number = info.attempts;
  const elapsed: number = info.elapsedMs;
  const why: string = describe(info.reason);
  const status: number | undefined = info.status;
  const error: unknown = info.error;
  void [attempts, elapsed, why, status, error];
}

const retry: RetryOptions = {
  // BackoffOptions
  preset: 'aws',
  strategy: 'decorrelated',
  baseMs: 50,
  factor: 3,
  maxDelayMs: 5_000,
  jitter: { addMaxMs: 100 },
  maxAttempts: 4,
  maxElapsedMs: 30_000,
  seed: 7,
  ceiling: 10,
  atCeiling: 'stay',
  slotMode: 'binary',
  // RetryOptions' own
  retryOn: [408, 429, 500, 502, 503, 504],
  methods: ['GET', 'PUT'],
  retryNonIdempotent: false,
  idempotencyKey: true,
  attemptHeader: 'amz-sdk-request',
  delay: ({ status, retryAfterMs, delayMs }: DelayInfo) => (status === 503 && retryAfterMs === undefined ? false : Math.min(delayMs, 5000)),
  throttleBaseMs: 1000,
  retryOnTimeout: false,
  retryAfterOverMax: 'clamp',
  pace: true,
  beforeRetry: async ({ attempt, request, response, signal }: BeforeRetryInfo) => {
    if (response?.status === 401) return { authorization: `Bearer ${await Promise.resolve(attempt)}` };
    if (signal?.aborted) return undefined;
    return attempt > 3 ? new Request(request.url) : new Headers({ 'x-attempt': String(attempt) });
  },
  timeoutMs: 5_000,
  maxRetryAfterMs: 60_000,
  onRetry,
  onDone,
  shouldRetry: async ({ attempt, status, error, response }) => {
    if (response !== undefined && response.headers.get('x-no-retry') !== null) return false;
    if (error !== undefined) return true;
    return attempt < 3 && status === 418 ? true : undefined;
  },
  budget,
};

// ---- fetchWithBackoff / withBackoff ----
export async function use(signal: AbortSignal): Promise<void> {
  const r1: Response = await fetchWithBackoff('/api/items');
  const r2: Response = await fetchWithBackoff(new URL('https://example.test/items'), { signal }, retry);
  const r3: Response = await fetchWithBackoff(new Request('/api/items', { method: 'PUT', body: '{}' }), undefined, { maxAttempts: 2 });
  const retrying: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response> = withBackoff(fetch, { preset: 'grpc', budget });
  const wrappedDefault = withBackoff(fetch);
  const r4: Response = await retrying('/api/x', { method: 'POST', headers: { 'Idempotency-Key': 'k1' } });
  const r5: Response = await wrappedDefault(new URL('https://example.test/'));
  const r6: Response = await wrappedDefault('/api/x', undefined, { maxAttempts: 2 });
  const extended: FetchWithBackoff = wrappedDefault.extend({ timeoutMs: 1000 });
  const r7: Response = await extended('/api/x');
  // retry(fn): any async work
  const fnOptions: RetryFnOptions = { preset: 'aws', maxAttempts: 3, maxElapsedMs: 10_000, timeoutMs: 1000, signal, onRetry, onDone, shouldRetry: ({ error }) => !(error instanceof TypeError), budget };
  const n: number = await retryWork(async ({ attempt, signal: s }) => (s?.aborted ? 0 : attempt), fnOptions);
  const text: string = await retryWork(() => 'sync value');
  const wait: number | undefined = serverWait(r1.headers) ?? serverWait(new Headers(), Date.now());
  for (const delay of new Backoff({ maxAttempts: 3 })) void (delay satisfies number);
  void [r1, r2, r3, r4, r5, r6, r7, n, text, wait];
}

// ---- parseRetryAfter ----
const wait1: number | undefined = parseRetryAfter('120');
const wait2: number | undefined = parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT', Date.now());
const wait3: number | undefined = parseRetryAfter(null);
const wait4: number | undefined = parseRetryAfter(undefined);
const fromHeaders: number | undefined = parseRetryAfter(new Headers().get('retry-after'));

export const used = [
  first, counters, draws, drawsDefault, smallNext, smallCounters, smallDraws, statFields, statsDefault, statsNext, took, left,
  wait1, wait2, wait3, wait4, fromHeaders,
];

// ---- the backoff gate ----
import { createGate, Gate, GateOverflowError, GateTimeoutError, type GateOptions, type CircuitState } from 'wasm-backoff/gate';
const gateOptions: GateOptions = { maxQueued: 100, overflow: 'reject-newest', concurrency: 4, probeTimeoutMs: 5000, baseMs: 50 };
const gate: Gate = createGate(gateOptions);
export async function useGate(): Promise<void> {
  const n: number = await gate.run('db', async ({ signal }) => (signal?.aborted ? 0 : 1), { maxAttempts: 3 });
  const phase: CircuitState = gate.state('db').state;
  const probing: boolean = gate.state('db').probing;
  const evicted: number = gate.stats().evictions;
  const viaFetch: Response = await fetchWithBackoff('/api/items', undefined, { gate });
  const shared = withBackoff(fetch, { gate, maxAttempts: 3 });
  const none = withBackoff(fetch, { gate: false });
  gate.free();
  void [n, phase, probing, evicted, viaFetch, shared, none, new Gate(), GateOverflowError, GateTimeoutError];
}

// ---- the durable task queue ----
import {
  TaskQueue,
  MemoryStore,
  IndexedDBStore,
  PermanentError,
  DurableObjectStore,
  TaskQueueObject,
  enqueueTo,
  type TaskRecord,
  type DurableObjectNamespaceLike,
} from 'wasm-backoff/queue';

// A Durable Object running a queue on its alarm, and a Worker enqueueing through it.
interface Env {
  JOBS: DurableObjectNamespaceLike;
  ORIGIN: string;
}
export class Jobs extends TaskQueueObject<{ url: string }, Env> {
  options = { leaseMs: 30_000, maxFailures: 8, maxRetentionMs: 86_400_000 };
  async handler(task: TaskRecord<{ url: string }>, { signal }: { signal: AbortSignal }): Promise<void> {
    const res = await fetch(this.env.ORIGIN + task.payload.url, { method: 'POST', signal });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
  }
}
export async function worker(env: Env): Promise<string> {
  const id: string = await enqueueTo(env.JOBS, { url: '/hook' }, { id: 'hook-1', notBefore: Date.now() + 1000, name: 'hooks' });
  const local = new TaskQueue({ store: DurableObjectStore.remote(env.JOBS, 'hooks'), handler: () => undefined });
  const next: number = await local.drain();
  void next;
  return id;
}
export async function useQueue(): Promise<void> {
  const queue = new TaskQueue<{ url: string }>({
    handler: async (task: TaskRecord<{ url: string }>, { signal, completeBy }) => {
      if (Date.now() > completeBy) throw new PermanentError('too late');
      await fetch(task.payload.url, { signal, method: 'POST' });
    },
    store: new MemoryStore(),
    leaseMs: 10_000,
    maxFailures: 5,
    backoff: { preset: 'aws' },
    maxRetentionMs: 86_400_000,
    syncTag: 'outbox',
  });
  queue.addEventListener('processed', (e) => void e.task.id);
  queue.addEventListener('error', (e) => void (e.reason === 'maxRetention'));
  const id: string = await queue.enqueue({ url: '/api/submit' }, { id: 'form-1' });
  await queue.enqueue({ url: '/api/later' }, { notBefore: Date.now() + 60_000 });
  await queue.enqueue({ url: '/api/later' }, { notBefore: new Date() });
  queue.start();
  const purged: number = await queue.purge({ olderThan: 3_600_000, states: ['processed'] });
  const hastened: number = await queue.retryNow();
  const next: number = await queue.drain();
  await queue.stop();
  void [id, IndexedDBStore, purged, hastened, next];
}

// ---- wasm-backoff/query ----
import { queryRetry, swrRetry, type QueryRetryOptions, type QueryRetryInfo, type QueryRetry, type SwrRetry } from 'wasm-backoff/query';
export function queryAdapters() {
  const shouldRetry = ({ attempt, error, status, retryAfterMs }: QueryRetryInfo): boolean | undefined =>
    status === 404 ? false : attempt > 3 && retryAfterMs === undefined && error instanceof TypeError ? true : undefined;
  const options: QueryRetryOptions = { preset: 'aws', baseMs: 50, seed: 1, maxAttempts: 4, retryOn: [503], maxRetryAfterMs: 30_000, shouldRetry };
  const q: QueryRetry = queryRetry(options);
  const again: boolean = q.retry(0, new Error('x'));
  const ms: number = q.retryDelay(0, new Error('x'));
  const s: SwrRetry = swrRetry({ baseMs: 500 });
  s.onErrorRetry(new Error('x'), '/api', {}, () => undefined, { retryCount: 1 });
  const defaults = { ...queryRetry(), ...swrRetry() };
  void [again, ms, defaults];
}

// ---- wasm-backoff/undici ----
import { retryGlobalFetch, retryDispatcher, retryInterceptor, type UndiciRetryOptions, type Dispatch, type DispatcherLike } from 'wasm-backoff/undici';
export async function undiciRetries(agent: DispatcherLike) {
  const options: UndiciRetryOptions = { baseMs: 50, maxAttempts: 4, retryOn: [503], methods: ['GET'], idempotencyKey: true, maxRetryAfterMs: 30_000, maxBufferBytes: 0 };
  const undo: () => void = await retryGlobalFetch(options);
  const d = retryDispatcher(agent, {
    baseMs: 10,
    timeoutMs: 5_000,
    shouldRetry: ({ status }) => (status === 418 ? true : undefined),
    onRetry: ({ attempt, status, delayMs }) => void [attempt, status, delayMs],
    onDone: ({ reason, attempts }) => void [reason, attempts],
    delay: ({ delayMs }) => delayMs * 2,
    throttleBaseMs: 500,
    retryOnTimeout: false,
    retryAfterOverMax: 'clamp',
    attemptHeader: 'amz-sdk-request',
    pace: false,
  });
  const dispatch: Dispatch = retryInterceptor()(agent.dispatch);
  void [undo, d.dispatcher, d.dispatch, dispatch];
}

// ---- wasm-backoff/outbox ----
import { Outbox, MemoryStore as OutboxMemory, type OutboxOptions, type StoredRequest } from 'wasm-backoff/outbox';
export async function outboxUse(request: Request) {
  const options: OutboxOptions = { name: 'forms', maxBodyBytes: 65_536, retry: { baseMs: 100, maxAttempts: 2 }, queue: { store: new OutboxMemory(), maxFailures: 10 } };
  const outbox = new Outbox(options).start();
  const id: string = await outbox.add(request);
  const res: Response = await outbox.fetch(request);
  const task = await outbox.queue.get(id);
  const stored: StoredRequest | undefined = task?.payload;
  await outbox.stop();
  void [res, stored];
}

// wasm-backoff/otel: options or a client, instrumented.
{
  const w: InstrumentWith = { tracer: trace.getTracer('t'), meter: metrics.getMeter('t'), name: 'api', budget: new RetryBudget() };
  const o: RetryOptions = instrument({ baseMs: 10, retryOn: [503] }, w);
  const client: FetchWithBackoff = instrument(withBackoff(fetch), {});
  const fnOptions = instrument({ maxAttempts: 3 });
  void [o, client, retryWork(async () => 1, fnOptions)];
}

// ---- wasm-backoff/stream ----
import { fetchWithBackoff as streamFetch, withBackoff as streamWith, type RetryOptions as StreamOptions, type BodyFactory } from 'wasm-backoff/stream';
export async function streams() {
  const options: StreamOptions = { idleTimeoutMs: 30_000, firstChunkTimeoutMs: 5_000, resume: true, replayBufferBytes: 1 << 20, maxAttempts: 4 };
  const res: Response = await streamFetch('https://example.com/file', undefined, options);
  let n = 0;
  const body: BodyFactory = () => `part ${++n}`;
  const api = streamWith(fetch, { idleTimeoutMs: 10_000 });
  const up: Response = await api('https://example.com/up', { method: 'PUT', body }, { replayBufferBytes: 4096 });
  const stream: Response = await api('https://example.com/up', { method: 'PUT', body: new ReadableStream() });
  void [res, up, stream, api.extend({ resume: true })];
}

// ---- wasm-backoff/hedge, wasm-backoff/failover ----
import { hedge, type Hedge, type HedgeOptions } from 'wasm-backoff/hedge';
import { failover, type Failover, type Endpoint } from 'wasm-backoff/failover';
export async function hedgedAndFailover() {
  const ho: HedgeOptions = { delayMs: 50, maxHedges: 2 };
  const h: Hedge = hedge(ho);
  const eps: Endpoint[] = ['https://a.example', new URL('https://b.example'), { url: 'https://c.example', weight: 2 }];
  const fo: Failover = failover(eps);
  const api = withBackoff(fetch, { hedge: h, endpoints: fo });
  const res: Response = await api('https://a.example/x', undefined, { hedge: hedge({ delayMs: 10 }) });
  const more: Response = await fetchWithBackoff('https://a.example/x', undefined, { endpoints: failover(['https://a.example']) });
  const delay: number = h.delayMs;
  const origins: readonly string[] = fo.endpoints;
  void [res, more, delay, origins, fo.weighted, h.maxHedges];
}
