// @ts-check
// `wasm-backoff/query`: the retry options of TanStack Query (`retry`,
// `retryDelay`) and SWR (`onErrorRetry`), on the package's schedule and
// retry policy (js/query/wait.js: an answer per failure, computed afresh).
import { waits } from './wait.js';

/**
 * TanStack Query's `retry` and `retryDelay`, to spread into a query's
 * options or `defaultOptions.queries` (see types/query/index.d.ts).
 * @param {import('../../types/query/index.js').QueryRetryOptions} [options]
 */
export function queryRetry(options) {
  const wait = waits(options);
  // TanStack asks retryDelay, then retry, of each failure (query-core's
  // retryer): one answer serves both, so the schedule is stepped once and
  // the two agree (an unseeded schedule draws afresh each time).
  /** @type {[number, unknown, number | string]} */
  let last = [-1, undefined, ''];
  /** @param {number} failureCount @param {unknown} error */
  const answer = (failureCount, error) =>
    (last[0] === failureCount && last[1] === error ? last : (last = [failureCount, error, wait(failureCount + 1, error)]))[2];
  return {
    /** @param {number} failureCount @param {unknown} error */
    retry: (failureCount, error) => typeof answer(failureCount, error) === 'number',
    /** @param {number} failureCount @param {unknown} error */
    retryDelay: (failureCount, error) => {
      const d = answer(failureCount, error);
      return typeof d === 'number' ? d : 0;
    },
  };
}

/**
 * SWR's `onErrorRetry`, in an object to spread into `useSWR`'s options or
 * `<SWRConfig value>` (see types/query/index.d.ts).
 * @param {import('../../types/query/index.js').QueryRetryOptions} [options]
 */
export function swrRetry(options) {
  const wait = waits(options);
  return {
    /**
     * @param {unknown} error
     * @param {unknown} _key
     * @param {unknown} _config
     * @param {(opts: any) => unknown} revalidate
     * @param {{ retryCount: number }} opts
     */
    onErrorRetry: (error, _key, _config, revalidate, opts) => {
      const d = wait(opts.retryCount, error);
      if (typeof d === 'number') setTimeout(revalidate, d, opts);
    },
  };
}
