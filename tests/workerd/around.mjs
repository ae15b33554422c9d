// A Cloudflare Worker (miniflare's real workerd) that runs the smokes of a
// feature around the retry (?feature=auth, dedupe, cache or quota:
// tests/<feature>/<feature>-checks.mjs) with workerd's fetch and, for
// staleIfError, its Cache API, against the scripted server (env.A).
import * as main from '../../pkg/workerd.js';
import * as auth from '../../pkg/auth/workerd.js';
import * as dedupe from '../../pkg/dedupe/workerd.js';
import * as cache from '../../pkg/cache/workerd.js';
import * as quota from '../../pkg/quota/workerd.js';
import { control } from '../fetch/fetch-checks.mjs';
import { authSmokes } from '../auth/auth-checks.mjs';
import { dedupeSmokes } from '../dedupe/dedupe-checks.mjs';
import { cacheSmokes } from '../cache/cache-checks.mjs';
import { quotaSmokes } from '../quota/quota-checks.mjs';

const SMOKES = { auth: authSmokes, dedupe: dedupeSmokes, cache: cacheSmokes, quota: quotaSmokes };

export default {
  async fetch(request, env) {
    const feature = new URL(request.url).searchParams.get('feature');
    const smokes = SMOKES[feature];
    if (!smokes) return Response.json([`no feature ${feature}`]);
    return Response.json(await smokes({ ...main, ...auth, ...dedupe, ...cache, ...quota }, control(env.A)));
  },
};
