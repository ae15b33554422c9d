// A Cloudflare Worker (miniflare's real workerd) that runs the stream
// entry's shared scenarios against the scripted server (env.ORIGIN).
import * as main from '../../pkg/workerd.js';
import * as stream from '../../pkg/stream/workerd.js';
import { streamScenarios } from '../fetch/stream-checks.mjs';

export default {
  async fetch(_request, env) {
    return Response.json(await streamScenarios({ ...stream, main }, env.ORIGIN));
  },
};
