// Type-checked only (tsconfig.json, `npm run lint:types`): each entry's
// run-time exports, as TypeScript infers them from js/, must be assignable
// to what its published .d.ts declares. A renamed export, a missing method,
// a wrong arity or return type fails here, not in a user's build.
import * as main from './entries/main.js';
import * as backoff from './entries/backoff.js';
import * as budget from './entries/budget.js';
import * as gate from './entries/gate.js';
import * as stats from './entries/stats.js';
import * as queue from './entries/queue.js';
import type * as Main from '../pkg/index.js';
import type * as Backoff from '../pkg/backoff/index.js';
import type * as Budget from '../pkg/budget/index.js';
import type * as Gate from '../pkg/gate/index.js';
import type * as Stats from '../pkg/stats/index.js';
import type * as Queue from '../pkg/queue/index.js';

/** Only the values of a module namespace (its types are not run-time exports). */
type Values<T> = { [K in keyof T]: T[K] };

export const checks: [
  Values<typeof Main>,
  Values<typeof Backoff>,
  Values<typeof Budget>,
  Values<typeof Gate>,
  Values<typeof Stats>,
  Values<typeof Queue>,
] = [main, backoff, budget, gate, stats, queue];
