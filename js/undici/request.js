// @ts-check
// One request through `wasm-backoff/undici`'s interceptor (js/undici/index.js),
// run by the one retry loop (js/engine/loop.js) as every driver's call is,
// with its job (js/undici/job.js). The caller's abort reaches the attempt in
// flight, the answer it was handed, or the wait between two (the loop's
// signal). A body read once is read first (up to `maxBufferBytes`), so that
// a retry can send it again.
import { Call, drive } from '../engine/loop.js';
import { scheduled, paced } from '../engine/schedule.js';
import { originOf } from '../request-model.js';
import { DispatchRequest, flatten } from './headers.js';
import { buffered, readOnce } from './body.js';
import { DispatchJob } from './job.js';

/**
 * Runs one request: `handler` (the caller's, undici's legacy interface)
 * sees one connection (`onConnect` once, at the start) and one answer.
 * `at` (the interceptor's): until when each origin said no request
 * remains (epoch ms), as a withBackoff client's.
 * @param {import('./index.js').Options} c
 * @param {import('./index.js').Dispatch} dispatch
 * @param {any} opts
 * @param {any} handler
 * @param {Map<string, number>} at
 */
export function request(c, dispatch, opts, handler, at) {
  const req = new DispatchRequest(opts.method, flatten(opts.headers), opts.body);
  const ac = new AbortController();
  // A success saying no request remains holds the origin's next requests until the reset (`pace`).
  const lane = c.pace ? paced(at, originOf(opts.origin) ?? String(opts.origin)) : scheduled;
  const job = new DispatchJob(c, dispatch, opts, req, handler, ac.signal, lane);
  // The caller's abort: the loop's signal (a wait, an attempt in flight), and
  // every attempt still open (the answer handed over, one held or drained).
  handler.onConnect((/** @type {unknown} */ why) => {
    ac.abort(why);
    job.end(why);
  });
  // (the call, its deadline's timer with it, starts once the body is read: a body that fails leaves nothing behind)
  if (!job.idempotent || !readOnce(req.body)) return start(c, job, ac.signal);
  buffered(/** @type {AsyncIterable<any>} */ (req.body), c.maxBufferBytes).then(
    (body) => {
      job.req = new DispatchRequest(req.method, req.headers, body);
      start(c, job, ac.signal);
    },
    (err) => handler.onError(ac.signal.aborted ? ac.signal.reason : err),
  );
}

/**
 * The call: once it ends, its answer is handed over (the others still open
 * let go), or the caller's handler told its error.
 * @param {import('./index.js').Options} c
 * @param {DispatchJob} job
 * @param {AbortSignal} signal
 */
function start(c, job, signal) {
  /** @type {Promise<import('./answer.js').Settled>} */ (drive(new Call(c, signal), job, job)).then(
    (o) => {
      o.answer?.commit();
      job.end(undefined, o.answer?.abort); // (a retried answer still draining: let go)
    },
    (err) => {
      job.end(err); // (an answer held when the call ended otherwise: an abort, the deadline, a hook that threw)
      job.handler.onError(err);
    },
  );
}
