// Type-checked only (tsconfig.json, by `npm run lint`): each entry's
// run-time exports, as TypeScript infers them from js/, must be assignable
// to what its .d.ts in types/ declares (the build copies them into pkg/). A
// renamed export, a missing method, a wrong arity or return type fails
// here, not in a user's build.
import * as main from './entries/main.js';
import * as backoff from './entries/backoff.js';
import * as budget from './entries/budget.js';
import * as gate from './entries/gate.js';
import * as stats from './entries/stats.js';
import * as queue from './entries/queue.js';
import * as query from './entries/query.js';
import * as undici from './entries/undici.js';
import * as outbox from './entries/outbox.js';
import * as stream from './entries/stream.js';
import * as hedge from './entries/hedge.js';
import * as failover from './entries/failover.js';
import * as testing from './entries/testing.js';
import * as sse from './entries/sse.js';
import * as ws from './entries/ws.js';
import type * as Main from '../types/index.js';
import type * as Backoff from '../types/backoff/index.js';
import type * as Budget from '../types/budget/index.js';
import type * as Gate from '../types/gate/index.js';
import type * as Stats from '../types/stats/index.js';
import type * as Queue from '../types/queue/index.js';
import type * as Query from '../types/query/index.js';
import type * as Undici from '../types/undici/index.js';
import type * as Outbox from '../types/outbox/index.js';
import type * as Stream from '../types/stream/index.js';
import type * as Hedge from '../types/hedge/index.js';
import type * as Failover from '../types/failover/index.js';
import type * as Testing from '../types/testing/index.js';
import type * as Sse from '../types/sse/index.js';
import type * as Ws from '../types/ws/index.js';

/** Only the values of a module namespace (its types are not run-time exports). */
type Values<T> = { [K in keyof T]: T[K] };

export const checks: [
  Values<typeof Main>,
  Values<typeof Backoff>,
  Values<typeof Budget>,
  Values<typeof Gate>,
  Values<typeof Stats>,
  Values<typeof Queue>,
  Values<typeof Query>,
  Values<typeof Undici>,
  Values<typeof Outbox>,
  Values<typeof Stream>,
  Values<typeof Hedge>,
  Values<typeof Failover>,
  Values<typeof Testing>,
  Values<typeof Sse>,
  Values<typeof Ws>,
] = [main, backoff, budget, gate, stats, queue, query, undici, outbox, stream, hedge, failover, testing, sse, ws];

// The entries around the retry (issue 38): a token refresh, request
// coalescing, a stale copy served as the fallback, quotas.
import * as auth from './entries/auth.js';
import * as dedupe from './entries/dedupe.js';
import * as cache from './entries/cache.js';
import * as quota from './entries/quota.js';
import type * as Auth from '../types/auth/index.js';
import type * as Dedupe from '../types/dedupe/index.js';
import type * as Cache from '../types/cache/index.js';
import type * as Quota from '../types/quota/index.js';

export const around: [Values<typeof Auth>, Values<typeof Dedupe>, Values<typeof Cache>, Values<typeof Quota>] = [
  auth,
  dedupe,
  cache,
  quota,
];
