// @ts-check
// `wasm-backoff/stream`: the fetch drivers with bodies that stream (the
// small module): an idle timeout and a first-chunk timeout on the answer,
// resuming a broken download, request bodies sent again from a bounded
// buffer or made afresh per attempt. The drivers are `wasm-backoff`'s
// (js/fetch/index.js), handed the stream job (js/stream/job.js) in the
// options they copy, under a key of their own: nothing of it is in the
// main entry but the key and a refusal of the stream options.
import * as base from '../fetch/index.js';
import { EXT } from '../fetch/options.js';
import { StreamJob, read } from '../stream/job.js';

export { Backoff } from '../backoff.js';

const ext = { Job: StreamJob, read };
/** The options with the extension (what is not an object is left for the drivers to refuse). @param {unknown} o */
const withExt = (o) => (o == null ? { [EXT]: ext } : typeof o === 'object' ? { ...o, [EXT]: ext } : o);

/** @type {typeof import('../../types/stream/index.js').fetchWithBackoff} */
export const fetchWithBackoff = (input, init, options) =>
  base.fetchWithBackoff(input, /** @type {RequestInit} */ (init), /** @type {any} */ (withExt(options)));

/** @type {typeof import('../../types/stream/index.js').withBackoff} */
export const withBackoff = (fetchFn, options) => /** @type {any} */ (base.withBackoff(fetchFn, /** @type {any} */ (withExt(options))));
